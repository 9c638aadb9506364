import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire
import Glibc

/// A connection to a PipeWire daemon, for the `crosspoint` command: a `pw_main_loop` that
/// this object iterates itself, one request at a time, until the daemon has answered
/// (a core `sync` comes back as `done`). Everything runs on the calling thread.
public final class PipeWireClient {
    /// How long to wait for any one answer.
    public var timeout: Double = 5
    private let mainLoop: OpaquePointer
    private let loop: UnsafeMutablePointer<pw_loop>
    private let context: OpaquePointer
    let core: OpaquePointer
    private let coreHook = Hook()
    private var lastDone: Int32 = -1
    private var broken = false
    /// Errors the daemon reported, by the id of the proxy they concern.
    private var errors: [(id: UInt32, message: String)] = []
    /// Global ids of proxies the daemon has bound (links made with `createLink`), by proxy id.
    var boundIDs: [UInt32: UInt32] = [:]

    /// Connects to `remote` (a socket name such as `pipewire-0`), or to what
    /// `PIPEWIRE_REMOTE` names, or to the default daemon.
    public init(remote: String?) throws(ClientError) {
        pw_init(nil, nil)
        let remoteName = remote ?? getenv("PIPEWIRE_REMOTE").map { String(cString: $0) } ?? "pipewire-0"
        guard let mainLoop = pw_main_loop_new(nil) else {
            throw .cannotConnect(remote: remoteName, reason: "cannot make a main loop")
        }
        let loop = pw_main_loop_get_loop(mainLoop)!
        guard let context = pw_context_new(loop, nil, 0) else {
            pw_main_loop_destroy(mainLoop)
            throw .cannotConnect(remote: remoteName, reason: "cannot make a context: \(String(cString: strerror(errno)))")
        }
        let properties = cpshim_properties_new()
        if let remote { pw_properties_set(properties, PW_KEY_REMOTE_NAME, remote) }
        guard let core = pw_context_connect(context, properties, 0) else {
            let reason = String(cString: strerror(errno))
            pw_context_destroy(context)
            pw_main_loop_destroy(mainLoop)
            throw .cannotConnect(remote: remoteName, reason: reason)
        }
        self.mainLoop = mainLoop
        self.loop = loop
        self.context = context
        self.core = core
        cpshim_loop_enter(loop)
        cpshim_core_add_listener(core, coreHook.pointer, PipeWireClient.coreEvents, Unmanaged.passUnretained(self).toOpaque())
        coreHook.isLinked = true
    }

    deinit {
        coreHook.remove()
        pw_core_disconnect(core)
        pw_context_destroy(context)
        cpshim_loop_leave(loop)
        pw_main_loop_destroy(mainLoop)
    }

    /// Waits until the daemon has handled every request sent so far (and sent every event
    /// they cause). Throws the first error the daemon reported meanwhile.
    public func roundtrip(_ what: String = "the daemon") throws(ClientError) {
        let seq = cpshim_core_sync(core, UInt32(PW_ID_CORE), 0)
        try iterate(until: what) { self.lastDone == seq }
    }

    /// Runs the loop until `done` holds, the connection breaks, or `timeout` passes.
    func iterate(until what: String, _ done: () -> Bool) throws(ClientError) {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !done() {
            if broken { throw .disconnected }
            guard ContinuousClock.now < deadline else { throw .timeout(waitingFor: what, seconds: timeout) }
            _ = cpshim_loop_iterate(loop, 50)
        }
        if let error = errors.first {
            errors.removeAll()
            throw .refused(object: error.id == PW_ID_CORE ? "the request" : "object \(error.id)", message: error.message)
        }
    }

    /// Runs the loop once, waiting up to `milliseconds` for events. Returns false if a signal
    /// ended the wait. Throws if the connection broke or the daemon reported an error meanwhile.
    @discardableResult
    public func iterateOnce(milliseconds: Int32) throws(ClientError) -> Bool {
        let result = broken ? 0 : cpshim_loop_iterate(loop, milliseconds)
        if broken { throw .disconnected }
        if let error = errors.first {
            errors.removeAll()
            throw .refused(object: error.id == PW_ID_CORE ? "the request" : "object \(error.id)", message: error.message)
        }
        return result != -EINTR
    }

    private static func client(_ data: UnsafeMutableRawPointer?) -> PipeWireClient {
        Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue()
    }

    nonisolated(unsafe) private static let coreEvents = eventTable(pw_core_events(), version: { $0.version = $1 }, PW_VERSION_CORE_EVENTS) { events in
        events.done = { data, id, seq in
            if id == PW_ID_CORE { PipeWireClient.client(data).lastDone = seq }
        }
        events.error = { data, id, _, res, message in
            let client = PipeWireClient.client(data)
            if id == PW_ID_CORE && res == -EPIPE { client.broken = true; return }
            let text = message.map { String(cString: $0) } ?? ""
            client.errors.append((id, text.isEmpty ? String(cString: strerror(-res)) : text))
        }
        events.bound_id = { data, id, globalID in
            PipeWireClient.client(data).boundIDs[id] = globalID
        }
    }
}
