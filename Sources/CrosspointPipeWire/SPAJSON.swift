import CPipeWire
import CrosspointCore

/// A value of SPA-JSON, PipeWire's relaxed JSON (bare words, `=` or `:`, optional commas),
/// read with libspa's own tokenizer (`spa_json_*`).
public indirect enum SPAJSONValue: Equatable, Sendable, CustomStringConvertible {
    case number(Double)
    case bool(Bool)
    case string(String)
    case array([SPAJSONValue])
    case object([(String, SPAJSONValue)])
    case null
    /// The value of a key that has none (`{ inputs = }`): an error for whoever reads it.
    case missing

    /// Containers nested deeper than this make the text unreadable (and cannot blow the stack).
    static let depthLimit = 32

    /// Parses one value from `text`; nil if `text` holds no value or nests too deep.
    public init?(parsing text: String) {
        var utf8 = Array(text.utf8)
        utf8.append(0)
        let parsed: SPAJSONValue? = utf8.withUnsafeBufferPointer { buffer in
            guard let start = buffer.baseAddress else { return nil }
            return start.withMemoryRebound(to: CChar.self, capacity: buffer.count) { base in
                var iter = spa_json()
                spa_json_init(&iter, base, buffer.count - 1)
                var value: UnsafePointer<CChar>?
                let length = spa_json_next(&iter, &value)
                guard length > 0, let value else { return nil }
                return SPAJSONValue.read(&iter, value, Int(length), depth: 0)
            }
        }
        guard let parsed else { return nil }
        self = parsed
    }

    private static func read(_ iter: inout spa_json, _ value: UnsafePointer<CChar>, _ length: Int, depth: Int) -> SPAJSONValue? {
        let len = Int32(clamping: length)
        if spa_json_is_array(value, len) || spa_json_is_object(value, len) != 0 {
            guard depth < depthLimit else { return nil }
            let isObject = spa_json_is_object(value, len) != 0
            var sub = spa_json()
            spa_json_enter(&iter, &sub)
            var items: [SPAJSONValue] = []
            var pairs: [(String, SPAJSONValue)] = []
            var key: String?
            while true {
                var child: UnsafePointer<CChar>?
                let childLength = spa_json_next(&sub, &child)
                guard childLength > 0, let child else { break }
                guard let item = read(&sub, child, Int(childLength), depth: depth + 1) else { return nil }
                if isObject {
                    if let k = key {
                        pairs.append((k, item))
                        key = nil
                    } else {
                        key = item.text
                    }
                } else {
                    items.append(item)
                }
            }
            if let key { pairs.append((key, .missing)) }
            return isObject ? .object(pairs) : .array(items)
        }
        if spa_json_is_null(value, len) { return .null }
        if spa_json_is_bool(value, len) { return .bool(spa_json_is_true(value, len)) }
        let raw = String(decoding: UnsafeRawBufferPointer(start: value, count: length), as: UTF8.self)
        if spa_json_is_float(value, len), let number = Double(raw) { return .number(number) }
        var decoded = [CChar](repeating: 0, count: length + 1)
        _ = spa_json_parse_stringn(value, len, &decoded, Int32(clamping: length + 1))
        let bytes = decoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return .string(String(decoding: bytes, as: UTF8.self))
    }

    /// The text of a string or bare word, or of a number written as one.
    public var text: String {
        switch self {
        case let .string(s): s
        case let .number(n): Gain.format(n)
        case let .bool(b): "\(b)"
        default: description
        }
    }

    public var description: String {
        switch self {
        case let .number(n): Gain.format(n)
        case let .bool(b): "\(b)"
        case let .string(s): "\"\(s)\""
        case let .array(items): "[ " + items.map(\.description).joinedBytes(separator: " ") + " ]"
        case let .object(pairs): "{ " + pairs.map { "\($0.0) = \($0.1)" }.joinedBytes(separator: " ") + " }"
        case .null: "null"
        case .missing: "(nothing)"
        }
    }

    public static func == (a: SPAJSONValue, b: SPAJSONValue) -> Bool { a.description == b.description }
}

extension JSONValue {
    /// Reads JSON text with libspa's parser (which also takes SPA-JSON's relaxed forms); nil if
    /// the text holds no value, a key has no value, or it nests deeper than 32.
    public init?(parsing text: String) {
        guard let value = SPAJSONValue(parsing: text)?.json else { return nil }
        self = value
    }
}

extension SPAJSONValue {
    /// As plain JSON; nil if a key has no value anywhere inside.
    var json: JSONValue? {
        switch self {
        case let .number(n): return .number(n)
        case let .bool(b): return .bool(b)
        case let .string(s): return .string(s)
        case .null: return .null
        case .missing: return nil
        case let .array(items):
            var result: [JSONValue] = []
            for item in items {
                guard let value = item.json else { return nil }
                result.append(value)
            }
            return .array(result)
        case let .object(pairs):
            var result: [(String, JSONValue)] = []
            for (key, item) in pairs {
                guard let value = item.json else { return nil }
                result.append((key, value))
            }
            return .object(result)
        }
    }
}
