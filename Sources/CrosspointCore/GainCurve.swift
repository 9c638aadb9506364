#if canImport(Glibc)
import Glibc
#endif

/// How a gain moves from one value to another over seconds, as a scene's recall or morph moves
/// it (issue 31): the curve gains want, not a straight line between two linear values.
///
/// - Both values non-zero and of one sign: in dB, equal steps of dB in equal time (`a * (b/a)^t`:
///   a fade from -40 dB to 0 dB spends as long in each 10 dB, where a linear one would stay
///   near silence for a tenth of its time and then rise all at once).
/// - One side zero (a cross-point fading in or out, a muted gain): equal power, `b * sin(t π/2)`
///   in and `a * cos(t π/2)` out, so that two paths crossfading between scenes keep their sum's
///   power (a fade to zero in dB would never arrive).
/// - The sign flips (polarity): out to zero over the first half, in from zero over the second,
///   equal power each.
///
/// Exactly `a` at `t <= 0` and `b` at `t >= 1` (a recall ends on the scene's own values), and
/// monotonic in `t` (never past either end, never back). Pure and allocation-free.
public enum GainCurve {
    public static func gain(from a: Float, to b: Float, at t: Double) -> Float {
        guard t > 0 else { return a }
        guard t < 1 else { return b }
        if a == b { return a }
        let x = Double(a), y = Double(b)
        if x == 0 { return Float(y * sin(t * .pi / 2)) }
        if y == 0 { return Float(x * cos(t * .pi / 2)) }
        if (x < 0) != (y < 0) {
            return t < 0.5 ? Float(x * cos(t * .pi)) : Float(y * sin((t - 0.5) * .pi))
        }
        let moved = x * exp(t * log(y / x))
        // Rounding may leave the last steps a hair past the end: hold it between the two.
        return Float(min(max(moved, min(x, y)), max(x, y)))
    }
}
