#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import CrosspointControl
import CrosspointCore

private let presetFormat = """
A preset is JSON with the keys of the module arguments and the parameter table:
\(Preset.keysInWords) `save` and `show --json` also write what \
describes the node (id, name, description, input.ports, output.ports, input.links, \
output.links); `load` reads them and leaves them be. Any other key is refused.
"""

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
        try PresetFile.check(preset, source: source)
        let session = try connection.connect()
        try session.load(preset, source: source, into: try session.target(node), report: output.reporter)
    }
}
