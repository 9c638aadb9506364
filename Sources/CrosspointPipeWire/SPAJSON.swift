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

    /// Parses one value from `text`; nil if `text` holds no value.
    public init?(parsing text: String) {
        var utf8 = Array(text.utf8)
        utf8.append(0)
        let parsed: SPAJSONValue? = utf8.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { base in
                var iter = spa_json()
                spa_json_init(&iter, base, buffer.count - 1)
                var value: UnsafePointer<CChar>?
                let length = spa_json_next(&iter, &value)
                guard length > 0, let value else { return nil }
                return SPAJSONValue.read(&iter, value, Int(length))
            }
        }
        guard let parsed else { return nil }
        self = parsed
    }

    private static func read(_ iter: inout spa_json, _ value: UnsafePointer<CChar>, _ length: Int) -> SPAJSONValue {
        let len = Int32(length)
        if spa_json_is_array(value, len) || spa_json_is_object(value, len) != 0 {
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
                let item = read(&sub, child, Int(childLength))
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
            return isObject ? .object(pairs) : .array(items)
        }
        if spa_json_is_null(value, len) { return .null }
        if spa_json_is_bool(value, len) { return .bool(spa_json_is_true(value, len)) }
        let raw = String(decoding: UnsafeRawBufferPointer(start: value, count: length), as: UTF8.self)
        if spa_json_is_float(value, len), let number = Double(raw) { return .number(number) }
        var decoded = [CChar](repeating: 0, count: length + 1)
        _ = spa_json_parse_stringn(value, len, &decoded, Int32(length + 1))
        return .string(String(cString: decoded))
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
        case let .array(items): "[ " + items.map(\.description).joined(separator: " ") + " ]"
        case let .object(pairs): "{ " + pairs.map { "\($0.0) = \($0.1)" }.joined(separator: " ") + " }"
        case .null: "null"
        }
    }

    public static func == (a: SPAJSONValue, b: SPAJSONValue) -> Bool { a.description == b.description }
}
