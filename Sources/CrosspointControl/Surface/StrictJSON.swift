#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore

/// Strict JSON through Foundation's decoder, as a `JSONValue` (the API's bodies; SPA-JSON,
/// which reads the node's own files, also takes PipeWire's relaxed syntax).
package struct StrictJSON: Decodable {
    package let value: JSONValue

    private struct Key: CodingKey {
        package let stringValue: String
        package var intValue: Int? { nil }
        package init(stringValue: String) { self.stringValue = stringValue }
        package init?(intValue: Int) { nil }
    }

    package init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            value = .object(try object.allKeys.map { ($0.stringValue, try object.decode(StrictJSON.self, forKey: $0).value) })
        } else if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(StrictJSON.self).value) }
            value = .array(items)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { value = .null }
            else if let b = try? single.decode(Bool.self) { value = .bool(b) }
            else if let n = try? single.decode(Double.self) { value = .number(n) }
            else { value = .string(try single.decode(String.self)) }
        }
    }

    package static func describe(_ error: any Error) -> String {
        if case let DecodingError.dataCorrupted(context) = error {
            return context.debugDescription.printable
        }
        return "unreadable"
    }
}
