import CCrosspointShim
import CPipeWire
import CrosspointPipeWire
import CrosspointCore
import Glibc

/// A node bound through the registry: its info (all properties) and the Props params it sends.
final class NodeProxy {
    let globalID: UInt32
    let proxy: OpaquePointer
    private let hook = Hook()
    /// The node's properties, once its info has arrived.
    private(set) var properties: [String: String]?
    /// The entries of every Props param received since the last `enumProps`.
    private(set) var props: [[PropsCodec.Entry]] = []

    init(_ client: PipeWireClient, registry: Registry, id: UInt32) throws(ClientError) {
        globalID = id
        guard let bound = pw_registry_bind(registry.proxy, id, "PipeWire:Interface:Node", UInt32(PW_VERSION_NODE), 0) else {
            throw .refused(object: "node \(id)", message: "cannot bind it")
        }
        proxy = OpaquePointer(bound)
        cpshim_node_add_listener(proxy, hook.pointer, NodeProxy.events, Unmanaged.passUnretained(self).toOpaque())
        hook.isLinked = true
    }

    deinit {
        hook.remove()
        pw_proxy_destroy(proxy)
    }

    /// Asks for the node's Props; they arrive by the next roundtrip.
    func enumProps() {
        props = []
        _ = cpshim_node_enum_params(proxy, 0, SPA_PARAM_Props.rawValue, 0, 0, nil)
    }

    nonisolated(unsafe) private static let events = eventTable(pw_node_events(), version: { $0.version = $1 }, PW_VERSION_NODE_EVENTS) { events in
        events.info = { data, info in
            // The daemon sends the properties only when they changed (the first info after a
            // bind has them all); an info that announces new params carries an empty
            // dictionary, which must not replace them. Taking it did: a node republishing its
            // Props (after anyone's set-param) lost its name, and `crosspoint show xp`
            // answered "unknown node 'xp'".
            guard let info, info.pointee.change_mask & UInt64(PW_NODE_CHANGE_MASK_PROPS) != 0,
                  let dict = info.pointee.props else { return }
            // (`spa_dict.strings`, spelled out: with Metadata.swift's callback table beside it, a
            // debug build from scratch of this module did not find the extension; Swift 6.3.)
            var properties: [String: String] = [:]
            for k in 0..<Int(dict.pointee.n_items) {
                let item = dict.pointee.items[k]
                guard let key = item.key else { continue }
                properties[String(cString: key)] = item.value.map { String(cString: $0) } ?? ""
            }
            Unmanaged<NodeProxy>.fromOpaque(data!).takeUnretainedValue().properties = properties
        }
        events.param = { data, _, id, _, _, param in
            guard id == SPA_PARAM_Props.rawValue, let param, let entries = PropsCodec.entries(of: param) else { return }
            Unmanaged<NodeProxy>.fromOpaque(data!).takeUnretainedValue().props.append(entries)
        }
    }
}

extension PipeWireClient {
    /// The Props of node `id`, as its entries (the first Props object it lists). A node
    /// that is still starting, or republishing its params, may answer with none or with an
    /// error for a moment: asked again every 50 ms for up to `timeout`.
    public func props(ofNode id: UInt32) throws(ClientError) -> [PropsCodec.Entry] {
        let registry = try Registry(self)
        let node = try NodeProxy(self, registry: registry, id: id)
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var problem = "it lists none"
        while true {
            node.enumProps()
            do throws(ClientError) {
                try roundtrip("the Props of node \(id)")
            } catch .refused(_, let message) {
                problem = message
            } catch {
                throw error
            }
            if let props = node.props.first, !props.isEmpty { return props }
            guard ContinuousClock.now < deadline else { throw .refused(object: "to show the Props of node \(id)", message: problem) }
            usleep(50_000)
        }
    }

    /// The properties of node `id` as its info has them now (properties a node set after it was
    /// announced are there, not in the registry's announcement).
    public func properties(ofNode id: UInt32) throws(ClientError) -> [String: String] {
        let registry = try Registry(self)
        let node = try NodeProxy(self, registry: registry, id: id)
        try roundtrip("the properties of node \(id)")
        return node.properties ?? [:]
    }

    /// Sends `changes` (and the master mute, when given) to node `id` with `pw_node_set_param`,
    /// then waits for the daemon to have handled them.
    ///
    /// The native protocol frames a message with a 24-bit length, so one message carries at
    /// most 16 MiB. The largest Crosspoint node (256 x 256, 65536 cross-points at about 48
    /// bytes a pair) needs about 3 MiB, so every change fits one call and the node applies it
    /// at once; only if a pod would pass `maximumPodBytes` are the changes split over several
    /// set_param calls, applied one after the other.
    public func setProps(ofNode id: UInt32, _ changes: [PropsEntry], masterMute: Bool? = nil) throws(ClientError) {
        let registry = try Registry(self)
        let node = try NodeProxy(self, registry: registry, id: id)
        var batches: [[PropsEntry]] = [[]]
        var bytes = 0
        for change in changes {
            let size = PropsCodec.podBytes(change)
            if bytes + size > PipeWireClient.maximumPodBytes, !batches[batches.count - 1].isEmpty {
                batches.append([])
                bytes = 0
            }
            batches[batches.count - 1].append(change)
            bytes += size
        }
        for (k, batch) in batches.enumerated() {
            let mute = k == batches.count - 1 ? masterMute : nil
            let buffer = PodBuffer(size: 4096 + batch.reduce(0) { $0 + PropsCodec.podBytes($1) })
            guard let pod = PropsCodec.build(batch, tail: .change(mute: mute), in: buffer) else {
                throw .podTooLarge(bytes: Int(buffer.builder.state.offset))
            }
            _ = cpshim_node_set_param(node.proxy, SPA_PARAM_Props.rawValue, 0, pod)
        }
        try roundtrip("node \(id) to take its new Props")
    }

    /// Well under the protocol's 16 MiB message limit.
    static let maximumPodBytes = 8 << 20
}

extension Mixer {
    /// The shape a node's Props state (its `inputs` and `outputs` keys), if they state it.
    public static func shape(in props: [PropsCodec.Entry]) -> (inputs: Int, outputs: Int)? {
        var inputs: Int?, outputs: Int?
        for entry in props {
            guard case let .number(n) = entry.value, n == n.rounded(), Mixer.channelLimit.contains(Int(n)) else { continue }
            if entry.key == "inputs" { inputs = Int(n) }
            if entry.key == "outputs" { outputs = Int(n) }
        }
        guard let inputs, let outputs else { return nil }
        return (inputs, outputs)
    }

    /// The mixer a node's Props describe, for a node of this shape and these channel names
    /// (from its ports). Cross-points the Props leave out are silent: a node over 4096
    /// cross-points lists only the non-zero ones.
    public init(
        inputs: Int, outputs: Int, inputChannels: [String]?, outputChannels: [String]?, props: [PropsCodec.Entry]
    ) throws(CrosspointError) {
        try self.init(inputs: inputs, outputs: outputs, inputChannels: inputChannels, outputChannels: outputChannels)
        try setMatrix(rows: Array(repeating: Array(repeating: 0, count: outputs), count: inputs))
        // The morph fader's position is read, not moved to: moving it would set the gains the
        // Props already give (or, changed by hand since, other ones).
        _ = apply(props.filter { !["channel-map", "inputs", "outputs", "scene.morph"].contains($0.key) })
        if let fader = props.last(where: { $0.key == "scene.morph" }), case let .number(position) = fader.value {
            takeMorphPosition(position)
        }
    }
}
