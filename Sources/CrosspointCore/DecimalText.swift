/// The shortest decimal that reads back as the same number, as Swift's `description` of a
/// `Double` or `Float` writes it (`0.5`, `0.1`, `-12.25`, `1.0`), for the numbers the node
/// writes: gains and milliseconds, between 0.0001 and a million with few digits. Others (more
/// digits, larger, smaller, not finite) are Swift's own `description`.
///
/// Why not always `"\(value)"`: the standard library's printing of floating-point numbers
/// (`_Float64ToASCII`, `_Float32ToASCII`) sits alone on a 64 kB block of its one big code
/// section, which the daemon then keeps mapped for every node that saves its state
/// (BENCHMARKS.md, "Footprint"). The same text: the digits are the fewest that read back as the
/// value, and of those the closest to it, as Swift's algorithm chooses them.
public enum DecimalText {
    /// `"\(value)"`.
    public static func text(_ value: Double) -> String {
        if let (digits, places, negative) = shortest(value) { return format(digits, places, negative) }
        return "\(value)"
    }

    /// `"\(value)"`.
    public static func text(_ value: Float) -> String {
        if let (digits, places, negative) = shortest(value) { return format(digits, places, negative) }
        return "\(value)"
    }

    /// `Double("\(value)")`: the Double nearest the Float's shortest decimal (`0.1` for the
    /// Float nearest 0.1, not 0.10000000149011612).
    public static func decimal(_ value: Float) -> Double {
        if let (digits, places, negative) = shortest(value) {
            let magnitude = Double(digits) / powersOfTen[places]  // both exact: correctly rounded, as a parse is
            return negative ? -magnitude : magnitude
        }
        return Double("\(value)") ?? Double(value)
    }

    /// 10^0 ... 10^12, each exact in a Double.
    static let powersOfTen: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12]

    /// The value as `digits` x 10^-`places` with the fewest places that read back as the value
    /// (the closest such decimal), or nil where this does not decide it (Swift's own then).
    static func shortest(_ value: Double) -> (digits: Int, places: Int, negative: Bool)? {
        let magnitude = value.magnitude
        if magnitude == 0 { return (0, 0, value.sign == .minus) }  // 0.0, -0.0
        // Swift writes these without an exponent (it does from below 0.0001 and above 2^53).
        guard magnitude >= 1e-4, magnitude < 1e6 else { return nil }
        for places in 0..<powersOfTen.count {
            let scale = powersOfTen[places]
            let scaled = magnitude * scale  // rounded: off by at most 2^-14 below 2^39
            guard scaled < 0x1p39 else { return nil }
            let nearest = roundedHalfUp(scaled)
            let other = scaled > nearest ? nearest + 1 : nearest - 1
            // A decimal of this many places reads back as `Double(digits) / scale` (both exact,
            // so the division rounds once, as a parse does).
            let nearestReads = nearest / scale == magnitude
            // Near a power of two the value's interval is lopsided: the other neighbour may read back.
            let otherReads = other > 0 && other / scale == magnitude
            guard nearestReads || otherReads else { continue }
            // Too near a half to tell which whole number is nearer the exact product.
            guard (scaled - nearest).magnitude < 0.499 else { return nil }
            return (Int(nearestReads ? nearest : other), places, value < 0)
        }
        return nil
    }

    /// The same for a Float: its digits (at most 8 places: a decimal of more may round
    /// differently through a Double than straight to a Float).
    static func shortest(_ value: Float) -> (digits: Int, places: Int, negative: Bool)? {
        let magnitude = value.magnitude
        if magnitude == 0 { return (0, 0, value.sign == .minus) }  // 0.0, -0.0
        // Swift writes these without an exponent (it does from below 0.0001 and above 2^24).
        guard magnitude >= 1e-4, magnitude < 1e6 else { return nil }
        for places in 0...8 {
            let scale = powersOfTen[places]
            let scaled = Double(magnitude) * scale  // exact: 24 bits times 10^8 (5^8 in 19 bits)
            let nearest = roundedHalfUp(scaled)
            let other = scaled > nearest ? nearest + 1 : nearest - 1
            let nearestReads = Float(nearest / scale) == magnitude
            let otherReads = other > 0 && Float(other / scale) == magnitude
            guard nearestReads || otherReads else { continue }
            guard (scaled - nearest).magnitude != 0.5 else { return nil }  // a tie: Swift's own
            return (Int(nearestReads ? nearest : other), places, value < 0)
        }
        return nil
    }

    /// `x.rounded()` for 0 <= x < 2^52, without libm's `round` (baseline x86-64 has no rounding
    /// instruction; the daemon would map libm's pages around it): x + 0.5 is exact there.
    static func roundedHalfUp(_ x: Double) -> Double { Double(Int(x + 0.5)) }

    /// `digits` x 10^-`places` as Swift writes it: `0.05`, `12.5`, `3.0`.
    static func format(_ digits: Int, _ places: Int, _ negative: Bool) -> String {
        let zero = UInt8(ascii: "0"), point = UInt8(ascii: ".")
        var figures = Array(digits.decimalText.utf8)
        if figures.count <= places { figures.insert(contentsOf: repeatElement(zero, count: places + 1 - figures.count), at: 0) }
        var bytes: [UInt8] = negative ? [UInt8(ascii: "-")] : []
        bytes.reserveCapacity(figures.count + 3)
        bytes.append(contentsOf: figures[..<(figures.count - places)])
        bytes.append(point)
        if places == 0 { bytes.append(zero) } else { bytes.append(contentsOf: figures[(figures.count - places)...]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
