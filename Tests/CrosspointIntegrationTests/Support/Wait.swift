import Foundation

/// The one way the tests wait for something that is not there yet: look every 50 ms until it
/// is, up to `timeout` seconds, then fail naming what was awaited (and, with `describe`, what
/// the last look found). Every suite's waits go through here (`Sandbox.waitFor` for the graph);
/// a fixed sleep stays only where the test means a duration (audio playing, a lease running out).
enum Wait {
    /// The first non-nil result of `look`.
    @discardableResult
    static func forValue<T>(_ what: String, timeout: Double = 10, poll: Double = 0.05, describe: (() -> String)? = nil,
                            _ look: () throws -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let found = try look() { return found }
            guard Date() < deadline else {
                throw SandboxError("timed out after \(timeout) s waiting for \(what)" + (describe.map { ": " + $0() } ?? ""))
            }
            usleep(UInt32(poll * 1_000_000))
        }
    }

    /// Until `condition` holds.
    static func until(_ what: String, timeout: Double = 10, poll: Double = 0.05, describe: (() -> String)? = nil,
                      _ condition: () throws -> Bool) throws {
        try forValue(what, timeout: timeout, poll: poll, describe: describe) { try condition() ? true : nil }
    }

    /// Whether `condition` came to hold within `timeout` (for tests that report the outcome
    /// themselves).
    static func holds(within timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { return false }
            usleep(50_000)
        }
        return true
    }
}
