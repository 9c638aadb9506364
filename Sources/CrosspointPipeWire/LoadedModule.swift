import CPipeWire
import Glibc

/// A PipeWire module loaded into a context (`pw_context_load_module`, as a drop-in's
/// `context.modules` or `pw-cli load-module` load one), unloaded by `unload()` or when this
/// goes, and told when it ends by itself: PipeWire's RTP modules unload themselves when their
/// stream fails or their connection goes. Main loop only.
package final class LoadedModule {
    private var module: OpaquePointer?
    private let hook = Hook()
    private var onEnded: (() -> Void)?

    /// Loads `name` with `arguments` (SPA-JSON); throws the reason (errno's text) if the module
    /// is missing or refuses them. `onEnded` is called if the module ends by itself.
    package init(context: OpaquePointer, name: String, arguments: String, onEnded: @escaping () -> Void) throws(LoadError) {
        errno = 0
        guard let module = pw_context_load_module(context, name, arguments, nil) else {
            throw LoadError(name: name, reason: errno == 0 ? "it did not load" : String(cBytes: strerror(errno)))
        }
        self.module = module
        self.onEnded = onEnded
        pw_impl_module_add_listener(.init(module), hook.pointer, Self.events, Unmanaged.passUnretained(self).toOpaque())
        hook.isLinked = true
    }

    package func unload() {
        guard let module else { return }
        hook.remove()
        self.module = nil
        onEnded = nil
        pw_impl_module_destroy(.init(module))
    }

    deinit { unload() }

    private func ended() {
        hook.remove()
        module = nil
        let told = onEnded
        onEnded = nil
        told?()
    }

    package struct LoadError: Error, CustomStringConvertible {
        package let name: String
        package let reason: String
        package var description: String { "\(name) did not load: \(reason)" }
    }

    nonisolated(unsafe) private static let events = eventTable(pw_impl_module_events(), version: { $0.version = $1 }, PW_VERSION_IMPL_MODULE_EVENTS) { events in
        events.destroy = { data in
            Unmanaged<LoadedModule>.fromOpaque(data!).takeUnretainedValue().ended()
        }
    }
}
