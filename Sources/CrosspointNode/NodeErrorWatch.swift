import CCrosspointShim
import CPipeWire
import CrosspointPipeWire

/// Hears one node's state (its info events) and tells when it goes to error, with PipeWire's
/// reason. PipeWire 1.x's RTP sender opens its socket only when its stream starts, and a
/// socket it cannot open (no route to the address: the network down) leaves its node in error
/// with the module loaded and nothing retried; the device host hears it here and makes the
/// device again. Main loop only; gone with its owner.
final class NodeErrorWatch {
    private let proxy: OpaquePointer
    private let hook = Hook()
    private var onError: ((String) -> Void)?

    init?(graph: GraphMirror, node id: UInt32, onError: @escaping (String) -> Void) {
        guard let proxy = graph.bind(node: id) else { return nil }
        self.proxy = proxy
        self.onError = onError
        cpshim_node_add_listener(proxy, hook.pointer, Self.events, Unmanaged.passUnretained(self).toOpaque())
        hook.isLinked = true
    }

    deinit {
        hook.remove()
        pw_proxy_destroy(proxy)
    }

    private func stateChanged(_ state: pw_node_state, error: String?) {
        guard state == PW_NODE_STATE_ERROR, let told = onError else { return }
        onError = nil  // told once: the owner makes the device again
        told(error ?? "its node is in error")
    }

    nonisolated(unsafe) private static let events = eventTable(pw_node_events(), version: { $0.version = $1 }, PW_VERSION_NODE_EVENTS) { events in
        events.info = { data, info in
            guard let info, info.pointee.change_mask & UInt64(PW_NODE_CHANGE_MASK_STATE) != 0 else { return }
            Unmanaged<NodeErrorWatch>.fromOpaque(data!).takeUnretainedValue()
                .stateChanged(info.pointee.state, error: info.pointee.error.map { String(cBytes: $0) })
        }
    }
}
