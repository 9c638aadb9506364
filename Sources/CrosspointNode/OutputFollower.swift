import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// Keeps the node's output groups (`targets`, OutputTargets.swift) linked to their devices: a
/// sink by name, or the default sink as the session manager publishes it (`default.audio.sink`
/// in the `default` metadata). Linked when the node or the device appears, re-linked as soon as
/// the registry or the metadata says the default changed or the device came back; a group's
/// outputs are linked to its device's channels once, and their links to any other sink are
/// removed, so that they never play to a device they no longer target. Links to nodes that are
/// not sinks (a recorder, an effect) are left alone.
///
/// Why the node does it, not the session manager: WirePlumber links streams and devices it
/// manages, and a `pw_filter` is neither; its 0.5 "smart filters" do something close, but 0.4
/// has none, and a group may target a device that is not the default. The links are PipeWire's
/// own (`link-factory`, as pw-link makes them, lingering).
///
/// Runs on the main loop, from its own registry listener on the node's connection.
public final class OutputFollower {
    private let node: FilterNode
    private let graph: GraphMirror
    private var targets: [OutputTarget] = []
    private var waiting: Set<String> = []
    private var lastReported = ""

    public init(node: FilterNode, core: OpaquePointer) {
        self.node = node
        graph = GraphMirror(core: core)
        graph.onChange = { [unowned self] in self.reconcile() }
        let earlier = node.onChange
        node.onChange = { [unowned self] mixer in
            earlier?(mixer)
            if mixer.targets != self.targets {
                self.targets = mixer.targets
                self.reconcile()
            }
        }
        targets = node.mixer.targets
    }

    public func destroy() { graph.destroy() }

    private var nodeName: String { node.configuration.nodeName }

    /// The sink a group goes to now, if it exists.
    private func device(of target: OutputTarget) -> UInt32? {
        let name = target.followsDefault ? graph.defaultSink : target.device
        guard let name, let id = graph.node(named: name), graph.nodes[id]?.mediaClass == "Audio/Sink" else { return nil }
        return id
    }

    /// The links each group needs, then: made where missing, and the group's links to other
    /// sinks removed.
    private func reconcile() {
        guard let ours = node.nodeID else { return }
        let mixer = node.mixer
        var wanted: [(output: UInt32, input: UInt32)] = []
        var grouped: Set<UInt32> = []  // the ports of outputs in a group
        var nowWaiting: Set<String> = []
        for target in targets {
            let outputs = target.outputIndices(in: mixer).compactMap { j in
                graph.port(of: ours, named: PortName.output(mixer.outputChannels[j])).map { (j, $0) }
            }
            grouped.formUnion(outputs.map(\.1))
            guard let device = device(of: target) else {
                nowWaiting.insert(target.text)
                continue
            }
            let inputs = graph.ports.filter { $0.value.node == device && $0.value.isInput && !$0.value.isMonitor }
                .sorted { $0.key < $1.key }
            for (k, (j, port)) in outputs.enumerated() {
                let peer: UInt32?
                if let offset = target.offset {
                    let index = offset + k
                    peer = index < inputs.count ? inputs[index].key : nil
                } else {
                    let position = Mixer.channelPosition(mixer.outputChannels[j])
                    peer = inputs.first { $0.value.channel == position }?.key
                }
                if let peer { wanted.append((port, peer)) }
            }
        }
        for (id, link) in graph.links where grouped.contains(link.output) {
            guard let peer = graph.ports[link.input], graph.nodes[peer.node]?.mediaClass == "Audio/Sink" else { continue }
            if !wanted.contains(where: { $0 == link }) { graph.destroy(global: id) }
        }
        for pair in wanted { graph.link(pair.output, pair.input) }
        if nowWaiting != waiting {
            for text in nowWaiting.subtracting(waiting) {
                Log.warn("\(nodeName): outputs of target '\(text)' wait for their device (none of that name is a sink now)")
            }
            waiting = nowWaiting
        }
        let report = targets.map { target -> String in
            let name = target.followsDefault ? graph.defaultSink.map { "default (\($0))" } ?? "default" : target.device
            return "\(target.text): " + (device(of: target) == nil ? "waiting for \(name)" : "linked to \(name)")
        }.joined(separator: "; ")
        if report != lastReported {
            lastReported = report
            node.publishProperty(CrosspointProperty.targets, report)
        }
    }
}
