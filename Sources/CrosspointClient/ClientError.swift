import CrosspointCore
import CrosspointPipeWire

/// What can go wrong talking to a PipeWire daemon from the command line.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The daemon's socket could not be reached.
    case cannotConnect(remote: String, reason: String)
    /// The daemon did not answer in time.
    case timeout(waitingFor: String, seconds: Double)
    /// The connection broke.
    case disconnected
    /// The daemon refused a request; `object` says which.
    case refused(object: String, message: String)
    /// A pod too large for the buffer it was built in (a bug, not a user error).
    case podTooLarge(bytes: Int)

    public var description: String {
        switch self {
        case let .cannotConnect(remote, reason):
            "cannot connect to PipeWire at '\(remote)': \(reason) (is the daemon running? --remote or PIPEWIRE_REMOTE pick another)"
        case let .timeout(what, seconds):
            "PipeWire did not answer within \(Gain.format(seconds)) s while waiting for \(what)"
        case .disconnected:
            "the connection to PipeWire broke"
        case let .refused(object, message):
            "PipeWire refused \(object): \(message)"
        case let .podTooLarge(bytes):
            "internal error: a Props pod of \(bytes) bytes overflowed its buffer"
        }
    }
}
