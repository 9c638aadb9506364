// The node's own ways to write numbers, join strings, read C strings and make sets (ByteSearch.swift,
// DecimalText.swift): each must give what the standard library's call it replaces gives.

@testable import CrosspointCore
import Testing

@Suite("String bytes")
struct StringBytesTests {
    @Test("Doubles are written as their description")
    func doubles() {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [0, -0.0, 1, -1, 0.5, 0.25, 0.1, 0.3, 0.1 + 0.2, 1e-4, 1e-4.nextDown, 9.999999999999999e-05,
                                1e6, 1e6.nextDown, 999_999.999, 123_456.789, 1e-5, 1e15, 1e16, .infinity, -.infinity, .nan,
                                .pi, 2.5, 0.001, 0.0125, 1.0 / 3]
        for _ in 0..<20_000 {
            let scaled = Double(Int.random(in: 0...2_000_000_000, using: &generator)) / DecimalText.powersOfTen[Int.random(in: 0...12, using: &generator)]
            values += [scaled, scaled.nextUp, scaled.nextDown, -scaled]
            values.append(Double(bitPattern: UInt64.random(in: (1e-5).bitPattern...(2e6).bitPattern, using: &generator)))
            let power = Double(sign: .plus, exponent: Int.random(in: -15...21, using: &generator), significand: 1)
            values += [power, power.nextUp, power.nextDown]
        }
        for value in values {
            #expect(DecimalText.text(value) == "\(value)", "\(value)")
        }
    }

    @Test("Floats are written as their description, and read back as the Double of that text")
    func floats() {
        var values: [Float] = [0, -0.0, 1, 0.5, 0.1, 0.3, 1e-4, Float(1e-4).nextDown, 1e6, Float(1e6).nextDown, 16_777_216,
                               .infinity, .nan, 0.70710677, 3.4028235e38, 1e-45]
        // A stride through every Float from 1e-5 to 2e6 (the edges of the written range and past them).
        var bits = Float(1e-5).bitPattern
        while bits < Float(2e6).bitPattern {
            values.append(Float(bitPattern: bits))
            bits += 997
        }
        for value in values {
            #expect(DecimalText.text(value) == "\(value)", "\(value)")
            #expect(DecimalText.text(-value) == "\(-value)", "\(-value)")
            if value.isFinite {
                #expect(DecimalText.decimal(value) == Double("\(value)"), "\(value)")
            }
        }
    }

    @Test("Joins as joined(separator:) does")
    func joins() {
        for parts in [[], [""], ["a"], ["a", "b"], ["", ""], ["FL", "FR", "MONO"], ["é", "ü", "\u{301}"]] {
            #expect(parts.joinedBytes(separator: ", ") == parts.joined(separator: ", "))
            #expect(parts.joinedBytes() == parts.joined())
            #expect(parts.map { Substring($0) }.joinedBytes(separator: ".") == parts.joined(separator: "."))
        }
    }

    @Test("Reads C strings as String(cString:) does, invalid UTF-8 repaired")
    func cStrings() {
        for bytes: [UInt8] in [[0], Array("node.name".utf8) + [0], [0xC3, 0xA9, 0], [0xFF, 0x41, 0], [0x41, 0, 0x42, 0]] {
            let chars = bytes.map { CChar(bitPattern: $0) }
            chars.withUnsafeBufferPointer { buffer in
                #expect(String(cBytes: buffer.baseAddress!) == String(cString: buffer.baseAddress!))
            }
        }
    }

    @Test("Makes the set Set(_:) makes")
    func sets() {
        #expect([3, 1, 3, 2].elementSet == Set([3, 1, 3, 2]))
        #expect([String]().elementSet == Set<String>())
        #expect(["a", "b", "a"].elementSet == Set(["a", "b"]))
    }

    @Test("Writes integers as String(_:) and interpolation do")
    func integers() {
        let ints: [Int] = [0, 1, -1, 9, 10, -10, 42, 1234567890, Int.max, Int.min, Int.max - 1, Int.min + 1]
        for n in ints {
            #expect(n.decimalText == String(n))
            #expect("[\(n)]" == "[" + String(n) + "]")
        }
        for n: UInt32 in [0, 7, 48_000, .max] { #expect(n.decimalText == String(n)) }
        for n: Int8 in [.min, -1, 0, .max] { #expect(n.decimalText == String(n)) }
        for n: UInt64 in [.max, 10_000_000_000_000_000_000] { #expect("\(n)" == String(n)) }
    }

    @Test("Quotes JSON strings as the scalar-by-scalar quoting did")
    func quotes() {
        func reference(_ s: String) -> String {  // the earlier implementation, by Unicode scalars
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        var everyControl = ""
        for value in UInt32(0)...0x7F { everyControl.unicodeScalars.append(Unicode.Scalar(value)!) }
        for text in ["", "plain", everyControl, "gäme ✓ 🎧", "e\u{301}\r\n\u{7F}", "\u{2028}\u{FEFF}\\\"", "\u{10FFFF}"] {
            var out = "["
            JSONValue.quote(text, into: &out)
            #expect(out == "[" + reference(text), "\(text.debugDescription)")
        }
    }
}
