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

    package init(from decoder: any Decoder) throws { value = try JSONValue(from: decoder) }

    package static func describe(_ error: any Error) -> String {
        if case let DecodingError.dataCorrupted(context) = error {
            return context.debugDescription.printable
        }
        return "unreadable"
    }
}
