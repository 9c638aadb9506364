/// A JSON value, and the one way Crosspoint writes JSON: presets, `show --json`, the node's
/// state file. Pretty-printed with two spaces; a list or record of plain values stays on one
/// line (a matrix row reads as a row, a link as a link); keys keep their order. Plain Swift, no Foundation: the module
/// in the daemon writes its state with it. (Reading is SPA-JSON's parser, in CrosspointPipeWire; the state file is checked
/// strictly first, `JSONCheck`.)
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.number(x), .number(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The value of `key` in an object.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// The text, pretty-printed, ending in a newline.
    public var text: String {
        var out = ""
        write(to: &out, indent: 0)
        return out + "\n"
    }

    /// The text on one line (for one JSON object per line, as `--json` streams print).
    public var compactText: String {
        var out = ""
        write(to: &out, indent: nil)
        return out
    }

    private var isPlain: Bool {
        switch self {
        case .array, .object: false
        default: true
        }
    }

    private func write(to out: inout String, indent: Int?) {
        switch self {
        case .null: out += "null"
        case let .bool(b): out += b ? "true" : "false"
        case let .number(n): out += JSONValue.format(n)
        case let .string(s): JSONValue.quote(s, into: &out)
        case let .array(items):
            if items.isEmpty { out += "[]"; return }
            if indent == nil || items.allSatisfy(\.isPlain) {
                out += "["
                for (k, item) in items.enumerated() {
                    if k > 0 { out += indent == nil ? "," : ", " }
                    item.write(to: &out, indent: indent)
                }
                out += "]"
            } else {
                let inner = indent! + 1
                out += "["
                for (k, item) in items.enumerated() {
                    out += (k > 0 ? ",\n" : "\n") + String(repeating: "  ", count: inner)
                    item.write(to: &out, indent: inner)
                }
                out += "\n" + String(repeating: "  ", count: indent!) + "]"
            }
        case let .object(pairs):
            if pairs.isEmpty { out += "{}"; return }
            if indent != nil && pairs.allSatisfy(\.1.isPlain) {  // a record of plain values: one line
                out += "{"
                for (k, (key, value)) in pairs.enumerated() {
                    if k > 0 { out += ", " }
                    JSONValue.quote(key, into: &out)
                    out += ": "
                    value.write(to: &out, indent: indent)
                }
                out += "}"
                return
            }
            out += "{"
            for (k, (key, value)) in pairs.enumerated() {
                if let indent {
                    out += (k > 0 ? ",\n" : "\n") + String(repeating: "  ", count: indent + 1)
                } else if k > 0 {
                    out += ","
                }
                JSONValue.quote(key, into: &out)
                out += indent == nil ? ":" : ": "
                value.write(to: &out, indent: indent.map { $0 + 1 })
            }
            if let indent { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    /// Whole numbers without a fraction, others as Swift's shortest round-trip decimal;
    /// NaN and infinities (never valid values here) as null.
    static func format(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if let whole = Int(exactly: n), whole.magnitude < 1 << 53 { return whole.decimalText }  // magnitude: abs(Int.min) traps
        return DecimalText.text(n)
    }

    /// The string quoted and escaped, byte by byte: only ASCII is escaped, every other scalar's
    /// UTF-8 is copied as it is (not through `unicodeScalars.append`, whose code sits on a
    /// block of the standard library's big code section that the node would otherwise not touch).
    static func quote(_ s: String, into out: inout String) {
        let backslash = UInt8(ascii: "\\"), hex = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        bytes.reserveCapacity(s.utf8.count + 2)
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [backslash, UInt8(ascii: "\"")]
            case backslash: bytes += [backslash, backslash]
            case UInt8(ascii: "\n"): bytes += [backslash, UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): bytes += [backslash, UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): bytes += [backslash, UInt8(ascii: "t")]
            case 0..<0x20, 0x7F:
                bytes += [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        out += String(decoding: bytes, as: UTF8.self)
    }
}

// MARK: Codable: JSON through Swift's coders (Foundation's JSONEncoder and JSONDecoder, in the command line)

extension JSONValue: Codable {
    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Any JSON value; an object's members in the order the decoder lists them.
    public init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            self = .object(try object.allKeys.map { ($0.stringValue, try object.decode(JSONValue.self, forKey: $0)) })
        } else if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(JSONValue.self)) }
            self = .array(items)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { self = .null }
            else if let b = try? single.decode(Bool.self) { self = .bool(b) }
            else if let n = try? single.decode(Double.self) { self = .number(n) }
            else { self = .string(try single.decode(String.self)) }
        }
    }

    /// Whole numbers as integers and NaN and infinities as null, as `text` writes them.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case let .object(pairs):
            var c = encoder.container(keyedBy: Key.self)
            for (key, value) in pairs { try c.encode(value, forKey: Key(stringValue: key)) }
        case let .array(items):
            var c = encoder.unkeyedContainer()
            for item in items { try c.encode(item) }
        default:
            var c = encoder.singleValueContainer()
            switch self {
            case let .bool(b): try c.encode(b)
            case let .number(n) where !n.isFinite: try c.encodeNil()
            case let .number(n):
                if let whole = Int(exactly: n), whole.magnitude < 1 << 53 { try c.encode(whole) } else { try c.encode(n) }
            case let .string(s): try c.encode(s)
            default: try c.encodeNil()
            }
        }
    }
}

// MARK: Reading values out of JSON, each error naming the key

extension JSONValue {
    /// The members of an object; any key not in `known` is refused (a typo must not pass
    /// silently as "nothing to change").
    public func members(of what: String, known: [String]) throws(CrosspointError) -> [String: JSONValue] {
        guard case let .object(pairs) = self else {
            throw .invalidValue(key: what, reason: "is not a JSON object { \"key\": value, ... }")
        }
        var result: [String: JSONValue] = [:]
        for (key, value) in pairs {
            guard known.contains(key) else {
                throw .invalidValue(key: key, reason: "is not a key of a \(what) (known: \(known.joinedBytes(separator: ", ")))")
            }
            guard result.updateValue(value, forKey: key) == nil else {
                throw .invalidValue(key: key, reason: "appears twice in the \(what)")
            }
        }
        return result
    }

    public func string(_ key: String) throws(CrosspointError) -> String {
        guard case let .string(s) = self else { throw .invalidValue(key: key, reason: "must be a string, got \(compactText)") }
        return s
    }

    public func double(_ key: String) throws(CrosspointError) -> Double {
        guard case let .number(n) = self, n.isFinite else { throw .invalidValue(key: key, reason: "must be a number, got \(compactText)") }
        return n
    }

    /// A whole number, checked (no trap on 1e300).
    public func int(_ key: String) throws(CrosspointError) -> Int {
        guard case let .number(n) = self, let i = Int(exactly: n) else {
            throw .invalidValue(key: key, reason: "must be a whole number, got \(compactText)")
        }
        return i
    }

    public func bool(_ key: String) throws(CrosspointError) -> Bool {
        guard case let .bool(b) = self else { throw .invalidValue(key: key, reason: "must be true or false, got \(compactText)") }
        return b
    }

    /// A list of at most `limit` items, each read by `item`.
    public func list<T>(_ key: String, limit: Int, _ item: (JSONValue, String) throws(CrosspointError) -> T) throws(CrosspointError) -> [T] {
        guard case let .array(items) = self else { throw .invalidValue(key: key, reason: "must be a list [ ... ], got \(compactText)") }
        guard items.count <= limit else { throw .invalidValue(key: key, reason: "has \(items.count) entries, more than \(limit)") }
        var result: [T] = []
        result.reserveCapacity(items.count)
        for (k, value) in items.enumerated() { result.append(try item(value, "\(key)[\(k)]")) }
        return result
    }
}
