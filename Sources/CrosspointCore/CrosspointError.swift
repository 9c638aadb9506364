/// Everything that can be wrong with a request to the mixer.
///
/// Every case names the offending key or value, so that a log line or a command-line
/// error built from `description` tells the user exactly what to fix.
public enum CrosspointError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A channel count outside `Mixer.channelLimit`.
    case channelCount(what: String, value: Int)
    /// An input or output index (or channel name) that does not exist.
    case indexOutOfRange(what: String, index: Int, count: Int)
    /// A channel name that matches no port.
    case unknownChannel(what: String, name: String)
    /// NaN or an infinity where a finite number is needed.
    case notFinite(key: String, value: Double)
    /// A finite value outside the documented range of its key.
    case outOfRange(key: String, value: Double, range: ClosedRange<Double>)
    /// A key that is not in the parameter table.
    case unknownKey(String)
    /// A value of the wrong type or form for its key.
    case invalidValue(key: String, reason: String)
    /// A matrix, map or preset whose shape does not fit the mixer.
    case shapeMismatch(String)

    public var description: String {
        switch self {
        case let .channelCount(what, value):
            "\(what) must be between \(Mixer.channelLimit.lowerBound) and \(Mixer.channelLimit.upperBound), got \(value)"
        case let .indexOutOfRange(what, index, count):
            "\(what) index \(index) is out of range (the node has \(count), numbered 0 to \(count - 1))"
        case let .unknownChannel(what, name):
            "no \(what) channel is named '\(name)'"
        case let .notFinite(key, value):
            "\(key): \(value) is not a finite number"
        case let .outOfRange(key, value, range):
            "\(key): \(value) is outside \(range.lowerBound)...\(range.upperBound)"
        case let .unknownKey(key):
            "unknown parameter '\(key)'"
        case let .invalidValue(key, reason):
            "\(key): \(reason)"
        case let .shapeMismatch(reason):
            reason
        }
    }
}
