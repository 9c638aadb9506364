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
\(Preset.keysInWords) `save` and `show --json` also write what \
describes the node (id, name, description, input.ports, output.ports, input.links, \
output.links); `load` reads them and leaves them be. Any other key is refused.
"""

/// A node as `show --json` prints it and `save` writes it: a preset (the keys `load` applies)
/// plus what describes the node (`id`, `name`, `description`, each port's name and links),
/// which `load` accepts and ignores. One schema for both.
struct NodeDocument: Encodable {
    let preset: Preset
    let id: UInt32
    let name: String
    let description: String
    let inputPorts: [String]
    let outputPorts: [String]
    let inputLinks: [[String]]
    let outputLinks: [[String]]
    /// The sinks an output group may follow (not the node's own devices): name and description.
    var sinks: [[String]] = []
    /// What plays into (or records from) each of the node's virtual devices, by device name.
    var deviceStreams: [String: [String]] = [:]
    /// What the node says of each of its virtual devices, by device name (its property
    /// `crosspoint.devices`): `ready (node 42)`, `being made`, `waiting (node 57 has this name)`.
    var deviceStatus: [String: String] = [:]

    /// The keys that describe the node and are not applied by `load`.
    static let descriptiveKeys: Set<String> = ["id", "name", "description", "input.ports", "output.ports", "input.links", "output.links",
                                               "sinks", "device.streams", "device.status"]

    /// The keys of a preset, as Core reads one (those written only when set included:
    /// `midi`, `devices`, `delay.out`...).
    static let presetKeys = Set(Preset.keys)

    enum Keys: String, CodingKey {
        case id, name, description
        case inputPorts = "input.ports", outputPorts = "output.ports", inputLinks = "input.links", outputLinks = "output.links"
        case sinks, deviceStreams = "device.streams", deviceStatus = "device.status"
    }

    func encode(to encoder: any Encoder) throws {
        try preset.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(description, forKey: .description)
        try c.encode(inputPorts, forKey: .inputPorts)
        try c.encode(outputPorts, forKey: .outputPorts)
        try c.encode(inputLinks, forKey: .inputLinks)
        try c.encode(outputLinks, forKey: .outputLinks)
        try c.encode(sinks, forKey: .sinks)
        try c.encode(deviceStreams, forKey: .deviceStreams)
        try c.encode(deviceStatus, forKey: .deviceStatus)
    }
}

struct SaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Save a node's matrix, gains, mutes and ramp to a preset file (- for standard output).",
        discussion: """
        \(presetFormat)
        The file is what `show --json` prints.

        Examples:
          crosspoint save crosspoint evening.json
          crosspoint save xp-4x3 - | jq '.matrix'
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: ArgumentHelp("The node: name, description or id.", valueName: "node"),
              completion: .custom { words, _, prefix in Completion.nodes(words, prefix: prefix) })
    var node: String
    @Argument(help: ArgumentHelp("The file to write, or - for standard output.", valueName: "file"), completion: .file(extensions: ["json"]))
    var file: String

    struct Report: Encodable {
        let node: String
        let id: UInt32
        let file: String
        let inputs: Int
        let outputs: Int
    }

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.mixer(of: target)
        let text = try JSONText.encode(NodeView(target: target, mixer: mixer, graph: session.graph).document)
        if file == "-" {
            print(text, terminator: "")
            return
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        } catch {
            throw CommandError.file(file, "cannot write it (\(reason(error)))")
        }
        let report = output.reporter
        report.say("\(target.name): saved \(mixer.inputs) x \(mixer.outputs) to \(file.printable)")
        try report.emit(Report(node: target.node.name, id: target.node.id, file: file, inputs: mixer.inputs, outputs: mixer.outputs))
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
          crosspoint show a --json | crosspoint load b -
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: ArgumentHelp("The node: name, description or id.", valueName: "node"),
              completion: .custom { words, _, prefix in Completion.nodes(words, prefix: prefix) })
    var node: String
    @Argument(help: ArgumentHelp("The preset file, or - for standard input.", valueName: "file"), completion: .file(extensions: ["json"]))
    var file: String

    func run() throws {
        let source = file == "-" ? "standard input" : file
        let preset = try PresetFile.decode(readInput(file), source: source)
        try LoadCommand.check(preset, source: source)
        let session = try connection.connect()
        try LoadCommand.load(preset, source: source, into: try session.target(node), session: session, report: output.reporter)
    }

    /// Checks `preset` (read from `source`) and applies it to `target`: all of it, or nothing.
    static func load(_ preset: Preset, source: String, into target: Target, session: Session, report: Reporter) throws {
        try check(preset, source: source)
        let mixer = try session.change(target, report: report) { m in
            guard preset.inputs == m.inputs, preset.outputs == m.outputs else {
                throw CommandError.invalid("the preset is for \(counted(preset.inputs, "input")) x \(counted(preset.outputs, "output")) "
                    + "but the node has \(m.inputs) x \(m.outputs)")
            }
            try m.apply(preset)
        }
        if let differences = preset.channelNameDifferences(from: mixer) {
            report.warn("channel names differ: \(differences.printable)")
        }
    }

    /// Checks a preset's lists and shape, naming what is wrong (a list's length, with the file).
    static func check(_ preset: Preset, source: String) throws {
        do {
            try preset.validateShape()
        } catch let .shapeMismatch(text) {
            throw CommandError.file(source, text)
        } catch {
            throw CommandError.from(error, nil)
        }
    }
}

enum PresetFile {
    /// Decodes a preset as Core reads one (`Preset(json:)`), naming the key of any error
    /// (`matrix[1][0]: must be a number`), and refusing keys it does not know (a typo would
    /// otherwise be "nothing to change"); the keys that describe the node are left out.
    static func decode(_ text: String, source: String) throws -> Preset {
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
    static func distance(_ a: String, _ b: String) -> Int {
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

/// The system's reason for a failed file operation ("No such file or directory").
func reason(_ error: any Error) -> String {
    if let posix = (error as? CocoaError)?.underlying as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    return "\(error)"
}

/// Writes a line to standard error.
func printError(_ line: String) {
    var stderr = StandardError()
    print(line, to: &stderr)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) { _ = Glibc.write(STDERR_FILENO, string, string.utf8.count) }
}
