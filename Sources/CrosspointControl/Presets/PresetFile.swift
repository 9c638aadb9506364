#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore

/// A preset file: decoded (its keys named in any error) and checked before it is applied.
package enum PresetFile {
    /// Checks a preset's lists and shape, naming what is wrong.
    package static func check(_ preset: Preset, source: String) throws {
        // The lists' lengths, said with their nouns (the core's check says "1 inputs").
        for (key, count, expected, noun) in [
            ("input.position", preset.inputChannels.count, preset.inputs, "input"),
            ("output.position", preset.outputChannels.count, preset.outputs, "output"),
            ("gain.in", preset.inputGains.count, preset.inputs, "input"), ("mute.in", preset.inputMutes.count, preset.inputs, "input"),
            ("gain.out", preset.outputGains.count, preset.outputs, "output"),
            ("mute.out", preset.outputMutes.count, preset.outputs, "output"), ("matrix", preset.matrix.count, preset.inputs, "input"),
        ] where preset.format == Preset.formatTag && count != expected && Mixer.channelLimit.contains(expected) {
            throw CommandError.file(source, "\(key) has \(counted(count, "entry").replacing("entrys", with: "entries")) "
                + "but the preset has \(counted(expected, noun))")
        }
        do {
            try preset.validateShape()
        } catch {
            throw CommandError.from(error, nil)
        }
    }

    /// Decodes a preset, naming the key of any error (`matrix[1][0]: expected a number`), and
    /// refusing keys it does not know (a typo would otherwise be "nothing to change").
    package static func decode(_ text: String, source: String) throws -> Preset {
        let data = Data(text.utf8)
        if let object = try? JSONDecoder().decode([String: AnyJSON].self, from: data) {
            let known = NodeDocument.presetKeys.union(NodeDocument.descriptiveKeys)
            let unknown = object.keys.filter { !known.contains($0) }.sorted()
            if let first = unknown.first {
                let guess = known.min { distance(first, $0) < distance(first, $1) }.flatMap { distance(first, $0) <= 3 ? $0 : nil }
                throw CommandError.file(source, "not a Crosspoint preset: unknown key\(unknown.count == 1 ? "" : "s") "
                    + unknown.map { "'\($0.printable)'" }.joined(separator: ", ")
                    + (guess.map { " (did you mean '\($0)'?)" } ?? "")
                    + "; a preset's keys are " + NodeDocument.presetKeys.sorted().joined(separator: ", "))
            }
        }
        do {
            return try JSONDecoder().decode(Preset.self, from: data)
        } catch let error as DecodingError {
            func path(_ context: DecodingError.Context, _ last: (any CodingKey)? = nil) -> String {
                var text = ""
                for key in context.codingPath + (last.map { [$0] } ?? []) {
                    text += key.intValue.map { "[\($0)]" } ?? (text.isEmpty ? key.stringValue : ".\(key.stringValue)")
                }
                return text.isEmpty ? "the file" : "'\(text)'"
            }
            let reason = switch error {
            case let .keyNotFound(key, context): "\(path(context, key)) is missing"
            case let .typeMismatch(type, context): "\(path(context)) is not \(describe(type))"
            case let .valueNotFound(type, context): "\(path(context)) is null, expected \(describe(type))"
            case let .dataCorrupted(context):
                context.codingPath.isEmpty ? "not valid JSON" : "\(path(context)): \(context.debugDescription)"
            @unknown default: "\(error)"
            }
            throw CommandError.file(source, "not a Crosspoint preset: \(reason)")
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

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Double.Type, is [Double].Type: "a number"
        case is Int.Type: "a whole number"
        case is Bool.Type, is [Bool].Type: "true or false"
        case is String.Type, is [String].Type: "a string"
        default: "of the right type (\(type))"
        }
    }
}

/// Any JSON value, to look at a file's keys before decoding it.
package enum AnyJSON: Decodable {
    case value
    package init(from decoder: any Decoder) throws {
        if let c = try? decoder.container(keyedBy: AnyKey.self) {
            for key in c.allKeys { _ = try c.decode(AnyJSON.self, forKey: key) }
        } else if var c = try? decoder.unkeyedContainer() {
            while !c.isAtEnd { _ = try c.decode(AnyJSON.self) }
        } else {
            _ = try decoder.singleValueContainer()
        }
        self = .value
    }

    package struct AnyKey: CodingKey {
        package let stringValue: String
        package let intValue: Int? = nil
        package init(stringValue: String) { self.stringValue = stringValue }
        package init?(intValue: Int) { nil }
    }
}
