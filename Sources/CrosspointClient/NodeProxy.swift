import CCrosspointShim
import CPipeWire
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

    nonisolated(unsafe) private static let events: UnsafeMutablePointer<pw_node_events> = {
        let events = UnsafeMutablePointer<pw_node_events>.allocate(capacity: 1)
        events.initialize(to: pw_node_events())
        events.pointee.version = UInt32(PW_VERSION_NODE_EVENTS)
        events.pointee.info = { data, info in
            guard let info, let dict = info.pointee.props else { return }
            Unmanaged<NodeProxy>.fromOpaque(data!).takeUnretainedValue().properties = dict.pointee.strings
        }
        events.pointee.param = { data, _, id, _, _, param in
            guard id == SPA_PARAM_Props.rawValue, let param, let entries = PropsCodec.entries(of: param) else { return }
            Unmanaged<NodeProxy>.fromOpaque(data!).takeUnretainedValue().props.append(entries)
        }
        return events
    }()
}

/// One value to set on a node, by its parameter key.
public struct PropsChange: Sendable, Equatable {
    public let key: String
    public let value: ParameterValue
    public init(key: String, value: ParameterValue) {
        self.key = key
        self.value = value
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

    /// Sends `changes` (and the master mute, when given) to node `id` with `pw_node_set_param`,
    /// then waits for the daemon to have handled them.
    ///
    /// The native protocol frames a message with a 24-bit length, so one message carries at
    /// most 16 MiB. The largest Crosspoint node (256 x 256, 65536 cross-points at about 48
    /// bytes a pair) needs about 3 MiB, so every change fits one call and the node applies it
    /// at once; only if a pod would pass `maximumPodBytes` are the changes split over several
    /// set_param calls, applied one after the other.
    public func setProps(ofNode id: UInt32, _ changes: [PropsChange], masterMute: Bool? = nil) throws(ClientError) {
        let registry = try Registry(self)
        let node = try NodeProxy(self, registry: registry, id: id)
        var batches: [[PropsChange]] = [[]]
        var bytes = 0
        for change in changes {
            let size = PipeWireClient.podBytes(change)
            if bytes + size > PipeWireClient.maximumPodBytes, !batches[batches.count - 1].isEmpty {
                batches.append([])
                bytes = 0
            }
            batches[batches.count - 1].append(change)
            bytes += size
        }
        for (k, batch) in batches.enumerated() {
            let mute = k == batches.count - 1 ? masterMute : nil
            let buffer = PodBuffer(size: 4096 + batch.reduce(0) { $0 + PipeWireClient.podBytes($1) })
            var frames = cpshim_props_frames()
            cpshim_props_begin(&buffer.builder, &frames)
            for change in batch {
                switch change.value {
                case let .number(v): cpshim_props_add_float(&buffer.builder, change.key, Float(v))
                case let .bool(v): cpshim_props_add_bool(&buffer.builder, change.key, v)
                case let .ints(v):
                    let values = v.map { Int32($0) }
                    cpshim_props_add_int_array(&buffer.builder, change.key, values, UInt32(values.count))
                case let .names(names):
                    withCStrings(names) { cpshim_props_add_strings(&buffer.builder, change.key, $0, UInt32(names.count)) }
                }
            }
            let pod = cpshim_props_end_params(&buffer.builder, &frames, mute.map { $0 ? 1 : 0 } ?? -1)
            guard buffer.builder.state.offset <= buffer.builder.size, let pod else {
                throw .podTooLarge(bytes: Int(buffer.builder.state.offset))
            }
            _ = cpshim_node_set_param(node.proxy, SPA_PARAM_Props.rawValue, 0, pod)
        }
        try roundtrip("node \(id) to take its new Props")
    }

    /// Well under the protocol's 16 MiB message limit.
    static let maximumPodBytes = 8 << 20

    /// An upper bound of the bytes one key and value take in a Props pod.
    static func podBytes(_ change: PropsChange) -> Int {
        let value = switch change.value {
        case let .ints(v): 24 + 4 * v.count
        case let .names(v): 16 + v.reduce(0) { $0 + 16 + $1.utf8.count }
        default: 16
        }
        return 16 + change.key.utf8.count + value
    }
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
        _ = apply(props.filter { !["channel-map", "inputs", "outputs"].contains($0.key) })
    }
}
