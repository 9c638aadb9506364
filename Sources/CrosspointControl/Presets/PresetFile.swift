#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore

/// A preset file: decoded (its keys named in any error) and checked before it is applied.
package enum PresetFile {
    /// Checks a preset's lists and shape, naming what is wrong (a list's length, with the file).
    package static func check(_ preset: Preset, source: String) throws {
        do {
            try preset.validateShape()
        } catch let .shapeMismatch(text) {
            throw CommandError.file(source, text)
        } catch {
            throw CommandError.from(error, nil)
        }
    }

    /// Decodes a preset as Core reads one (`Preset(json:)`), naming the key of any error
    /// (`matrix[1][0]: must be a number`), and refusing keys it does not know (a typo would
    /// otherwise be "nothing to change"); the keys that describe the node are left out.
    package static func decode(_ text: String, source: String) throws -> Preset {
        let json: JSONValue
        do {
            json = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        } catch {
            throw CommandError.file(source, "not a Crosspoint preset: not valid JSON")
        }
        if case let .object(members) = json {
            let known = NodeDocument.presetKeys.union(NodeDocument.descriptiveKeys)
            let unknown = members.map(\.0).filter { !known.contains($0) }.sorted()
            if let first = unknown.first {
                let guess = known.min { distance(first, $0) < distance(first, $1) }.flatMap { distance(first, $0) <= 3 ? $0 : nil }
                throw CommandError.file(source, "not a Crosspoint preset: unknown key\(unknown.count == 1 ? "" : "s") "
                    + unknown.map { "'\($0.printable)'" }.joined(separator: ", ")
                    + (guess.map { " (did you mean '\($0)'?)" } ?? "")
                    + "; a preset's keys are " + NodeDocument.presetKeys.sorted().joined(separator: ", "))
            }
        }
        do {
            guard case let .object(members) = json else { return try Preset(json: json) }
            return try Preset(json: .object(members.filter { !NodeDocument.descriptiveKeys.contains($0.0) }))
        } catch {
            throw CommandError.file(source, "not a Crosspoint preset: \(error.description.printable)")
        }
    }

    /// Edit distance, for "did you mean".
    package static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in 1...b.count {
                let old = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = old
            }
        }
        return row[b.count]
    }
}
