import CCrosspointShim
import CPipeWire
import CrosspointPipeWire
import Glibc

/// Hears of changes in the graph as they happen, for a client that stays connected (the
/// control surface): nodes, ports and links coming and going (from the registry), and the
/// params of chosen nodes changing (a node announces new params in its info; a Crosspoint
/// node does so whenever its Props change, whoever changed them), and the state of their
/// virtual devices (the node property `crosspoint.devices`: made, or waiting for a name another
/// node has).
///
/// Like every client object it runs on the thread that drives `client`: the events arrive
/// while that thread iterates the client's loop, and only set flags here.
public final class GraphWatcher {
    private let client: PipeWireClient
    private let registry: Registry
    private let changes = Changes()
    private var followed: [UInt32: NodeParamsListener] = [:]

    private final class Changes {
        var graph = false
        var nodes = Set<UInt32>()
    }

    /// The types whose coming and going changes what the control surface shows.
    private static let types: Set<String> = ["PipeWire:Interface:Node", "PipeWire:Interface:Port", "PipeWire:Interface:Link"]

    public init(_ client: PipeWireClient) throws(ClientError) {
        self.client = client
        let changes = changes
        registry = Registry(
            core: client.core,
            onAdded: { global in if GraphWatcher.types.contains(global.type) { changes.graph = true } },
            onRemoved: { _ in changes.graph = true })
        try client.roundtrip("the list of objects")
        changes.graph = false
    }

    /// Whether nodes, ports or links came or went since the last call.
    public func takeGraphChange() -> Bool {
        defer { changes.graph = false }
        return changes.graph
    }

    /// The followed nodes whose params changed since the last call.
    public func takeChangedNodes() -> Set<UInt32> {
        defer { changes.nodes.removeAll() }
        return changes.nodes
    }

    /// Follows exactly these nodes' params (binding the new ones, letting the others go).
    public func follow(_ ids: Set<UInt32>) {
        for id in followed.keys where !ids.contains(id) { followed[id] = nil }
        for id in ids where followed[id] == nil {
            let changes = changes
            followed[id] = NodeParamsListener(registry: registry, id: id) { changes.nodes.insert(id) }
        }
    }
}

/// A node bound only to hear that its params, or its devices' state, changed.
private final class NodeParamsListener {
    let proxy: OpaquePointer?
    private let hook = Hook()
    private let changed: () -> Void
    /// `crosspoint.devices` as last heard. The node's properties change about 30 times a second
    /// while its levels are watched (`crosspoint.levels`): only this one is a change of the node.
    private var devices: String?

    init(registry: Registry, id: UInt32, changed: @escaping () -> Void) {
        self.changed = changed
        proxy = pw_registry_bind(registry.proxy, id, "PipeWire:Interface:Node", UInt32(PW_VERSION_NODE), 0).map(OpaquePointer.init)
        guard let proxy else { return }
        cpshim_node_add_listener(proxy, hook.pointer, NodeParamsListener.events, Unmanaged.passUnretained(self).toOpaque())
        hook.isLinked = true
    }

    deinit {
        hook.remove()
        if let proxy { pw_proxy_destroy(proxy) }
    }

    nonisolated(unsafe) private static let events = eventTable(pw_node_events(), version: { $0.version = $1 }, PW_VERSION_NODE_EVENTS) { events in
        events.info = { data, info in
            guard let info else { return }
            let listener = Unmanaged<NodeParamsListener>.fromOpaque(data!).takeUnretainedValue()
            // (The first info after the bind announces every param too: one needless refresh.)
            var changed = info.pointee.change_mask & UInt64(PW_NODE_CHANGE_MASK_PARAMS) != 0
            if info.pointee.change_mask & UInt64(PW_NODE_CHANGE_MASK_PROPS) != 0, let dict = info.pointee.props {
                // (Absent: an info without the node's properties, which says nothing of them.)
                var devices: String?
                for k in 0..<Int(dict.pointee.n_items) {
                    let item = dict.pointee.items[k]
                    guard let key = item.key, strcmp(key, CrosspointProperty.devices) == 0 else { continue }
                    devices = item.value.map { String(cString: $0) } ?? ""
                }
                if let devices, devices != listener.devices {
                    listener.devices = devices
                    changed = true
                }
            }
            if changed { listener.changed() }
        }
    }
}
