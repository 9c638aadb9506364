// Gains as users type and read them: linear numbers and decibels.

import CrosspointCore
import Testing

@Suite("Gain")
struct GainTests {
    @Test("Parses linear gains", arguments: [
        ("0.5", 0.5), ("1", 1), ("0", 0), ("-1", -1), ("-0.25", -0.25), ("10", 10), (" 0.75 ", 0.75), ("+2", 2),
    ])
    func parsesLinearGains(text: String, expected: Double) throws {
        #expect(try Gain.parse(text) == expected)
    }

    @Test("Parses decibels, with or without a space, in any case", arguments: [
        ("-6dB", -6.0), ("-6 dB", -6), ("-6 db", -6), ("-6DB", -6), ("-6Db", -6), ("+3dB", 3), ("3dB", 3),
        ("0dB", 0), ("0 dB", 0), ("20dB", 20), ("-20 dB", -20), ("-3.5dB", -3.5), (" -12 dB ", -12),
    ])
    func parsesDecibels(text: String, decibels: Double) throws {
        let gain = try Gain.parse(text)
        #expect(gain == Gain.linear(decibels: decibels))
        #expect(abs(Gain.decibels(gain) - decibels) < 1e-12)
    }

    @Test("Decibels convert to the expected linear values")
    func decibelValues() throws {
        #expect(abs(try Gain.parse("-6dB") - 0.501187233627) < 1e-9)
        #expect(abs(try Gain.parse("+3dB") - 1.412537544623) < 1e-9)
        #expect(abs(try Gain.parse("20dB") - 10) < 1e-12)
        #expect(abs(try Gain.parse("-20dB") - 0.1) < 1e-12)
        #expect(try Gain.parse("0dB") == 1)
    }

    @Test("-inf is silence, in dB or not", arguments: ["-inf", "-infdB", "-inf dB", "-INF", " -inf ", "-Inf db"])
    func minusInfinityIsSilence(text: String) throws {
        #expect(try Gain.parse(text) == 0)
    }

    @Test("Garbage throws invalidValue naming the text", arguments: [
        "", "   ", "abc", "dB", "6dBx", "nan", "inf", "+inf", "infdB", "--6dB", "1e999", "0.5 0.5", "6 d B", "NaN dB",
        "0,5", "½", "-6 dB dB",
    ])
    func garbageThrows(text: String) {
        let error = expectCrosspointError(mentioning: ["gain", "'\(text)'"]) { _ = try Gain.parse(text) }
        #expect(error == .invalidValue(key: "gain", reason: "'\(text)' is not a gain; write 0.5, -6dB or -inf"))
    }

    @Test("Linear gains convert to decibels, the sign kept apart")
    func linearToDecibels() {
        #expect(Gain.decibels(1) == 0)
        #expect(Gain.decibels(10) == 20)
        #expect(Gain.decibels(0.1) == -20)
        #expect(Gain.decibels(0) == -.infinity)
        #expect(Gain.decibels(-1) == 0)
        #expect(Gain.decibels(-0.5) == Gain.decibels(0.5))
        #expect(Gain.linear(decibels: 0) == 1)
        #expect(Gain.linear(decibels: -20) == 0.1)
        for db in stride(from: -60.0, through: 20, by: 0.5) {
            #expect(abs(Gain.decibels(Gain.linear(decibels: db)) - db) < 1e-9)
        }
    }

    @Test("Milliseconds print to the microsecond", arguments: [
        (100.02083333333333, "100.021"), (12.5, "12.5"), (0, "0"), (1000, "1000"), (0.0004, "0"), (1.0006, "1.001"),
    ])
    func formatsMilliseconds(_ value: Double, _ text: String) {
        #expect(Gain.formatMilliseconds(value) == text)
    }

    @Test("Formats decibels for a table cell", arguments: [
        (1.0, "0.0"), (0.5, "-6.0"), (2, "6.0"), (0, "-inf"), (-1, "ø0.0"), (-0.5, "ø-6.0"), (-2, "ø6.0"), (10, "20.0"),
        (0.1, "-20.0"), (0.3, "-10.5"), (1.412537544623, "3.0"), (0.00001, "-100.0"), (0.999, "0.0"), (1.001, "0.0"),
        (-0.999, "ø0.0"), (0.9, "-0.9"), (1.1, "0.8"),
    ])
    func formatsDecibels(linear: Double, text: String) {
        #expect(Gain.formatDecibels(linear) == text)
    }

    @Test("Gains within 0.05 dB of unity format as 0.0, never -0.0")
    func nearUnityIsNeverMinusZero() {
        var zeros = 0
        for k in -200...200 {
            let linear = 1 + Double(k) * 0.0001
            let text = Gain.formatDecibels(linear)
            #expect(text != "-0.0" && text != "ø-0.0", "\(linear)")
            if abs(Gain.decibels(linear)) < 0.049 {
                #expect(text == "0.0", "\(linear)")
                zeros += 1
            }
        }
        #expect(zeros > 100)
    }

    @Test("Formatted decibels parse back to within a tenth of a dB")
    func formattedDecibelsParseBack() throws {
        for linear in [0.5, 0.25, 2, 1.5, 0.01, 7.5, 1, 0.12345] {
            let text = Gain.formatDecibels(linear)
            let back = try Gain.parse(text + "dB")
            #expect(abs(Gain.decibels(back) - Gain.decibels(linear)) <= 0.05 + 1e-9, "\(linear) -> \(text)")
        }
        #expect(try Gain.parse(Gain.formatDecibels(0)) == 0)
    }

    @Test("Formats plain numbers without trailing noise", arguments: [
        (1.0, "1"), (0.5, "0.5"), (-10, "-10"), (0, "0"), (0.1, "0.1"), (1000, "1000"), (-0.25, "-0.25"),
    ])
    func formatsNumbers(value: Double, text: String) {
        #expect(Gain.format(value) == text)
    }

    // -2^63 is a whole number whose absolute value is no Int: `abs` trapped on it, inside the
    // daemon, for `"inputs" -9.223372e18` in a set-param (found by scripts/fuzz).
    @Test("Formats the extremes of Int and Double without trapping", arguments: [
        (-9.223372036854775808e18, "-9.223372e+18"), (9.223372036854775807e18, "9.223372e+18"),
        (-1e18, "-1e+18"), (999_999_999_999_999_999, "1e+18"), (-Double.greatestFiniteMagnitude, "-1.7976931348623157e+308"),
        (Double.infinity, "inf"), (-Double.infinity, "-inf"), (Double.nan, "nan"),
    ])
    func formatsExtremes(value: Double, text: String) {
        #expect(Gain.format(value) == text)
    }
}
