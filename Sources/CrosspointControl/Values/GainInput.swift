import CrosspointCore

/// How the person wrote a gain: an absolute level or a relative step.
///
/// - `-6dB`, `+3dB`, `0dB`, `-inf`: decibels (`-inf` is silence);
/// - `0.5`, `-1`, `0`: linear, when the magnitude is at most 1 (unity or less: nothing loud);
/// - `2x`, `-6x`, or any number with `--linear`: linear, written so on purpose;
/// - `3dB+`, `1.5dB-`: a step up or down from the current level, in dB.
///
/// A bare number above 1 in magnitude (`6`, `-6`) is refused: it is far more likely a level
/// in dB missing its unit than a linear gain of +15.6 dB.
package enum GainInput: Equatable {
    case absolute(linear: Double, text: String, unit: Unit)
    case step(decibels: Double, text: String)

    package enum Unit { case decibels, linear }

    package static let syntax = "write 0.5, -6dB or -inf (linear gains above 1 as 2x; steps as 3dB+ or 3dB-)"
    package static let maximumDecibels = Gain.decibels(Mixer.gainRange.upperBound)

    /// Parses a gain as typed; `linear` is the `--linear` flag.
    package static func parse(_ typed: String, linear: Bool = false) throws -> GainInput {
        let text = CommandLineWords.restore(typed)
        let lower = text.lowercased().filter { $0 != " " }
        func number(_ body: Substring) -> Double? {
            guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.e".contains($0)) }),
                  let value = Double(body), value.isFinite else { return nil }
            return value
        }
        if lower.hasSuffix("db+") || lower.hasSuffix("db-") {
            let body = lower.dropLast(3)
            guard let size = number(body), body.first != "-", body.first != "+" else {
                throw CommandError.invalid("'\(text.printable)' is not a step; write the size in dB then + or -: 3dB+, 1.5dB-")
            }
            return .step(decibels: lower.hasSuffix("+") ? size : -size, text: text)
        }
        if lower.hasSuffix("+") || (lower.hasSuffix("-") && lower.count > 1) {
            throw CommandError.invalid(
                "'\(text.printable)' is not a gain; relative steps are in dB with the sign after: 3dB+ or 3dB-")
        }
        if lower == "-inf" || lower == "-infdb" { return .absolute(linear: 0, text: text, unit: .decibels) }
        if lower.hasSuffix("db") {
            guard let db = number(lower.dropLast(2)) else { throw notAGain(text) }
            return .absolute(linear: Gain.linear(decibels: db), text: text, unit: .decibels)
        }
        if lower.hasSuffix("x") {
            guard let value = number(lower.dropLast()) else { throw notAGain(text) }
            return .absolute(linear: value, text: text, unit: .linear)
        }
        guard let value = number(Substring(lower)) else { throw notAGain(text) }
        if abs(value) > 1 && !linear {
            let level = signedDecibels(value)
            let flipped = value < 0 ? ", flipped" : ""
            let db = level.hasPrefix("ø") ? String(level.dropFirst()) : level
            throw CommandError.invalid(
                "\(text.printable) is a linear gain of \(db) dB\(flipped); did you mean \(text.printable)dB? "
                    + "(for the linear gain write \(text.printable)x, or use --linear)")
        }
        return .absolute(linear: value, text: text, unit: .linear)
    }

    private static func notAGain(_ text: String) -> CommandError {
        .invalid("gain: '\(text.printable)' is not a gain; \(syntax)")
    }

    /// The gain to set on `key`, whose gain is `current` now, in range; steps are clamped to
    /// the range (`clamped` says so), absolute gains outside it refused in the unit typed.
    package func resolve(current: Double, key: String) throws -> (gain: Double, clamped: String?) {
        switch self {
        case let .absolute(linear, text, unit):
            guard Mixer.gainRange.contains(linear) else {
                switch unit {
                case .decibels:
                    throw CommandError.invalid(
                        "\(key): \(text.printable) is above the maximum +\(Gain.format(GainInput.maximumDecibels)) dB")
                case .linear:
                    let top = Gain.format(Mixer.gainRange.upperBound)
                    throw CommandError.invalid(
                        "\(key): \(text.printable) is outside the linear range -\(top) to \(top) "
                            + "(+\(Gain.format(GainInput.maximumDecibels)) dB, either polarity)")
                }
            }
            return (linear, nil)
        case let .step(decibels, text):
            guard current != 0 else {
                throw CommandError.invalid(
                    "\(key) is silent (-inf dB): a step of \(text.printable) needs a level to start from; set one, e.g. -20dB")
            }
            let target = Gain.decibels(current) + decibels
            if target > GainInput.maximumDecibels {
                let top = Mixer.gainRange.upperBound
                return (current < 0 ? -top : top, "clamped to the maximum +\(Gain.format(GainInput.maximumDecibels)) dB")
            }
            let magnitude = Gain.linear(decibels: target)
            return (current < 0 ? -magnitude : magnitude, nil)
        }
    }

    /// Whether the person asked for an exact linear value (then any difference is a change);
    /// a level in dB is compared at the 0.1 dB the report shows.
    package var isExact: Bool {
        if case .absolute(_, _, .linear) = self { return true }
        return false
    }
}
