/// A strict check of JSON text (RFC 8259), for what must be one complete JSON document: the
/// node's state file. libspa's parser, which reads it (`JSONValue(parsing:)`), is relaxed by
/// design (PipeWire's configuration syntax: bare words, no commas needed, and a text that ends
/// early closes what is open), so a state file cut short loaded silently as less than was
/// saved. This check runs first and says why the bytes are not JSON, naming the byte (counted
/// from 0), or returns nil.
///
/// One value, only whitespace (space, tab, line feed, carriage return) around it; strings
/// closed, with the escapes JSON has (`\uXXXX` escapes of lone surrogates are taken, as the
/// grammar does), no control character inside, UTF-8; numbers as the grammar writes them (no
/// leading zero, a digit after `-`, `.` and the exponent); brackets balanced; nothing after the
/// value. Iterative: nesting deeper than `maximumDepth` is refused, so no input costs more than
/// one pass and a stack of `maximumDepth` entries. Plain Swift, no Foundation, no trap on any
/// input (it runs inside the user's audio daemon).
public enum JSONCheck {
    /// The deepest nesting taken (a state file is 4 deep; libspa's parser stops at 32).
    public static let maximumDepth = 64

    /// Why `data` is not one complete JSON text; nil if it is.
    public static func problem(_ data: [UInt8], maximumDepth: Int = JSONCheck.maximumDepth) -> String? {
        enum Expect { case value, valueOrClose, key, keyOrClose, colon, commaOrClose, end }
        // The open objects and arrays: where each was opened, and which it is.
        var opened: [(at: Int, isObject: Bool)] = []
        opened.reserveCapacity(min(max(maximumDepth, 0), 256))
        var expect = Expect.value
        var k = 0
        let n = data.count
        while true {
            while k < n, isWhitespace(data[k]) { k += 1 }
            guard k < n else {
                switch expect {
                case .end: return nil
                case .value where opened.isEmpty: return "there is no value (the text is empty or only whitespace)"
                default:
                    guard let open = opened.last else { return "the text ends early at byte \(n)" }
                    let what = open.isObject ? "an object" : "an array"
                    return "the text ends inside \(what) (opened at byte \(open.at)) at byte \(n)"
                }
            }
            let byte = data[k]
            switch expect {
            case .end:
                return "text after the JSON value at byte \(k)"
            case .colon:
                guard byte == UInt8(ascii: ":") else { return unexpected(byte, at: k, "where ':' belongs after a key") }
                k += 1
                expect = .value
            case .commaOrClose:
                guard let open = opened.last else { return "text after the JSON value at byte \(k)" }
                if byte == UInt8(ascii: ",") {
                    k += 1
                    expect = open.isObject ? .key : .value
                } else if byte == (open.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    _ = opened.popLast()
                    k += 1
                    expect = opened.isEmpty ? .end : .commaOrClose
                } else {
                    return unexpected(byte, at: k, open.isObject ? "where ',' or '}' belongs" : "where ',' or ']' belongs")
                }
            case .key, .keyOrClose:
                if byte == UInt8(ascii: "}"), expect == .keyOrClose {
                    _ = opened.popLast()
                    k += 1
                    expect = opened.isEmpty ? .end : .commaOrClose
                } else if byte == UInt8(ascii: "\"") {
                    switch string(data, at: k) {
                    case let .end(next): k = next
                    case let .problem(problem): return problem
                    }
                    expect = .colon
                } else {
                    return unexpected(byte, at: k, expect == .keyOrClose ? "where a key or '}' belongs" : "where a key belongs")
                }
            case .value, .valueOrClose:
                if byte == UInt8(ascii: "]"), expect == .valueOrClose {
                    _ = opened.popLast()
                    k += 1
                    expect = opened.isEmpty ? .end : .commaOrClose
                    continue
                }
                let scanned: Scan
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard opened.count < maximumDepth else { return "it nests deeper than \(maximumDepth) at byte \(k)" }
                    let isObject = byte == UInt8(ascii: "{")
                    opened.append((k, isObject))
                    k += 1
                    expect = isObject ? .keyOrClose : .valueOrClose
                    continue
                case UInt8(ascii: "\""): scanned = string(data, at: k)
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): scanned = number(data, at: k)
                case UInt8(ascii: "t"): scanned = word("true", data, at: k)
                case UInt8(ascii: "f"): scanned = word("false", data, at: k)
                case UInt8(ascii: "n"): scanned = word("null", data, at: k)
                default:
                    return unexpected(byte, at: k, expect == .valueOrClose ? "where a value or ']' belongs" : "where a value belongs")
                }
                switch scanned {
                case let .end(next): k = next
                case let .problem(problem): return problem
                }
                expect = opened.isEmpty ? .end : .commaOrClose
            }
        }
    }

    /// The length of the UTF-8 sequence that starts at `data[k]` (1 for ASCII), or nil if the
    /// bytes there are not UTF-8: a lead byte that cannot start one, a sequence cut short or
    /// with a byte that does not continue it, an overlong form, a surrogate, above U+10FFFF.
    package static func utf8Length(_ data: [UInt8], at k: Int) -> Int? {
        guard k >= 0, k < data.count else { return nil }
        let byte = data[k]
        if byte < 0x80 { return 1 }
        let length = byte >= 0xC2 && byte <= 0xDF ? 2 : byte >= 0xE0 && byte <= 0xEF ? 3 : byte >= 0xF0 && byte <= 0xF4 ? 4 : 0
        guard length > 0, length <= data.count - k,
              data[(k + 1)..<(k + length)].allSatisfy({ $0 & 0xC0 == 0x80 }) else { return nil }
        let second = data[k + 1]
        let valid = switch byte {
        case 0xE0: second >= 0xA0
        case 0xED: second < 0xA0
        case 0xF0: second >= 0x90
        case 0xF4: second < 0x90
        default: true
        }
        return valid ? length : nil
    }

    private enum Scan {
        /// The byte after the token.
        case end(Int)
        case problem(String)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    /// A byte as the log shows it: `'}'` when printable ASCII, else `0xNN`.
    private static func show(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private static func unexpected(_ byte: UInt8, at k: Int, _ context: String) -> String {
        "unexpected \(show(byte)) at byte \(k), \(context)"
    }

    /// A string from its opening quote at `start`.
    private static func string(_ data: [UInt8], at start: Int) -> Scan {
        let n = data.count
        let cut = Scan.problem("the text ends inside a string (opened at byte \(start)) at byte \(n)")
        var k = start + 1
        while k < n {
            let byte = data[k]
            switch byte {
            case UInt8(ascii: "\""):
                return .end(k + 1)
            case UInt8(ascii: "\\"):
                guard k + 1 < n else { return cut }
                let escaped = data[k + 1]
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    k += 2
                case UInt8(ascii: "u"):
                    for h in 0..<4 {
                        let at = k + 2 + h
                        guard at < n else { return cut }
                        guard isHexDigit(data[at]) else {
                            return .problem("a \\u escape without four hex digits at byte \(k) (\(show(data[at])) at byte \(at))")
                        }
                    }
                    k += 6
                default:
                    return .problem("an escape that is not JSON at byte \(k) (a backslash before \(show(escaped)))")
                }
            case 0x00..<0x20:
                return .problem("a control character (0x\(String(byte, radix: 16))) inside a string at byte \(k)")
            default:
                guard let length = utf8Length(data, at: k) else {
                    // A sequence cut by the end of the text is a string cut short.
                    return k + 4 > n && isTruncatedUTF8(data, at: k) ? cut : .problem("bytes that are not UTF-8 at byte \(k)")
                }
                k += length
            }
        }
        return cut
    }

    /// Whether the bytes from `k` to the end start a UTF-8 sequence the end cut short.
    private static func isTruncatedUTF8(_ data: [UInt8], at k: Int) -> Bool {
        guard k < data.count, data[k] >= 0xC2, data[k] <= 0xF4 else { return false }
        let length = data[k] <= 0xDF ? 2 : data[k] <= 0xEF ? 3 : 4
        return data.count - k < length && data[(k + 1)...].allSatisfy { $0 & 0xC0 == 0x80 }
    }

    /// A number from its first byte (`-` or a digit) at `start`:
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private static func number(_ data: [UInt8], at start: Int) -> Scan {
        let n = data.count
        let cut = Scan.problem("the text ends inside a number (begun at byte \(start)) at byte \(n)")
        var k = start
        if data[k] == UInt8(ascii: "-") { k += 1 }
        guard k < n else { return cut }
        guard isDigit(data[k]) else { return .problem("a number with no digit after '-' at byte \(start)") }
        if data[k] == UInt8(ascii: "0") {
            k += 1
            if k < n, isDigit(data[k]) { return .problem("a number with a leading zero at byte \(start)") }
        } else {
            while k < n, isDigit(data[k]) { k += 1 }
        }
        if k < n, data[k] == UInt8(ascii: ".") {
            k += 1
            guard k < n else { return cut }
            guard isDigit(data[k]) else { return .problem("a number with no digit after '.' at byte \(start)") }
            while k < n, isDigit(data[k]) { k += 1 }
        }
        if k < n, data[k] == UInt8(ascii: "e") || data[k] == UInt8(ascii: "E") {
            k += 1
            if k < n, data[k] == UInt8(ascii: "+") || data[k] == UInt8(ascii: "-") { k += 1 }
            guard k < n else { return cut }
            guard isDigit(data[k]) else { return .problem("a number with no digit in its exponent at byte \(start)") }
            while k < n, isDigit(data[k]) { k += 1 }
        }
        return .end(k)
    }

    /// `true`, `false` or `null` at `start` (whose first byte matched).
    private static func word(_ word: String, _ data: [UInt8], at start: Int) -> Scan {
        let n = data.count
        var k = start
        for expected in word.utf8 {
            guard k < n else { return .problem("the text ends inside '\(word)' (begun at byte \(start)) at byte \(n)") }
            guard data[k] == expected else { return .problem("a word that is not JSON at byte \(start) (JSON has true, false and null)") }
            k += 1
        }
        return .end(k)
    }
}
