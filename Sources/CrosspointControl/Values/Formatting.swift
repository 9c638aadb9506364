// How values and names are written in what the commands print and the API answers.

import CrosspointCore

// MARK: Numbers

/// A gain in dB as the reports print it: `+3.0`, `0.0`, `-6.0`, `-inf`, `ø-6.0` when the
/// polarity is flipped; `places` decimals.
package func signedDecibels(_ linear: Double, places: Int = 1) -> String {
    if linear == 0 { return "-inf" }
    guard linear.isFinite else { return linear.isNaN ? "nan" : "+inf" }
    let db = Gain.decibels(linear)
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    guard let units = Int(exactly: (abs(db) * scale).rounded()) else { return "\(db)" }
    var digits = String(units)
    if places > 0 {
        if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
        digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
    }
    let sign = units == 0 ? "" : db < 0 ? "-" : "+"
    return (linear < 0 ? "ø" : "") + sign + digits
}

/// A gain as a decimal that reads back as the same Float (`0.3`, not `0.30000001192092896`).
package func decimal(_ value: Float) -> Double { Preset.decimal(value) }

/// `1 input`, `2 inputs`.
package func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

// MARK: Text

extension String {
    /// The text with every control or invisible formatting character written as an escape
    /// (`\x1b`, `\u{202e}`), so that a name another client chose cannot move the cursor,
    /// clear the screen, start a new line or reorder what follows when printed.
    package var printable: String {
        var out = ""
        for scalar in unicodeScalars {
            let category = scalar.properties.generalCategory
            let hidden = category == .control || category == .lineSeparator || category == .paragraphSeparator
                || (category == .format && scalar.value != 0x200C && scalar.value != 0x200D)
            guard hidden else {
                out.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            out += scalar.value < 0x100 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
        }
        return out
    }

    /// Pads to `width` characters, on the left (numbers) or on the right (names).
    package func padded(_ width: Int, right: Bool = false) -> String {
        let missing = max(0, width - count)
        return right ? self + String(repeating: " ", count: missing) : String(repeating: " ", count: missing) + self
    }

    /// Without the spaces at its end.
    package func trimmingTrailingSpaces() -> String {
        var s = Substring(self)
        while s.last == " " { s.removeLast() }
        return String(s)
    }

    /// Without the spaces at either end.
    package func trimmingSpaces() -> String { String(Substring(self).trimmingSpaces()) }
}
