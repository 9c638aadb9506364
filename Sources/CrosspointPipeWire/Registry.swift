import CCrosspointShim
import CPipeWire

/// The registry, holding the globals it announced up to the last roundtrip.
package final class Registry {
    package struct Global {
        package let id: UInt32
        package let type: String
        package let properties: [String: String]
    }

    package let proxy: OpaquePointer
    private let hook = Hook()
    package private(set) var globals: [Global] = []
    private let onAdded: ((Global) -> Void)?
    private let onRemoved: ((UInt32) -> Void)?

    /// Listens to the registry of `core`; `onAdded` and `onRemoved` hear of each change as it
    /// comes (the node's memory uses them; the command line reads `globals` after a roundtrip).
    package init(core: OpaquePointer, onAdded: ((Global) -> Void)? = nil, onRemoved: ((UInt32) -> Void)? = nil) {
        self.onAdded = onAdded
        self.onRemoved = onRemoved
        proxy = pw_core_get_registry(core, UInt32(PW_VERSION_REGISTRY), 0)
        cpshim_registry_add_listener(proxy, hook.pointer, Registry.events, Unmanaged.passUnretained(self).toOpaque())
        hook.isLinked = true
    }

    deinit {
        hook.remove()
        pw_proxy_destroy(proxy)
    }

    nonisolated(unsafe) private static let events = eventTable(pw_registry_events(), version: { $0.version = $1 }, PW_VERSION_REGISTRY_EVENTS) { events in
        events.global = { data, id, _, type, _, props in
            let registry = Unmanaged<Registry>.fromOpaque(data!).takeUnretainedValue()
            let global = Global(id: id, type: type.map { String(cBytes: $0) } ?? "", properties: props?.pointee.strings ?? [:])
            registry.globals.append(global)
            registry.onAdded?(global)
        }
        events.global_remove = { data, id in
            let registry = Unmanaged<Registry>.fromOpaque(data!).takeUnretainedValue()
            registry.globals.removeAll { $0.id == id }
            registry.onRemoved?(id)
        }
    }
}
