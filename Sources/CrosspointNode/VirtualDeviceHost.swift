import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// Makes a node's virtual devices (`devices`, VirtualDevices.swift) real: one PipeWire device
/// each, linked to the node's ports, kept as the mixer changes. A node part (NodePart).
///
/// Why devices at all: a session manager links applications only to nodes it can configure,
/// and it configures only adapters (audioconvert around a follower); a `pw_filter`,
/// Crosspoint's node, is not one (PIPEWIRE-NOTES: "Devices that applications choose"). So each
/// device is a node of its own, created by the node's connection and gone with it. What a
/// device is made of, and which of its ports link to which of the node's, is its kind's
/// (`DeviceKind`, DeviceKind.swift: PipeWire's stock null sink, `NullSinkDevice`, for now);
/// this host keeps the rest for every kind: each device's status, a name another node has,
/// `default`, the memory given back, the links reconciled. In one graph cycle every follower
/// runs in dependency order: the hop costs no quantum (measured: 0 samples at quantum 1024,
/// 256 and 64, on 0.3.65 and 1.4.2).
///
/// `default` in a device's text asks for it, once, when the device is made (the `default`
/// metadata's `default.configured.audio.sink`/`.source`, as `wpctl set-default` does). A name
/// another node already has is refused (logged, and said in the node property
/// `crosspoint.devices`), and made once that node goes.
///
/// Memory: a device costs the daemon about 1.1 MiB while it exists (the adapter's buffers, its
/// two links' buffers, the node's client-node mixes; a stock null sink linked the same way costs
/// the same), freed when it goes. glibc keeps what is freed: the adapter's large blocks raise
/// its dynamic mmap threshold, so later ones come from the heap, whose free middle it never
/// gives back by itself (measured: 200 devices made and removed took the daemon from 16 to 69
/// MiB, all of it free memory, which one `malloc_trim` returned). So once the devices this host
/// removed are gone from the graph, and no other went for `trimDelayMilliseconds`, the main loop
/// calls `malloc_trim(0)` (RELIABILITY.md, "Memory under storms").
///
/// Runs on the main loop; hears of the graph through the node's one `GraphMirror`.
final class VirtualDeviceHost: NodePart {
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
        /// Made again every `retrySeconds` until it is (a sender whose network is down, a
        /// module that ended by itself): why.
        case retrying(String)
        /// Made, its node not there yet: what it waits for (a receiver, its stream).
        case waiting(String)

        var isRetrying: Bool { if case .retrying = self { true } else { false } }
    }

    private struct Managed {
        var device: VirtualDevice
        var proxy: OpaquePointer?
        /// The module that makes it (a network device), and the one loaded beside it.
        var module: LoadedModule?
        var companion: LoadedModule?
        var status: Status
        /// `default` was asked for and is not done yet.
        var defaultPending: Bool

        /// Unloads its modules (the objects stay in `self` until it is replaced).
        func unloadModules() {
            module?.unload()
            companion?.unload()
        }
    }

    private let node: FilterNode
    private let core: OpaquePointer
    private let graph: GraphMirror
    /// The kinds of device this host makes, asked in order (`DeviceKind.makes`).
    private let kinds: [any DeviceKind]
    private var managed: [String: Managed] = [:]
    /// The devices whose caution (`DeviceKind.caution`) was logged.
    private var cautioned: Set<String> = []
    /// The last problem logged for each device that is retried: logged once, not every retry.
    private var lastProblem: [String: String] = [:]
    /// Node ids of the devices this host made, by the registry's announcements.
    private var ours: Set<UInt32> = []
    private var lastReported = ""
    /// How long after the last of its devices went the host gives the daemon's free memory back.
    static let trimDelayMilliseconds: UInt64 = 300
    private let loop: UnsafeMutablePointer<pw_loop>
    /// Armed when a device of this host went: fires `malloc_trim` (main loop).
    private var trimTimer: UnsafeMutablePointer<spa_source>?

    /// Fires the retries of devices that are `.retrying` (main loop).
    private var retryTimer: UnsafeMutablePointer<spa_source>?
    static let retrySeconds: UInt64 = 2

    init(node: FilterNode, core: OpaquePointer, graph: GraphMirror, kinds: [any DeviceKind] = [NullSinkDevice(), NetworkDevice()]) {
        self.node = node
        self.core = core
        self.graph = graph
        self.kinds = kinds
        loop = pw_context_get_main_loop(pw_core_get_context(core))
        trimTimer = cpshim_loop_add_timer(loop, { data, _ in
            // The main loop: glibc's free pages, in every arena, back to the system. The data
            // threads take no malloc lock (Crosspoint's allocates nothing), so none waits on it.
            _ = cpshim_malloc_trim()
        }, nil)
        retryTimer = cpshim_loop_add_timer(loop, { data, _ in
            Unmanaged<VirtualDeviceHost>.fromOpaque(data!).takeUnretainedValue().retry()
        }, Unmanaged.passUnretained(self).toOpaque())
        update(node.mixer.devices)
    }

    /// Removes the devices (their applications go where the session manager sends them), or,
    /// when the connection itself is going (they go with it), only lets go of their proxies.
    func destroy(connectionGone: Bool) {
        if let trimTimer { cpshim_loop_destroy_source(loop, trimTimer) }
        trimTimer = nil
        if let retryTimer { cpshim_loop_destroy_source(loop, retryTimer) }
        retryTimer = nil
        if connectionGone {
            // A module lives in the context, not the connection: unloaded either way.
            for entry in managed.values {
                if let proxy = entry.proxy { pw_proxy_destroy(proxy) }
                entry.unloadModules()
            }
            managed = [:]
        } else {
            for name in Array(managed.keys) { remove(name) }
        }
    }

    func mixerChanged(_ mixer: Mixer) { update(mixer.devices) }

    func graphChanged(_ event: GraphMirror.Event) {
        switch event {
        case let .added(global) where global.type == "PipeWire:Interface:Node": nodeAdded(global.id, global.properties)
        case let .removed(id, wasNode: true): nodeRemoved(id)
        default: break
        }
        reconcile()
    }

    /// The kind that makes `device` (the first in `kinds` that does).
    private func kind(of device: VirtualDevice) -> (any DeviceKind)? {
        kinds.first { $0.makes(device) }
    }

    private var nodeName: String { node.configuration.nodeName }

    // MARK: Devices

    /// Makes, remakes and removes devices until they are `devices`; then links.
    func update(_ devices: [VirtualDevice]) {
        let wanted = Dictionary(devices.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (name, current) in managed {
            guard let next = wanted[name] else { remove(name); continue }
            // Channels alone change links; anything the device itself is made of remakes it.
            // (An unchanged device, the usual case on a set-param, builds no requests.)
            if next != current.device,
               kind(of: next)?.request(for: next, node: nodeName) != kind(of: current.device)?.request(for: current.device, node: nodeName) {
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
        if let (id, _) = graph.nodes.first(where: { $0.value.name == device.name && !ours.contains($0.key) }) {
            entry.status = .nameTaken(id)
            Log.warn("\(nodeName): device '\(device.name)' is not made: node \(id) already has that name; it is made when that node goes")
            managed[device.name] = entry
            return
        }
        guard let kind = kind(of: device) else {
            entry.status = .failed("no kind of device makes it")
            managed[device.name] = entry
            return
        }
        if let refusal = kind.refusal(for: device) {
            entry.status = .failed(refusal)
            Log.warn("\(nodeName): device '\(device.name)' is not made: \(refusal)")
            managed[device.name] = entry
            return
        }
        if let problem = kind.problem(for: device) {
            entry.status = .retrying(problem)
            warnOnce(device.name, "\(problem); asked again every \(Self.retrySeconds) s")
            managed[device.name] = entry
            armRetry()
            return
        }
        switch kind.request(for: device, node: nodeName) {
        case let .object(factory, type, version, values):
            guard let properties = cpshim_properties_new() else { return }
            defer { pw_properties_free(properties) }
            for property in values { pw_properties_set(properties, property.key, property.value) }
            entry.proxy = pw_core_create_object(core, factory, type, version, &properties.pointee.dict, 0).map(OpaquePointer.init)
            if entry.proxy == nil {
                entry.status = .failed("the request could not be sent")
                Log.warn("\(nodeName): device '\(device.name)' could not be asked for")
                managed[device.name] = entry
                return
            }
        case let .module(name, arguments, companion):
            let deviceName = device.name
            do {
                entry.module = try LoadedModule(context: pw_core_get_context(core), name: name, arguments: arguments) { [unowned self] in
                    self.moduleEnded(deviceName)
                }
                entry.status = .waiting(device.kind == .receive ? "its stream" : "its node")
                if let companion {
                    do {
                        entry.companion = try LoadedModule(context: pw_core_get_context(core), name: companion.name, arguments: companion.arguments) {}
                    } catch {
                        warnOnce(device.name, "\(companion.name) did not load (\(error)): made without it")
                    }
                }
            } catch {
                // 0.3.65's sender opens its socket as it loads: no route (the network down, an
                // address not reachable) is a module that does not load. Tried again.
                entry.status = .retrying("\(error)")
                warnOnce(device.name, "\(error); tried again every \(Self.retrySeconds) s")
                managed[device.name] = entry
                armRetry()
                return
            }
        }
        Log.info("\(nodeName): makes \(device.kind.rawValue) '\(device.name)' (\(device.positions.joinedBytes(separator: ",")) -> \(device.channels.joinedBytes(separator: ",")))")
        if let caution = kind.caution(for: device), cautioned.insert(device.name).inserted {
            Log.warn("\(nodeName): device '\(device.name)': \(caution)")
        }
        managed[device.name] = entry
    }

    /// A device's module ended by itself (its stream failed, its connection went): made again.
    private func moduleEnded(_ name: String) {
        guard managed[name]?.module != nil else { return }
        managed[name]?.module = nil
        managed[name]?.companion?.unload()
        managed[name]?.companion = nil
        managed[name]?.status = .retrying("its module ended by itself")
        warnOnce(name, "its module ended by itself; made again in \(Self.retrySeconds) s")
        armRetry()
        publishStatus()
    }

    /// Logs a device's problem unless it was the last one logged for it.
    private func warnOnce(_ name: String, _ problem: String) {
        guard lastProblem[name] != problem else { return }
        lastProblem[name] = problem
        Log.warn("\(nodeName): device '\(name)': \(problem)")
    }

    private func armRetry() {
        if let retryTimer { _ = cpshim_loop_arm_timer(loop, retryTimer, Self.retrySeconds * 1000) }
    }

    /// Makes again every device that is `.retrying`, and asks the made ones that may have a
    /// problem (a sender's route) whether they have one now: those are made again once it is
    /// gone. Every `retrySeconds` while any device is retried or may have a problem.
    private func retry() {
        for (name, entry) in managed {
            guard case .ready = entry.status, entry.module != nil, let kind = kind(of: entry.device),
                  let problem = kind.problem(for: entry.device) else { continue }
            managed[name]?.status = .retrying(problem)
            warnOnce(name, "\(problem); made again once it has one")
        }
        for (name, entry) in managed {
            guard entry.status.isRetrying else { continue }
            entry.unloadModules()
            managed[name]?.module = nil
            managed[name]?.companion = nil
            create(entry.device)
        }
        if managed.values.contains(where: { $0.module != nil || $0.status.isRetrying }) { armRetry() }
        reconcile()
    }

    private func remove(_ name: String) {
        lastProblem[name] = nil
        guard let entry = managed.removeValue(forKey: name) else { return }
        // The node is the client's own object (object.linger = false): destroying its proxy
        // removes it, its ports and links; the session manager moves its applications
        // elsewhere. Never through the registry (pw_registry_destroy): that unbinds the global
        // before the node says it is suspended, so WirePlumber 0.4.13 keeps the suspend timer
        // it armed when the device went idle, and 5 s later sends Suspend through a proxy that
        // is gone: a NULL dereference that ended the session manager (ARCHITECTURE.md, "Idle
        // devices sleep").
        if let proxy = entry.proxy { pw_proxy_destroy(proxy) }
        entry.unloadModules()
        Log.info("\(nodeName): removes device '\(name)'")
    }

    // MARK: The graph

    private func nodeAdded(_ id: UInt32, _ properties: [String: String]) {
        // A global carries only some of a node's properties (not ours): a device is known by
        // its proxy's bound id, or, before the proxy hears it, by its name while it is being
        // made (a name taken already was refused at `create`).
        guard let name = properties[PW_KEY_NODE_NAME], let entry = managed[name] else { return }
        if entry.module != nil, case .waiting = entry.status {
            // A module's node: known by its name (taken by no other node when it was loaded).
            managed[name]?.status = .ready(id)
            ours.insert(id)
            lastProblem[name] = nil
            armRetry()  // its route asked after again
            return
        }
        guard entry.status == .creating, let proxy = entry.proxy else { return }
        let bound = pw_proxy_get_bound_id(proxy)
        if bound == id || bound == SPA_ID_INVALID {
            managed[name]?.status = .ready(id)
            ours.insert(id)
        }
    }

    private func nodeRemoved(_ id: UInt32) {
        // One of ours is gone: its memory is freed. Give it back once the removals stop.
        if ours.remove(id) != nil, let trimTimer { _ = cpshim_loop_arm_timer(loop, trimTimer, Self.trimDelayMilliseconds) }
        for (name, entry) in managed {
            switch entry.status {
            case .ready(id):
                // Destroyed by someone else (pw-cli destroy): made again.
                Log.warn("\(nodeName): device '\(name)' was removed from outside; making it again")
                if let proxy = entry.proxy { pw_proxy_destroy(proxy) }
                entry.unloadModules()
                managed.removeValue(forKey: name)
                create(entry.device)
            case .nameTaken(id):
                managed.removeValue(forKey: name)
                create(entry.device)
            default:
                break
            }
        }
    }

    /// Links every ready device's ports to the node's, removes the links between them that no
    /// longer match, sets a default asked for, and publishes the devices' state.
    private func reconcile() {
        guard let node = self.node.nodeID else { return }
        var wanted: [(output: UInt32, input: UInt32)] = []
        var deviceIDs: Set<UInt32> = []
        var madeDefault: [String] = []
        for (name, entry) in managed {
            guard case let .ready(id) = entry.status else { continue }
            deviceIDs.insert(id)
            let device = entry.device
            guard let kind = kind(of: device) else { continue }
            for link in kind.links(of: device) {
                let (outputNode, inputNode) = link.fromDevice ? (id, node) : (node, id)
                guard let output = graph.port(of: outputNode, named: link.output),
                      let input = graph.port(of: inputNode, named: link.input) else { continue }
                wanted.append((output, input))
            }
            // Made the default once the session manager has configured it (its ports exist):
            // WirePlumber 0.4 passes over a configured default without ports and does not look
            // again when they come.
            let configured = graph.ports.values.contains { $0.node == id }
            if entry.defaultPending, configured, let key = kind.defaultKey(for: device),
               graph.setDefault(key, json: "{ \"name\": \"\(name)\" }") {
                managed[name]?.defaultPending = false
                madeDefault.append(name)
                Log.info("\(nodeName): device '\(name)' is made the default (\(key))")
            }
        }
        // Links between a device and the node that are not wanted: a channel changed.
        for (id, link) in graph.links {
            guard let from = graph.ports[link.output], let to = graph.ports[link.input] else { continue }
            let between = (deviceIDs.contains(from.node) && to.node == node) || (from.node == node && deviceIDs.contains(to.node))
            if between, !wanted.contains(where: { $0 == link }) { graph.destroy(global: id) }
        }
        for pair in wanted { graph.link(pair.output, pair.input) }
        publishStatus()
        // `default` is asked once: done, it leaves the state, so that a restart (the state file)
        // does not take the default back from a device the person chose since. The session
        // manager remembers the choice itself.
        if !madeDefault.isEmpty {
            do {
                try self.node.update { m throws(CrosspointError) in
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
            case let .retrying(why): "\(name): retrying (\(why))"
            case let .waiting(what): "\(name): waiting for \(what)"
            }
        }.joinedBytes(separator: "; ")
        guard text != lastReported else { return }
        lastReported = text
        self.node.publishProperty(CrosspointProperty.devices, text)
    }
}
