import CCrosspointShim
import CPipeWire
import CrosspointPipeWire

/// The node's one view of the graph, shared by all its parts (NodePart): its nodes, ports and
/// links as the registry announces them, the `default` metadata, and links asked for and not
/// yet announced. One per node, on the node's connection (one registry listener); runs on the
/// main loop. Its owner (`NodeHost`) hears of every change, once the mirror has taken it in,
/// through `onEvent`, and hands it to the parts.
final class GraphMirror {
    /// A change of the graph, told after the mirror's tables have it.
    enum Event {
        /// A node, port, link or the `default` metadata was announced (only those a part reads:
        /// a node with a name, a port with a name and a node, a link with its two ports).
        case added(Registry.Global)
        /// A global went away; `wasNode`: it was a node the mirror knew.
        case removed(UInt32, wasNode: Bool)
        /// The default sink or source changed (the `default` metadata).
        case defaultsChanged
    }

    struct Node {
        let name: String
        let mediaClass: String?
    }

    struct Port {
        let node: UInt32
        let name: String
        let isInput: Bool
        let channel: String?
        let isMonitor: Bool
    }

    private let core: OpaquePointer
    private var registry: Registry?
    private(set) var nodes: [UInt32: Node] = [:]
    private(set) var ports: [UInt32: Port] = [:]
    private(set) var links: [UInt32: (output: UInt32, input: UInt32)] = [:]
    /// The links this mirror made for a part that named itself, by link id: whose. (Known from
    /// the request: the registry does not carry a link's own properties, such as the
    /// `crosspoint.linked-by` it is made with, which `pw-dump` shows.)
    private(set) var linkedBy: [UInt32: String] = [:]
    /// Links asked for and not yet announced, with their proxies (let go once announced) and
    /// the part that asked.
    private var requested: [(output: UInt32, input: UInt32, proxy: OpaquePointer, owner: String?)] = []
    /// The `default` metadata (WirePlumber's), bound once announced.
    private(set) var metadata: OpaquePointer?
    private var metadataID: UInt32?
    private let metadataHook = Hook()
    /// The default sink's and source's names, as the session manager publishes them.
    private(set) var defaultSink: String?
    private(set) var defaultSource: String?
    /// The clients connected (their globals' ids): one coming or going arms `rereadTimer`.
    private var clients: Set<UInt32> = []
    /// Binds the `default` metadata anew (`rereadMetadata`), armed by client churn (main loop).
    private let loop: UnsafeMutablePointer<pw_loop>
    private var rereadTimer: UnsafeMutablePointer<spa_source>?
    private var rereadArmed = false
    /// How long after a client came or went the metadata is read again: past the bind that
    /// client made (a round trip to the session manager).
    static let rereadDelayMilliseconds: UInt64 = 250

    /// Told of every change (set once, by the owner).
    private var onEvent: ((Event) -> Void)?

    init(core: OpaquePointer, onEvent: @escaping (Event) -> Void) {
        self.core = core
        self.onEvent = onEvent
        loop = pw_context_get_main_loop(pw_core_get_context(core))
        rereadTimer = cpshim_loop_add_timer(loop, { data, _ in
            Unmanaged<GraphMirror>.fromOpaque(data!).takeUnretainedValue().rereadMetadata()
        }, Unmanaged.passUnretained(self).toOpaque())
        registry = Registry(core: core, onAdded: { [unowned self] in self.added($0) },
                            onRemoved: { [unowned self] in self.removed($0) })
    }

    func destroy() {
        if let rereadTimer { cpshim_loop_destroy_source(loop, rereadTimer) }
        rereadTimer = nil
        for request in requested { pw_proxy_destroy(request.proxy) }
        requested = []
        unbindMetadata()
        registry = nil
        onEvent = nil
    }

    // MARK: Questions

    /// The id of the port named `name` of node `node`.
    func port(of node: UInt32, named name: String) -> UInt32? {
        ports.first { $0.value.node == node && $0.value.name == name }?.key
    }

    /// The id of the node named `name` (the first announced, if several).
    func node(named name: String) -> UInt32? {
        nodes.filter { $0.value.name == name }.keys.min()
    }

    /// True if `owner` asked for a link between the two ports, or has one there.
    func isLinked(by owner: String, _ output: UInt32, _ input: UInt32) -> Bool {
        requested.contains { $0.output == output && $0.input == input && $0.owner == owner }
            || links.contains { $0.value.output == output && $0.value.input == input && linkedBy[$0.key] == owner }
    }

    func isLinked(_ output: UInt32, _ input: UInt32) -> Bool {
        links.values.contains { $0 == (output, input) } || requested.contains { $0.output == output && $0.input == input }
    }

    // MARK: Changes

    /// Links two ports (unless they are, or are being, linked). A link to or from a device (a
    /// sink or a source) is passive: it lets the device and the node sleep when nothing plays
    /// (what PipeWire 1.x makes of the node's `node.passive` by itself; 0.3 needs it said).
    func link(_ output: UInt32, _ input: UInt32, by owner: String? = nil) {
        guard !isLinked(output, input), let outputNode = ports[output]?.node, let inputNode = ports[input]?.node else { return }
        let passive = [outputNode, inputNode].contains { MediaClass.isDevice(nodes[$0]?.mediaClass) }
        guard let proxy = Link.create(on: core, outputNode: outputNode, outputPort: output, inputNode: inputNode, inputPort: input,
                                      linkedBy: owner, passive: passive)
        else { return }
        requested.append((output, input, proxy, owner))
    }

    /// Destroys a global (a link, a node this connection made).
    func destroy(global id: UInt32) {
        guard let registry else { return }
        _ = cpshim_registry_destroy(registry.proxy, id)
        links.removeValue(forKey: id)
        linkedBy.removeValue(forKey: id)
    }

    /// Sets a key of the `default` metadata (the configured default devices).
    @discardableResult
    func setDefault(_ key: String, json: String) -> Bool {
        guard let metadata else { return false }
        return cpshim_metadata_set_property(metadata, 0, key, "Spa:String:JSON", json) >= 0
    }

    // MARK: The registry

    private func added(_ global: Registry.Global) {
        let id = global.id, p = global.properties
        switch global.type {
        case "PipeWire:Interface:Node":
            guard let name = p[PW_KEY_NODE_NAME] else { return }
            nodes[id] = Node(name: name, mediaClass: p[PW_KEY_MEDIA_CLASS])
        case "PipeWire:Interface:Port":
            guard let name = p[PW_KEY_PORT_NAME], let owner = p[PW_KEY_NODE_ID].flatMap({ UInt32($0) }) else { return }
            ports[id] = Port(node: owner, name: name, isInput: p[PW_KEY_PORT_DIRECTION] == "in",
                             channel: p[PW_KEY_AUDIO_CHANNEL], isMonitor: p[PW_KEY_PORT_MONITOR] == "true")
        case "PipeWire:Interface:Link":
            guard let output = p[PW_KEY_LINK_OUTPUT_PORT].flatMap({ UInt32($0) }),
                  let input = p[PW_KEY_LINK_INPUT_PORT].flatMap({ UInt32($0) }) else { return }
            links[id] = (output, input)
            if let k = requested.firstIndex(where: { $0.output == output && $0.input == input }) {
                let request = requested.remove(at: k)
                linkedBy[id] = request.owner
                pw_proxy_destroy(request.proxy)
            }
        case "PipeWire:Interface:Metadata":
            guard p[PW_KEY_METADATA_NAME] == DefaultMetadataKey.metadataName, metadata == nil else { return }
            bindMetadata(id)
        case "PipeWire:Interface:Client":
            clients.insert(id)
            clientsChanged()
            return
        default:
            return
        }
        onEvent?(.added(global))
    }

    private func removed(_ id: UInt32) {
        if clients.remove(id) != nil {
            clientsChanged()
            return
        }
        links.removeValue(forKey: id)
        linkedBy.removeValue(forKey: id)
        ports.removeValue(forKey: id)
        if id == metadataID { unbindMetadata() }
        let wasNode = nodes.removeValue(forKey: id) != nil
        onEvent?(.removed(id, wasNode: wasNode))
    }

    private func bindMetadata(_ id: UInt32) {
        guard let registry else { return }
        metadata = pw_registry_bind(registry.proxy, id, "PipeWire:Interface:Metadata", UInt32(PW_VERSION_METADATA), 0)
            .map(OpaquePointer.init)
        metadataID = id
        if let metadata {
            cpshim_metadata_add_listener(metadata, metadataHook.pointer, Self.metadataEvents, Unmanaged.passUnretained(self).toOpaque())
            metadataHook.isLinked = true
        }
    }

    /// `keepDefaults`: the same metadata bound again, whose properties arrive anew.
    private func unbindMetadata(keepDefaults: Bool = false) {
        metadataHook.remove()
        if let metadata { pw_proxy_destroy(metadata) }
        metadata = nil
        metadataID = nil
        guard !keepDefaults else { return }
        defaultSink = nil
        defaultSource = nil
    }

    // MARK: Reading the metadata again

    // PipeWire's metadata (module-metadata's `metadata_property`, 0.3.65 to 1.5) forwards a
    // property change to a client already bound only while no other client's bind is waiting
    // for the session manager's reply: a change made then (a bind takes a round trip to
    // WirePlumber, longer on a loaded machine) never reaches the clients bound before. Measured
    // with PipeWire's own `pw-metadata -m` beside `pw-dump` run in a loop and `wpctl
    // set-default` every 300 ms: the monitor missed one change in thirty, and CI saw a node
    // never hear the published default for 10 s. A fresh bind is sent every property again, so
    // the mirror binds the metadata anew a moment after a client came or went (each bind is made
    // by a client, and a client that binds has connected first): at most one re-read per
    // `rereadDelayMilliseconds`, a default missed followed that much later.

    private func clientsChanged() {
        guard metadataID != nil, !rereadArmed, let rereadTimer else { return }
        rereadArmed = true
        _ = cpshim_loop_arm_timer(loop, rereadTimer, Self.rereadDelayMilliseconds)
    }

    private func rereadMetadata() {
        rereadArmed = false
        guard let id = metadataID else { return }
        unbindMetadata(keepDefaults: true)
        bindMetadata(id)
    }

    /// `default.audio.sink` and `default.audio.source`: `{ "name": "..." }` (what the session
    /// manager chose; `default.configured.*` is what a person asked for).
    private func metadataChanged(subject: UInt32, key: String?, value: String?) {
        guard subject == 0 else { return }
        switch key {
        case DefaultMetadataKey.sink: defaultSink = value.flatMap(DefaultMetadataKey.deviceName(inJSON:))
        case DefaultMetadataKey.source: defaultSource = value.flatMap(DefaultMetadataKey.deviceName(inJSON:))
        case nil: defaultSink = nil; defaultSource = nil  // all keys cleared
        default: return
        }
        onEvent?(.defaultsChanged)
    }

    nonisolated(unsafe) private static let metadataEvents = eventTable(pw_metadata_events(), version: { $0.version = $1 }, PW_VERSION_METADATA_EVENTS) { events in
        events.property = { data, subject, key, _, value in
            let mirror = Unmanaged<GraphMirror>.fromOpaque(data!).takeUnretainedValue()
            mirror.metadataChanged(subject: subject, key: key.map { String(cBytes: $0) }, value: value.map { String(cBytes: $0) })
            return 0
        }
    }
}
