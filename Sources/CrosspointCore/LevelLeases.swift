/// A watcher's request for a node's levels, as the write-only key `levels.watch` carries it:
/// `[ watcher interval ]`. The watcher is a number the client picks (one per watching
/// program); the interval is how often it wants a reading, in milliseconds; 0 ends its lease.
public struct LevelWatch: Equatable, Sendable {
    public static let key = "levels.watch"
    /// Watcher numbers: positive Int pods.
    public static let watcherRange = 1...Int(Int32.max)
    /// Intervals a watcher may ask for, in milliseconds (0 = release).
    public static let intervalRange = 0...60_000
    /// The shortest interval a node publishes at: 30 readings a second.
    public static let fastestInterval = 33

    public let watcher: Int
    /// Milliseconds; 0 releases the watcher's lease.
    public let interval: Int

    public init(watcher: Int, interval: Int) throws(CrosspointError) {
        guard LevelWatch.watcherRange.contains(watcher) else {
            throw .invalidValue(key: LevelWatch.key, reason: "the watcher must be a whole number from 1 to \(Int32.max), got \(watcher)")
        }
        guard LevelWatch.intervalRange.contains(interval) else {
            throw .invalidValue(
                key: LevelWatch.key,
                reason: "the interval must be 0 (to stop) or 1 to \(LevelWatch.intervalRange.upperBound) ms, got \(interval)")
        }
        self.watcher = watcher
        self.interval = interval
    }

    /// A request from a parameter value: a list of two whole numbers.
    public init(_ value: ParameterValue) throws(CrosspointError) {
        guard case let .ints(numbers) = value, numbers.count == 2 else {
            throw .invalidValue(key: LevelWatch.key, reason: "expects [ watcher interval-ms ], two whole numbers, got \(value)")
        }
        try self.init(watcher: numbers[0], interval: numbers[1])
    }

    public var value: ParameterValue { .ints([watcher, interval]) }
}

/// The watchers a node publishes its levels for: each holds a lease that ends `duration` after
/// its last request, so a watcher that dies without a word stops the publishing within that
/// time. A bounded table: a new watcher beyond `capacity` takes the place of the one whose
/// lease ends first.
public struct LevelLeases: Sendable {
    /// How long a request holds, in milliseconds. Watchers renew every second or so.
    public static let duration: Int64 = 4000
    /// The most watchers at once.
    public static let capacity = 16

    struct Lease: Equatable, Sendable {
        let watcher: Int
        let interval: Int
        let expires: Int64
    }

    private(set) var leases: [Lease] = []

    public init() {}

    /// Renews (or takes, or with interval 0 ends) a watcher's lease at time `now` (milliseconds
    /// on any monotonic clock).
    public mutating func apply(_ watch: LevelWatch, now: Int64) {
        leases.removeAll { $0.watcher == watch.watcher }
        guard watch.interval > 0 else { return }
        if leases.count >= LevelLeases.capacity, let first = leases.indices.min(by: { leases[$0].expires < leases[$1].expires }) {
            leases.remove(at: first)
        }
        leases.append(Lease(watcher: watch.watcher, interval: watch.interval, expires: now + LevelLeases.duration))
    }

    /// Ends the leases whose time is up at `now`.
    public mutating func expire(now: Int64) {
        leases.removeAll { $0.expires <= now }
    }

    /// How many watchers hold a lease.
    public var count: Int { leases.count }

    /// The interval to publish at: the shortest any watcher asked for, and at least
    /// `LevelWatch.fastestInterval`; nil when nobody watches.
    public var interval: Int? {
        leases.map(\.interval).min().map { max($0, LevelWatch.fastestInterval) }
    }
}
