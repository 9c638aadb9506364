/// The delay of an output: what lines up devices of different latency (a Bluetooth speaker
/// beside a wired one, two interfaces of an aggregate). Part of the `Mixer` (`delay.out.<out>`
/// in the parameter table), in milliseconds from 0 to 1000; rendered by a delay line per
/// delayed output (DelayLine.swift), and changed by a cross-fade from the old delay to the
/// new one over `ramp.ms`, so that a change does not click.
extension Mixer {
    /// The range of an output's delay in milliseconds: up to one second.
    public static let delayRange: ClosedRange<Double> = 0...1000

    /// Sets the delay of one output, in milliseconds.
    public mutating func setOutputDelay(_ output: Int, milliseconds: Double) throws(CrosspointError) {
        try check(output: output)
        let key = "delay.out.\(output)"
        guard milliseconds.isFinite else { throw .notFinite(key: key, value: milliseconds) }
        guard Mixer.delayRange.contains(milliseconds) else {
            throw .outOfRange(key: key, value: milliseconds, range: Mixer.delayRange)
        }
        outputDelays[output] = milliseconds
    }

    /// Whether any output is delayed.
    public var hasDelays: Bool { outputDelays.contains { $0 != 0 } }
}

/// A delay as a person writes it: milliseconds (`12`, `12ms`, `12.5 ms`) or samples (`576
/// samples`, `576smp`, `576 samples`), the latter at a sample rate the caller knows (the
/// graph's). What the node keeps is milliseconds; samples are converted at that rate, and come
/// back as the same whole number of samples at that rate.
public enum DelayAmount: Equatable, Sendable {
    case milliseconds(Double)
    case samples(Int)

    /// Parses `text`; `key` names the value in an error.
    public init(parsing text: String, key: String) throws(CrosspointError) {
        let trimmed = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()).lowercased()
        var body = Substring(trimmed), samples = false
        for suffix in ["samples", "sample", "smp", "ms"] where body.hasSuffix(suffix) {
            body = body.dropLast(suffix.count)
            samples = suffix != "ms"
            break
        }
        while body.last == " " { body = body.dropLast() }
        let example = "write milliseconds (12 or 12ms) or samples (576 samples)"
        guard !body.isEmpty, body.utf8.count <= 32, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) else {
            throw .invalidValue(key: key, reason: "'\(String(text.prefix(40)))' is not a delay; \(example)")
        }
        if samples {
            guard let count = Int(body) else {
                throw .invalidValue(key: key, reason: "'\(String(text.prefix(40)))' is not a whole number of samples; \(example)")
            }
            self = .samples(count)
        } else {
            guard let ms = Double(body), ms.isFinite else {
                throw .invalidValue(key: key, reason: "'\(String(text.prefix(40)))' is not a delay; \(example)")
            }
            self = .milliseconds(ms)
        }
    }

    /// Milliseconds at `rate` (samples per second), checked against `Mixer.delayRange`.
    public func milliseconds(atRate rate: Double, key: String) throws(CrosspointError) -> Double {
        let ms: Double
        switch self {
        case let .milliseconds(value): ms = value
        case let .samples(count):
            guard rate.isFinite, rate > 0 else {
                throw .invalidValue(key: key, reason: "samples need the graph's sample rate, which is not known")
            }
            ms = Double(count) * 1000 / rate
            guard Mixer.delayRange.contains(ms) else {
                let most = Int((rate * Mixer.delayRange.upperBound / 1000).rounded(.down))
                throw .invalidValue(key: key, reason: "\(count) samples is more than 1 s at \(Gain.format(rate)) Hz (at most \(most))")
            }
        }
        guard Mixer.delayRange.contains(ms) else { throw .outOfRange(key: key, value: ms, range: Mixer.delayRange) }
        return ms
    }

    /// Whole frames of a delay of `milliseconds` at `rate`, rounded to the nearest frame.
    public static func frames(milliseconds: Double, rate: Double) -> Int {
        let frames = milliseconds * rate / 1000
        guard frames.isFinite, frames > 0 else { return 0 }
        return Int(min(frames.rounded(), Double(Int32.max)))
    }
}
