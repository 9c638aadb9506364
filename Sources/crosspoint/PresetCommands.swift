import ArgumentParser
import Glibc
import CrosspointCore
import CrosspointClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

private let presetFormat = """
A preset is JSON with the keys of the module arguments and the parameter table:
  format "crosspoint-preset", version 1, inputs, outputs,
  input.position, output.position (channel names), gain.master, mute.master,
  gain.in, mute.in (one per input), gain.out, mute.out (one per output),
  matrix (one row per input, one linear gain per output), ramp.ms.
Gains are linear. format, version, inputs, outputs and matrix are required; \
a missing gain is 1, a missing mute false.
"""

struct SaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Save a node's matrix, gains, mutes and ramp to a preset file (- for standard output).",
        discussion: """
        \(presetFormat)

        Examples:
          crosspoint save crosspoint evening.json
          crosspoint save xp-4x3 - | jq '.matrix'
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Argument(help: ArgumentHelp("The file to write, or - for standard output.", valueName: "file")) var file: String

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.mixer(of: target)
        let text = try JSONText.encode(mixer.preset)
        if file == "-" {
            print(text, terminator: "")
            return
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        } catch {
            throw CommandError.file(file, "cannot write it (\(reason(error)))")
        }
        print("\(target.node.name): saved \(mixer.inputs) x \(mixer.outputs) to \(file)")
    }
}

struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Apply a preset file (- for standard input) to a node of the same shape.",
        discussion: """
        \(presetFormat)
        A preset for another number of inputs or outputs is refused and changes nothing; one \
        whose channel names differ is applied, with a warning.

        Examples:
          crosspoint load crosspoint evening.json
          crosspoint save a - | crosspoint load b -
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Argument(help: ArgumentHelp("The preset file, or - for standard input.", valueName: "file")) var file: String

    func run() throws {
        let preset = try PresetFile.decode(readInput(file), source: file == "-" ? "standard input" : file)
        try preset.validateShape()
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.change(target) { (m: inout Mixer) throws(CrosspointError) in try m.apply(preset) }
        if let differences = preset.channelNameDifferences(from: mixer) {
            printError("warning: channel names differ: \(differences)")
        }
    }
}

enum PresetFile {
    /// Decodes a preset, naming the key of any error (`matrix[1][0]: expected a number`).
    static func decode(_ text: String, source: String) throws -> Preset {
        do {
            return try JSONDecoder().decode(Preset.self, from: Data(text.utf8))
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

/// Writes a line to standard error.
func printError(_ line: String) {
    var stderr = StandardError()
    print(line, to: &stderr)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) { _ = Glibc.write(STDERR_FILENO, string, string.utf8.count) }
}
