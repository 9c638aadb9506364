#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore

/// JSON for people and scripts, in the one style Crosspoint writes (`JSONValue.text`, as the
/// node's state file): keys sorted, every list of plain values (a matrix row, a list of
/// channel names) on one line.
package enum JSONText {
    package static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let compact = String(decoding: try encoder.encode(value), as: UTF8.self)
        guard let json = JSONValue(parsing: compact) else { throw CommandError.invalid("internal error: unreadable JSON") }
        return json.text
    }
}
