import CrosspointClient
import CrosspointCore

extension Session {
    /// How long to wait for a node's first reading of levels (`meter`, `show --levels`, the API).
    package static let firstReadingTimeout = 5.0

    /// One reading of a node's levels (for `show --levels` and the API): a lease at `interval`
    /// ms, the first reading, the lease released.
    package func reading(of target: Target, interval: Int = 100) throws -> LevelReading {
        let watcher = try LevelsWatcher(client, node: target.node.id, interval: interval)
        let deadline = ContinuousClock.now + .seconds(Session.firstReadingTimeout)
        while ContinuousClock.now < deadline {
            if let reading = try watcher.next(within: 0.25) {
                try watcher.release()
                return reading
            }
        }
        try watcher.release()
        throw CommandError.invalid("\(target.node.name) published no levels within \(Int(Session.firstReadingTimeout)) s (is its module older than levels?)")
    }
}
