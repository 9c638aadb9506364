import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// Watches a Crosspoint node's levels: holds a lease on them (the write-only key
/// `levels.watch`, renewed every second) and delivers each reading the node publishes in its
/// node property `crosspoint.levels`.
///
///     let watcher = try LevelsWatcher(client, node: id, interval: 50)
///     defer { try? watcher.release() }
///     while true {
///         guard let reading = try watcher.next(within: 0.2) else { continue }
///         // reading.inputs[i].peak, .rms: dBFS to 0.1 dB, nil for silence
///     }
///
/// It runs on the thread that drives `client` (the client has no thread of its own), and
/// delivers every reading published after it took its lease, in order (keeping up to a
/// second's worth for a caller that falls behind). Several watchers, in one
/// program or in many, may watch one node: the node publishes at the shortest interval any of
/// them asked for. A program that ends without `release` (killed) leaves a lease that runs
/// out by itself within `LevelLeases.duration` (4 s).
public final class LevelsWatcher {
    /// How often the lease is renewed (it lasts 4 s).
    public static let renewal: Duration = .seconds(1)

    public let nodeID: UInt32
    /// The interval asked for, in milliseconds (the node publishes at least every 33 ms).
    public let interval: Int
    /// This watcher's number in the node's table of leases.
    public let watcher: Int
    private let client: PipeWireClient
    private let registry: Registry
    private let proxy: OpaquePointer
    private let hook = Hook()
    private let gone: Flag
    /// Readings received and not yet delivered, oldest first (at most `queueLimit`: a caller
    /// that falls behind loses the oldest), and the sequence of the last one taken in.
    private var queue: [LevelReading] = []
    private var received = -1
    /// The most readings kept for a caller that falls behind (a second's worth at 30 a second).
    public static let queueLimit = 32
    private var renewed = ContinuousClock.now
    private var released = false

    private final class Flag { var isSet = false }

    /// Binds node `id` and takes a lease on its levels at `interval` milliseconds
    /// (`LevelWatch.intervalRange`, 0 excepted; the node publishes at least every 33 ms).
    /// `watcher` is this watcher's number (default: a random one).
    public init(_ client: PipeWireClient, node id: UInt32, interval: Int, watcher: Int? = nil) throws(ClientError) {
        let watch: LevelWatch
        do throws(CrosspointError) {
            watch = try LevelWatch(watcher: watcher ?? Int.random(in: LevelWatch.watcherRange), interval: interval)
            guard interval > 0 else { throw .invalidValue(key: LevelWatch.key, reason: "a watcher needs an interval above 0") }
        } catch {
            throw .refused(object: "to watch the levels of node \(id)", message: error.description)
        }
        self.client = client
        nodeID = id
        self.interval = watch.interval
        self.watcher = watch.watcher
        let gone = Flag()
        self.gone = gone
        registry = Registry(core: client.core, onRemoved: { if $0 == id { gone.isSet = true } })
        guard let bound = pw_registry_bind(registry.proxy, id, "PipeWire:Interface:Node", UInt32(PW_VERSION_NODE), 0) else {
            throw .refused(object: "node \(id)", message: "cannot bind it")
        }
        proxy = OpaquePointer(bound)
        cpshim_node_add_listener(proxy, hook.pointer, LevelsWatcher.events, Unmanaged.passUnretained(self).toOpaque())
        hook.isLinked = true
        // The first info carries the property as it is: a reading taken before this lease.
        try client.roundtrip("node \(id)")
        queue.removeAll()
        try send(interval)
        renewed = .now
    }

    deinit {
        if !released {
            // Best effort; if this does not reach the node, the lease runs out by itself.
            released = true
            try? send(0)
            try? client.roundtrip("node \(nodeID) to end the lease")
        }
        hook.remove()
        pw_proxy_destroy(proxy)
    }

    /// The next reading, in the order the node published them, waiting up to `seconds` for
    /// one (nil if none came; the lease is renewed meanwhile; 0 takes only what has arrived).
    /// Throws if the node went away or the connection broke. A signal (Ctrl-C) ends the wait
    /// early, returning nil.
    public func next(within seconds: Double) throws(ClientError) -> LevelReading? {
        let deadline = ContinuousClock.now + .milliseconds(Int(max(seconds, 0) * 1000))
        while true {
            if !queue.isEmpty { return queue.removeFirst() }
            guard !gone.isSet else { throw .refused(object: "to watch the levels of node \(nodeID)", message: "the node went away") }
            let now = ContinuousClock.now
            if now - renewed >= LevelsWatcher.renewal {
                try send(interval)
                renewed = now
            }
            guard now < deadline else { return nil }
            let wait = min(deadline - now, LevelsWatcher.renewal - (now - renewed))
            let milliseconds = wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000
            // A signal interrupts the wait: let the caller look at its flags.
            guard try client.iterateOnce(milliseconds: Int32(clamping: max(milliseconds, 1))) else { return nil }
        }
    }

    /// Ends the lease and waits until the node has it: if this was the last watcher, the node
    /// stops measuring and empties `crosspoint.levels`.
    public func release() throws(ClientError) {
        guard !released else { return }
        released = true
        try send(0)
        try client.roundtrip("node \(nodeID) to end the lease")
    }

    private func receive(_ reading: LevelReading?) {
        // Empty (nobody watched for a moment) or a reading already seen: nothing new.
        guard let reading, reading.sequence > received else { return }
        received = reading.sequence
        queue.append(reading)
        if queue.count > LevelsWatcher.queueLimit { queue.removeFirst(queue.count - LevelsWatcher.queueLimit) }
    }

    private func send(_ interval: Int) throws(ClientError) {
        let entry = PropsEntry(key: LevelWatch.key, value: .ints([watcher, interval]))
        let buffer = PodBuffer(size: 1024)
        guard let pod = PropsCodec.build([entry], tail: .change(mute: nil), in: buffer) else {
            throw .podTooLarge(bytes: Int(buffer.builder.state.offset))
        }
        _ = cpshim_node_set_param(proxy, SPA_PARAM_Props.rawValue, 0, pod)
    }

    nonisolated(unsafe) private static let events = eventTable(pw_node_events(), version: { $0.version = $1 }, PW_VERSION_NODE_EVENTS) { events in
        events.info = { data, info in
            // Only an info whose properties changed carries them.
            guard let info, info.pointee.change_mask & UInt64(PW_NODE_CHANGE_MASK_PROPS) != 0,
                  let dict = info.pointee.props, let text = spa_dict_lookup(dict, LevelsCodec.property) else { return }
            let watcher = Unmanaged<LevelsWatcher>.fromOpaque(data!).takeUnretainedValue()
            watcher.receive(LevelsCodec.reading(String(cString: text)))
        }
    }
}
