import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// Keeps the node's output groups (`targets`, OutputTargets.swift) linked to their devices: a
/// sink by name, or the default sink as the session manager publishes it (`default.audio.sink`
/// in the `default` metadata). Linked when the node or the device appears, re-linked as soon as
/// the registry or the metadata says the default changed or the device came back; a group's
/// outputs are linked to its device's channels once, and the links it made that no longer go
/// where the group goes are removed, so that they never play to a device they no longer target.
///
/// A person's links win: a link the follower did not make (pw-link, qpwgraph, Helvum, JACK's
/// jack_connect: it carries no `crosspoint.linked-by` of this node) is never removed, and a link
/// it made that a person removes is not made again until the group's device changes (the
/// default moves, the device comes back) or the group changes. Links to nodes that are not
/// sinks (a recorder, an effect) are left alone.
///
/// Why the node does it, not the session manager: WirePlumber links streams and devices it
/// manages, and a `pw_filter` is neither; its 0.5 "smart filters" do something close, but 0.4
/// has none, and a group may target a device that is not the default. The links are PipeWire's
/// own (`link-factory`, as pw-link makes them, lingering).
///
/// A node part (NodePart); runs on the main loop and hears of the graph through the node's one
/// `GraphMirror`.
final class OutputFollower: NodePart {
    private let node: FilterNode
    private let graph: GraphMirror
    private var targets: [OutputTarget] = []
    private var waiting: Set<String> = []
    /// The last default sink that was not one of the node's own devices.
    private var lastDeviceDefault: String?
    private var lastReported = ""
    /// The links this follower made, by link id: their ports and the device they went to.
    private var made: [UInt32: (output: UInt32, input: UInt32, device: UInt32)] = [:]
    /// Links a person removed after the follower made them (output, input, device): not made
    /// again while the group goes to that device.
    private var declined: [(output: UInt32, input: UInt32, device: UInt32)] = []

    init(node: FilterNode, graph: GraphMirror) {
        self.node = node
        self.graph = graph
        targets = node.mixer.targets
    }

    /// The links it made stay (they linger, and are PipeWire's), as they did when it ran.
    func destroy(connectionGone: Bool) {}

    func mixerChanged(_ mixer: Mixer) {
        guard mixer.targets != targets else { return }
        targets = mixer.targets
        declined.removeAll()
        reconcile()
    }

    func graphChanged(_ event: GraphMirror.Event) { reconcile() }

    /// Its links, asked for or made (known from its requests in the graph view, `linkedBy`):
    /// the memory leaves them to it; a person's link from a following output is the memory's.
    func ownsLink(output: UInt32, input: UInt32) -> Bool { graph.isLinked(by: nodeName, output, input) }

    private var nodeName: String { node.configuration.nodeName }

    /// The sink a group goes to now, if it exists. The default sink is followed unless it is
    /// one of the node's own virtual sinks (a mono device made the default must not play into
    /// itself): then the last default that was not, else the oldest sink that is not.
    private func device(of target: OutputTarget) -> UInt32? {
        func isSink(_ id: UInt32) -> Bool { graph.nodes[id]?.mediaClass == MediaClass.sink }
        guard target.followsDefault else {
            return graph.node(named: target.device).flatMap { isSink($0) ? $0 : nil }
        }
        let own = node.mixer.devices.map(\.name).elementSet
        if let name = graph.defaultSink, !own.contains(name) { lastDeviceDefault = name }
        if let name = lastDeviceDefault, let id = graph.node(named: name), isSink(id) { return id }
        return graph.nodes.filter { isSink($0.key) && !own.contains($0.value.name) }.keys.min()
    }

    /// The name a group's device goes by in the node's report: `default (interface)` where the
    /// session manager published the default (now or before), `default (interface, the first
    /// sink: no default published)` where none has been (or only the node's own device).
    private func describe(_ target: OutputTarget) -> String {
        guard target.followsDefault else { return target.device }
        guard let name = device(of: target).flatMap({ graph.nodes[$0]?.name }) else { return "default" }
        guard lastDeviceDefault == nil else { return "default (\(name))" }
        if let own = graph.defaultSink { return "default (\(name), the first sink: the default, \(own), is this node's own)" }
        return "default (\(name), the first sink: no default published" + (graph.metadata == nil ? ", no default metadata)" : ")")
    }

    /// The links a person (or another tool) made from a group's outputs, which stay whatever
    /// the group's rule: `; also linked by hand: out_mon_FL -> interface:playback_RL`, or nothing.
    private func linkedByHand(_ target: OutputTarget) -> String {
        guard let ours = node.nodeID else { return "" }
        let mixer = node.mixer
        let own = mixer.devices.map(\.name).elementSet  // the device host's links, into the node's own sources
        var hand: [String] = []
        for j in target.outputIndices(in: mixer) {
            guard let port = graph.port(of: ours, named: PortName.output(mixer.outputChannels[j])) else { continue }
            for (id, link) in graph.links.sorted(by: { $0.key < $1.key }) where link.output == port && graph.linkedBy[id] != nodeName {
                guard let peer = graph.ports[link.input], let peerNode = graph.nodes[peer.node], !own.contains(peerNode.name) else { continue }
                hand.append("\(PortName.output(mixer.outputChannels[j])) -> \(peerNode.name):\(peer.name)")
            }
        }
        return hand.isEmpty ? "" : " (also linked by hand: " + hand.joinedBytes(separator: ", ") + ")"
    }

    /// The links each group needs, then: made where missing, and the group's links to other
    /// sinks removed.
    private func reconcile() {
        guard let ours = node.nodeID else { return }
        let mixer = node.mixer
        var wanted: [(output: UInt32, input: UInt32, device: UInt32)] = []
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
                if let peer { wanted.append((port, peer, device)) }
            }
        }
        // Links it made that are gone while both ports are still there: a person removed them.
        for (id, link) in made where graph.links[id] == nil {
            made[id] = nil
            if graph.ports[link.output] != nil, graph.ports[link.input] != nil { declined.append(link) }
        }
        // A declined link counts while its group still goes to that device.
        declined.removeAll { link in !wanted.contains { $0.output == link.output && $0.device == link.device } }
        for (id, link) in graph.links where grouped.contains(link.output) && graph.linkedBy[id] == nodeName {
            guard let peer = graph.ports[link.input], graph.nodes[peer.node]?.mediaClass == MediaClass.sink else { continue }
            if let pair = wanted.first(where: { $0.output == link.output && $0.input == link.input }) {
                made[id] = pair
            } else {
                made[id] = nil
                graph.destroy(global: id)
            }
        }
        for pair in wanted where !declined.contains(where: { $0 == pair }) {
            graph.link(pair.output, pair.input, by: nodeName)
        }
        if nowWaiting != waiting {
            for text in nowWaiting.subtracting(waiting) {
                Log.warn("\(nodeName): outputs of target '\(text)' wait for their device (none of that name is a sink now)")
            }
            waiting = nowWaiting
        }
        let report = targets.map { target -> String in
            "\(target.text): " + (device(of: target) == nil ? "waiting for " : "linked to ") + describe(target) + linkedByHand(target)
        }.joinedBytes(separator: "; ")
        if report != lastReported {
            lastReported = report
            node.publishProperty(CrosspointProperty.targets, report)
        }
    }
}
