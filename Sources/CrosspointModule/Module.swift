import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointNode
import CrosspointPipeWire
import Glibc

/// One loaded `libpipewire-module-crosspoint`: its core connection and its node's owner
/// (`NodeHost`, which makes the node and its parts and tears them down). Torn down when the
/// module object is destroyed (`pw-cli destroy <module id>`, daemon exit) or when the core
/// connection fails, as module-loopback does.
final class ModuleInstance {
    let module: OpaquePointer
    private var core: OpaquePointer?
    private let ownsCore: Bool
    private var host: NodeHost?
    private let moduleListener = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let coreListener = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let proxyListener = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)

    init(module: OpaquePointer, configuration: NodeConfiguration) throws(NodeError) {
        self.module = module
        for hook in [moduleListener, coreListener, proxyListener] { hook.initialize(to: spa_hook()) }
        let context = pw_impl_module_get_context(module)
        if let existing = pw_context_get_object(context, "PipeWire:Interface:Core") {
            core = OpaquePointer(existing)
            ownsCore = false
        } else {
            core = pw_context_connect(context, nil, 0)
            ownsCore = true
        }
        guard let core else {
            throw .cannotConnect(reason: String(cBytes: strerror(errno)))
        }
        do {
            host = try NodeHost(core: core, configuration: configuration,
                                onFailure: { [module] _ in pw_impl_module_schedule_destroy(module) })
        } catch {
            if ownsCore { pw_core_disconnect(core) }
            throw error
        }
        let data = Unmanaged.passUnretained(self).toOpaque()
        cpshim_core_add_listener(core, coreListener, ModuleInstance.coreEvents, data)
        pw_proxy_add_listener(core, proxyListener, ModuleInstance.proxyEvents, data)
        pw_impl_module_add_listener(module, moduleListener, ModuleInstance.moduleEvents, data)
    }

    // The hooks are removed by then (tearDown, or the core's `removed`), or were never added
    // (init threw); valgrind found them lost, 144 bytes a module instance.
    deinit {
        for hook in [moduleListener, coreListener, proxyListener] { hook.deallocate() }
    }

    /// Destroys the node and the connection; the module object itself is PipeWire's.
    func tearDown() {
        spa_hook_remove(moduleListener)
        host?.tearDown(connectionGone: false)
        host = nil
        if let core {
            spa_hook_remove(coreListener)
            spa_hook_remove(proxyListener)
            if ownsCore { pw_core_disconnect(core) }
        }
        core = nil
    }

    private static func instance(_ data: UnsafeMutableRawPointer?) -> ModuleInstance {
        Unmanaged<ModuleInstance>.fromOpaque(data!).takeUnretainedValue()
    }

    nonisolated(unsafe) private static let moduleEvents = eventTable(pw_impl_module_events(), version: { $0.version = $1 }, PW_VERSION_IMPL_MODULE_EVENTS) { events in
        events.destroy = { data in
            let instance = ModuleInstance.instance(data)
            instance.tearDown()
            Unmanaged.passUnretained(instance).release()  // the reference init handed PipeWire
            Log.tearDown()
        }
    }

    nonisolated(unsafe) private static let coreEvents = eventTable(pw_core_events(), version: { $0.version = $1 }, PW_VERSION_CORE_EVENTS) { events in
        events.error = { data, id, _, res, message in
            let text = message.map { String(cBytes: $0) } ?? ""
            Log.error("core error on object \(id): \(String(cBytes: strerror(-res))) \(text)")
            if id == 0 && res == -EPIPE { pw_impl_module_schedule_destroy(ModuleInstance.instance(data).module) }
        }
    }

    nonisolated(unsafe) private static let proxyEvents = eventTable(pw_proxy_events(), version: { $0.version = $1 }, PW_VERSION_PROXY_EVENTS) { events in
        // `removed`, not `destroy`: pw_core_disconnect (the daemon shutting down, a lost
        // connection) emits it while the filter still exists; by `destroy` the core has
        // destroyed the filters on it itself.
        events.removed = { data in
            let instance = ModuleInstance.instance(data)
            spa_hook_remove(instance.coreListener)
            spa_hook_remove(instance.proxyListener)
            // The connection goes, and the devices it made with it: let go of the proxies only.
            instance.host?.tearDown(connectionGone: true)
            instance.host = nil
            instance.core = nil
        }
    }
}

/// The entry point PipeWire calls when it loads `libpipewire-module-crosspoint`.
@_cdecl("pipewire__module_init")
public func pipewireModuleInit(_ module: OpaquePointer?, _ args: UnsafePointer<CChar>?) -> Int32 {
    Log.setUp()
    guard let module else { Log.tearDown(); return -EINVAL }
    do {
        let configuration = try NodeConfiguration(arguments: args.map { String(cBytes: $0) })
        let instance = try ModuleInstance(module: module, configuration: configuration)
        _ = Unmanaged.passRetained(instance)  // released by the module's destroy event
        let props = cpshim_properties_new()
        pw_properties_set(props, PW_KEY_MODULE_AUTHOR, "Crosspoint")
        pw_properties_set(props, PW_KEY_MODULE_VERSION, CrosspointVersion.string)
        pw_properties_set(props, PW_KEY_MODULE_DESCRIPTION, "Matrix mixer and channel router (pw_filter)")
        pw_properties_set(props, PW_KEY_MODULE_USAGE, NodeConfiguration.arguments.map { "( \($0.name) = \($0.example) )" }.joinedBytes(separator: " "))
        pw_impl_module_update_properties(module, &props!.pointee.dict)
        pw_properties_free(props)
        return 0
    } catch {
        Log.error("libpipewire-module-crosspoint: \(error)")
        Log.tearDown()
        return -EINVAL
    }
}
