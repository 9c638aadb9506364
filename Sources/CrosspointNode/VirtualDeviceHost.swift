import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// Makes a node's virtual devices (`devices`, VirtualDevices.swift) real: one PipeWire device
/// each, linked to the node's ports, kept as the mixer changes.
///
/// Why null sinks: a session manager links applications only to nodes it can configure, and
/// it configures only adapters (audioconvert around a follower); a `pw_filter`, Crosspoint's
/// node, is not one (PIPEWIRE-NOTES: "Devices that applications choose"). So each device is
/// PipeWire's own stock virtual device, an `adapter` around `support.null-audio-sink` (what
/// `pactl load-module module-null-sink` makes), created by the node's connection and gone
/// with it:
/// - a sink (`Audio/Sink`): applications play into it; its monitor ports (`monitor_FL`...)
///   are linked into the mixer inputs the device names. `monitor.channel-volumes` puts the
///   sink's own volume and mute (wpctl, pactl, pavucontrol) on those ports;
/// - a source (`Audio/Source/Virtual`): the mixer outputs are linked into its input ports
///   (`input_FL`...); applications record from it.
/// In one graph cycle every follower runs in dependency order: the hop costs no quantum
/// (measured: 0 samples at quantum 1024, 256 and 64, on 0.3.65 and 1.4.2).
///
/// `priority.session` is set low, under any real device's, so that WirePlumber never makes a
/// virtual device the default by itself; `default` in a device's text asks for it, once, when
/// the device is made (the `default` metadata's `default.configured.audio.sink`/`.source`, as
/// `wpctl set-default` does). A name another node already has is refused (logged, and said in
/// the node property `crosspoint.devices`), and made once that node goes.
///
/// Runs on the main loop, from its own registry listener on the node's connection.
public final class VirtualDeviceHost {
    /// What a device is now.
    enum Status: Equatable {
        /// Asked of the daemon, not announced yet.
        case creating
        /// Announced: its node id.
        case ready(UInt32)
        /// Its name belongs to another node (id): made once that node goes.
        case nameTaken(UInt32)
        /// The daemon refused it (the error).
        case failed(String)
    }

    private struct Managed {
        var device: VirtualDevice
        var proxy: OpaquePointer?
        var status: Status
        /// `default` was asked for and is not done yet.
        var defaultPending: Bool
    }

    /// A session manager makes the highest `priority.session` the default; ALSA devices have
    /// 1000 and more, a virtual device from pactl none. Under all of them, not 0 (WirePlumber
    /// 0.4 treats a missing priority as 0 and the newest of equals wins).
    static let sessionPriority = "1"
    /// The property naming the Crosspoint node a device belongs to (`crosspoint apps`, the
    /// surface and a restarted node find their devices by it).
    public static let ownerProperty = "crosspoint.device.of"

    private let node: FilterNode
    private let core: OpaquePointer
    private var registry: Registry?
    private var managed: [String: Managed] = [:]
    private var nodes: [UInt32: (name: String, owner: String?)] = [:]
    private var ports: [UInt32: (node: UInt32, name: String)] = [:]
    private var links: [UInt32: (output: UInt32, input: UInt32)] = [:]
    /// Links asked for and not yet announced, with their proxies.
    private var requested: [(output: UInt32, input: UInt32, proxy: OpaquePointer)] = []
    private var metadata: OpaquePointer?
    private var metadataID: UInt32?
    private var lastReported = ""

    public init(node: FilterNode, core: OpaquePointer) {
        self.node = node
        self.core = core
        registry = Registry(core: core, onAdded: { [unowned self] in self.globalAdded($0) },
                            onRemoved: { [unowned self] in self.globalRemoved(id: $0) })
        let earlier = node.onChange
        node.onChange = { [unowned self] mixer in
            earlier?(mixer)
            self.update(mixer.devices)
        }
        update(node.mixer.devices)
    }

    /// Removes the devices (their applications go where the session manager sends them).
    public func destroy() {
        for name in Array(managed.keys) { remove(name) }
        for request in requested { pw_proxy_destroy(request.proxy) }
        requested = []
        if let metadata { pw_proxy_destroy(metadata) }
        metadata = nil
        registry = nil
    }

    private var nodeName: String { node.configuration.nodeName }

    // MARK: Devices

    /// Makes, remakes and removes devices until they are `devices`; then links.
    func update(_ devices: [VirtualDevice]) {
        let wanted = Dictionary(devices.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (name, current) in managed {
            guard let next = wanted[name] else { remove(name); continue }
            // Channels alone change links; anything the device itself is made of remakes it.
            if next.kind != current.device.kind || next.positions != current.device.positions
                || next.description != current.device.description {
                remove(name)
            } else {
                managed[name]?.device = next
            }
        }
        for device in devices where managed[device.name] == nil { create(device) }
        reconcile()
    }

    private func create(_ device: VirtualDevice) {
        var entry = Managed(device: device, proxy: nil, status: .creating, defaultPending: device.isDefault)
        if let (id, _) = nodes.first(where: { $0.value.name == device.name && $0.value.owner != nodeName }) {
            entry.status = .nameTaken(id)
            Log.warn("\(nodeName): device '\(device.name)' is not made: node \(id) already has that name; it is made when that node goes")
            managed[device.name] = entry
            return
        }
        guard let properties = cpshim_properties_new() else { return }
        defer { pw_properties_free(properties) }
        let values: [(String, String)] = [
            (PW_KEY_FACTORY_NAME, "support.null-audio-sink"),
            (PW_KEY_NODE_NAME, device.name),
            (PW_KEY_NODE_DESCRIPTION, device.description),
            (PW_KEY_MEDIA_CLASS, device.kind == .sink ? "Audio/Sink" : "Audio/Source/Virtual"),
            (SPA_KEY_AUDIO_POSITION, device.positions.joined(separator: ",")),
            ("monitor.channel-volumes", "true"),
            (PW_KEY_PRIORITY_SESSION, Self.sessionPriority),
            (PW_KEY_NODE_VIRTUAL, "true"),
            (PW_KEY_OBJECT_LINGER, "false"),
            (Self.ownerProperty, nodeName),
        ]
        for (key, value) in values { pw_properties_set(properties, key, value) }
        entry.proxy = pw_core_create_object(
            core, "adapter", "PipeWire:Interface:Node", UInt32(PW_VERSION_NODE), &properties.pointee.dict, 0
        ).map(OpaquePointer.init)
        if entry.proxy == nil {
            entry.status = .failed("the request could not be sent")
            Log.warn("\(nodeName): device '\(device.name)' could not be asked for")
        } else {
            Log.info("\(nodeName): makes \(device.kind.rawValue) '\(device.name)' (\(device.positions.joined(separator: ",")) -> \(device.channels.joined(separator: ",")))")
        }
        managed[device.name] = entry
    }

    private func remove(_ name: String) {
        guard let entry = managed.removeValue(forKey: name) else { return }
        // The node is the client's own object (object.linger = false): destroying it removes
        // its ports and links; the session manager moves its applications elsewhere.
        if case let .ready(id) = entry.status, let registry { _ = cpshim_registry_destroy(registry.proxy, id) }
        if let proxy = entry.proxy { pw_proxy_destroy(proxy) }
        Log.info("\(nodeName): removes device '\(name)'")
    }

    // MARK: The graph

    private func globalAdded(_ global: Registry.Global) {
        let id = global.id, p = global.properties
        switch global.type {
        case "PipeWire:Interface:Node":
            guard let name = p[PW_KEY_NODE_NAME] else { return }
            // A global carries only some of a node's properties (not ours): a device is known
            // by its proxy's bound id, or, before the proxy hears it, by its name while it is
            // being made (a name taken already was refused at `create`).
            var owner: String?
            if let entry = managed[name], entry.status == .creating, let proxy = entry.proxy {
                let bound = pw_proxy_get_bound_id(proxy)
                if bound == id || bound == SPA_ID_INVALID {
                    managed[name]?.status = .ready(id)
                    owner = nodeName
                }
            }
            nodes[id] = (name, owner)
        case "PipeWire:Interface:Port":
            guard let name = p[PW_KEY_PORT_NAME], let owner = p[PW_KEY_NODE_ID].flatMap({ UInt32($0) }) else { return }
            ports[id] = (owner, name)
        case "PipeWire:Interface:Link":
            guard let output = p[PW_KEY_LINK_OUTPUT_PORT].flatMap({ UInt32($0) }),
                  let input = p[PW_KEY_LINK_INPUT_PORT].flatMap({ UInt32($0) }) else { return }
            links[id] = (output, input)
            if let k = requested.firstIndex(where: { $0.output == output && $0.input == input }) {
                pw_proxy_destroy(requested.remove(at: k).proxy)
            }
        case "PipeWire:Interface:Metadata":
            if p[PW_KEY_METADATA_NAME] == "default", metadata == nil, let registry {
                metadata = pw_registry_bind(registry.proxy, id, "PipeWire:Interface:Metadata", UInt32(PW_VERSION_METADATA), 0)
                    .map(OpaquePointer.init)
                metadataID = id
            }
        default:
            return
        }
        reconcile()
    }

    private func globalRemoved(id: UInt32) {
        links.removeValue(forKey: id)
        ports.removeValue(forKey: id)
        if id == metadataID, let metadata {
            pw_proxy_destroy(metadata)
            self.metadata = nil
            metadataID = nil
        }
        guard nodes.removeValue(forKey: id) != nil else { return }
        for (name, entry) in managed {
            switch entry.status {
            case .ready(id):
                // Destroyed by someone else (pw-cli destroy): made again.
                Log.warn("\(nodeName): device '\(name)' was removed from outside; making it again")
                if let proxy = entry.proxy { pw_proxy_destroy(proxy) }
                managed.removeValue(forKey: name)
                create(entry.device)
            case .nameTaken(id):
                managed.removeValue(forKey: name)
                create(entry.device)
            default:
                break
            }
        }
        reconcile()
    }

    private func portID(node owner: UInt32, name: String) -> UInt32? {
        ports.first { $0.value.node == owner && $0.value.name == name }?.key
    }

    /// Links every ready device's ports to the node's, removes the links between them that no
    /// longer match, sets a default asked for, and publishes the devices' state.
    private func reconcile() {
        guard let ours = node.nodeID else { return }
        var wanted: [(output: UInt32, input: UInt32)] = []
        var deviceIDs: Set<UInt32> = []
        var madeDefault: [String] = []
        for (name, entry) in managed {
            guard case let .ready(id) = entry.status else { continue }
            deviceIDs.insert(id)
            let device = entry.device
            for (position, channel) in zip(device.positions, device.channels) {
                let pair: (UInt32?, UInt32?) = device.kind == .sink
                    ? (portID(node: id, name: "monitor_\(position)"), portID(node: ours, name: PortName.input(channel)))
                    : (portID(node: ours, name: PortName.output(channel)), portID(node: id, name: "input_\(position)"))
                guard let output = pair.0, let input = pair.1 else { continue }
                wanted.append((output, input))
            }
            if entry.defaultPending, let metadata {
                let key = device.kind == .sink ? "default.configured.audio.sink" : "default.configured.audio.source"
                let value = "{ \"name\": \"\(name)\" }"
                _ = cpshim_metadata_set_property(metadata, 0, key, "Spa:String:JSON", value)
                managed[name]?.defaultPending = false
                madeDefault.append(name)
                Log.info("\(nodeName): device '\(name)' is made the default (\(key))")
            }
        }
        // Links between a device and the node that are not wanted: a channel changed.
        for (id, link) in links {
            guard let from = ports[link.output], let to = ports[link.input] else { continue }
            let between = (deviceIDs.contains(from.node) && to.node == ours) || (from.node == ours && deviceIDs.contains(to.node))
            if between, !wanted.contains(where: { $0 == link }), let registry {
                _ = cpshim_registry_destroy(registry.proxy, id)
                links.removeValue(forKey: id)
            }
        }
        for pair in wanted where !links.values.contains(where: { $0 == pair })
            && !requested.contains(where: { $0.output == pair.output && $0.input == pair.input }) {
            guard let outputNode = ports[pair.output]?.node, let inputNode = ports[pair.input]?.node,
                  let proxy = Link.create(on: core, outputNode: outputNode, outputPort: pair.output,
                                          inputNode: inputNode, inputPort: pair.input) else { continue }
            requested.append((pair.output, pair.input, proxy))
        }
        publishStatus()
        // `default` is asked once: done, it leaves the state, so that a restart (the state file)
        // does not take the default back from a device the person chose since. The session
        // manager remembers the choice itself.
        if !madeDefault.isEmpty {
            do {
                try node.update { m throws(CrosspointError) in
                    try m.setDevices(m.devices.map { d in
                        var d = d
                        if madeDefault.contains(d.name) { d.isDefault = false }
                        return d.text
                    })
                }
            } catch {
                Log.warn("\(nodeName): \(error)")
            }
        }
    }

    /// `crosspoint.devices`: one `NAME: state` per device, for `crosspoint show` and the surface.
    private func publishStatus() {
        let text = managed.sorted(by: { $0.key < $1.key }).map { name, entry -> String in
            switch entry.status {
            case .creating: "\(name): being made"
            case let .ready(id): "\(name): ready (node \(id))"
            case let .nameTaken(id): "\(name): waiting (node \(id) has this name)"
            case let .failed(why): "\(name): failed (\(why))"
            }
        }.joined(separator: "; ")
        guard text != lastReported else { return }
        lastReported = text
        node.publishProperty(CrosspointProperty.devices, text)
    }
}
