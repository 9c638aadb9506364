// Shared by the tests and the benchmarks: one seeded generator, so both make the same data.

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, deterministic, good enough for test data.
/// Conforms to `RandomNumberGenerator`, so `Int.random(in:using:)` and friends take it.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// Uniform in `range`.
    public mutating func double(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// Uniform in `0 ..< count`.
    public mutating func index(_ count: Int) -> Int { Int(next() % UInt64(count)) }

    /// An audio sample, uniform in [-1, 1].
    public mutating func sample() -> Float { Float(unit() * 2 - 1) }

    /// A gain a user might set: often unity, silence or a polarity flip, otherwise anything
    /// in ±2, now and then anywhere in the full ±10.
    public mutating func gain() -> Double {
        switch index(10) {
        case 0: 1
        case 1: 0
        case 2: -1
        case 3: double(in: -10...10)
        default: double(in: -2...2)
        }
    }
}
