#if canImport(Glibc)
import Glibc
#endif

/// Linear gains and decibels, as users type and read them.
public enum Gain {
    /// Parses `0.5`, `-6dB`, `-6 db`, `+3dB`, `-inf`, `-infdB`.
    public static func parse(_ text: String) throws(CrosspointError) -> Double {
        var body = Substring(text).trimmingSpaces()
        var isDecibels = false
        if body.lowercased().hasSuffix("db") {
            isDecibels = true
            body = body.dropLast(2).trimmingSpaces()
        }
        if body.lowercased() == "-inf" { return 0 }
        guard let value = Double(body), value.isFinite else {
            throw .invalidValue(key: "gain", reason: "'\(text)' is not a gain; write 0.5, -6dB or -inf")
        }
        return isDecibels ? linear(decibels: value) : value
    }

    public static func linear(decibels: Double) -> Double { pow(10, decibels / 20) }

    /// `-inf` for silence; the sign of a negative (polarity-flipping) gain is kept apart.
    public static func decibels(_ linear: Double) -> Double {
        linear == 0 ? -.infinity : 20 * log10(abs(linear))
    }

    /// A gain in dB for a table cell: `0.0`, `-6.0`, `-inf`, `ø-6.0` for flipped polarity.
    public static func formatDecibels(_ linear: Double) -> String {
        if linear == 0 { return "-inf" }
        guard linear.isFinite else { return linear.isNaN ? "nan" : "+inf" }
        let db = decibels(linear)
        let rounded = (db * 10).rounded() / 10
        let text = rounded == 0 ? "0.0" : String(format1: rounded)
        return linear < 0 ? "ø" + text : text
    }

    /// Milliseconds as people read them: to the microsecond, without trailing zeros (4801
    /// samples at 48 kHz: `100.021`, not `100.02083333333333`).
    public static func formatMilliseconds(_ value: Double) -> String {
        guard value.isFinite, value.magnitude < 1e12 else { return format(value) }
        let rounded = (value * 1000).rounded() / 1000
        return format(rounded == 0 ? 0 : rounded)
    }

    /// A number without trailing noise: `1`, `0.5`, `-10`.
    public static func format(_ value: Double) -> String {
        // `magnitude`, not `abs`: abs(Int.min) traps, and -2^63 arrives as a Long, Float or Double pod.
        if let whole = Int(exactly: value), whole.magnitude < 1_000_000_000_000_000 { return whole.decimalText }
        // Values from Float pods print as typed (1e+20, not 1.0000000200408773e+20).
        if let float = Float(exactly: value) { return DecimalText.text(float) }
        return DecimalText.text(value)
    }
}

extension String {
    /// One decimal place, without Foundation.
    init(format1 value: Double) {
        // Int(_:) traps beyond Int.max: print such values (never a real gain) as they are.
        guard let tenths = Int(exactly: (abs(value) * 10).rounded()) else {
            self = "\(value)"
            return
        }
        self = (value < 0 ? "-" : "") + "\(tenths / 10).\(tenths % 10)"
    }
}
