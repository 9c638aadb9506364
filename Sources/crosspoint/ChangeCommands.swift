import ArgumentParser
import CrosspointCore
import CrosspointClient
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Gains such as -6dB and maps such as -1,-1,0,1 start with a dash; the last positional
// argument of these commands is therefore read with `.allUnrecognized`, so that they are
// taken as values, not as options.

struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set the cross-point gain from one input to one output.",
        discussion: """
        \(ParameterHelp.describe("matrix.<in>.<out>"))
        \(ParameterHelp.gainSyntax)

        Examples:
          crosspoint set crosspoint 0 0 0.5         input 0 to output 0, half
          crosspoint set crosspoint FR MONO -6dB    by channel name, in dB
          crosspoint set xp-4x3 2 1 -inf            input 2 silent on output 1
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Argument(help: "The input: index from 0, or channel name.") var input: String
    @Argument(help: "The output: index from 0, or channel name.") var output: String
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The gain: 0.5, -6dB or -inf.", valueName: "gain"))
    var gain: [String] = []

    func validate() throws { _ = try single(gain, "GAIN") }

    func run() throws {
        let value = try Gain.parse(single(gain, "GAIN"))
        let session = try connection.connect()
        let target = try session.target(node)
        try session.change(target) { (m: inout Mixer) throws(CrosspointError) in
            try m.setCrosspoint(input: m.inputIndex(input), output: m.outputIndex(output), gain: value)
        }
    }
}

/// `master`, `in I` or `out J`: what gain, mute and unmute act on.
enum Strip: Equatable {
    case master, input(String), output(String)

    static let syntax = "master | in I | out J"

    /// Reads the strip from the front of `words`, leaving the rest.
    static func parse(_ words: inout [String]) throws -> Strip {
        guard let first = words.first else { throw CommandError.invalid("say what: \(syntax)") }
        switch first.lowercased() {
        case "master":
            words.removeFirst()
            return .master
        case "in", "input", "out", "output":
            guard words.count >= 2 else { throw CommandError.invalid("'\(first)' needs an index or channel name after it") }
            let which = words[1]
            words.removeFirst(2)
            return first.lowercased().hasPrefix("in") ? .input(which) : .output(which)
        default:
            throw CommandError.invalid("'\(first)' is not master, in or out; write \(syntax)")
        }
    }
}

struct GainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gain",
        abstract: "Set the master gain, an input's gain or an output's gain.",
        discussion: """
        \(ParameterHelp.describe("gain.master", "gain.in.<in>", "gain.out.<out>"))
        \(ParameterHelp.gainSyntax)

        Examples:
          crosspoint gain crosspoint master -3dB
          crosspoint gain crosspoint in FR 0.5
          crosspoint gain xp-4x3 out 2 -inf
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("master GAIN, in I GAIN or out J GAIN.", valueName: "what gain"))
    var words: [String] = []

    func validate() throws { _ = try parsed() }

    private func parsed() throws -> (Strip, Double) {
        var rest = words
        let strip = try Strip.parse(&rest)
        return (strip, try Gain.parse(single(rest, "GAIN")))
    }

    func run() throws {
        let (strip, gain) = try parsed()
        let session = try connection.connect()
        try session.change(try session.target(node)) { (m: inout Mixer) throws(CrosspointError) in
            switch strip {
            case .master: try m.setMasterGain(gain)
            case let .input(i): try m.setInputGain(m.inputIndex(i), gain)
            case let .output(j): try m.setOutputGain(m.outputIndex(j), gain)
            }
        }
    }
}

/// `mute` and `unmute`.
protocol MuteSetting: ParsableCommand {
    static var mute: Bool { get }
    var connection: Connection { get }
    var node: String { get }
    var words: [String] { get }
}

extension MuteSetting {
    static func help(_ verb: String) -> CommandConfiguration {
        CommandConfiguration(
            commandName: verb,
            abstract: "\(verb == "mute" ? "Mute" : "Unmute") the master, an input or an output.",
            discussion: """
            \(ParameterHelp.describe("mute.in.<in>", "mute.out.<out>"))
            The master mute is PipeWire's standard `mute` property.

            Examples:
              crosspoint \(verb) crosspoint master
              crosspoint \(verb) crosspoint in FL
              crosspoint \(verb) xp-4x3 out 2
            """)
    }

    func strip() throws -> Strip {
        var rest = words
        let strip = try Strip.parse(&rest)
        guard rest.isEmpty else { throw CommandError.invalid("unexpected '\(rest.joined(separator: " "))' after \(Strip.syntax)") }
        return strip
    }

    func validate() throws { _ = try strip() }

    func run() throws {
        let strip = try strip()
        let session = try connection.connect()
        try session.change(try session.target(node)) { (m: inout Mixer) throws(CrosspointError) in
            switch strip {
            case .master: m.setMasterMute(Self.mute)
            case let .input(i): try m.setInputMute(m.inputIndex(i), Self.mute)
            case let .output(j): try m.setOutputMute(m.outputIndex(j), Self.mute)
            }
        }
    }
}

struct MuteCommand: MuteSetting {
    static let configuration = help("mute")
    static let mute = true
    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Argument(help: ArgumentHelp("master, in I or out J.", valueName: "what")) var words: [String] = []
}

struct UnmuteCommand: MuteSetting {
    static let configuration = help("unmute")
    static let mute = false
    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Argument(help: ArgumentHelp("master, in I or out J.", valueName: "what")) var words: [String] = []
}

struct MapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Route with a channel map: for each output, the input that feeds it (or -1).",
        discussion: """
        \(ParameterHelp.describe("channel-map"))
        The map replaces the whole matrix with unity routes.

        Examples:
          crosspoint map xp-mono-stereo 0,0        mono to both sides
          crosspoint map xp-swap 1,0               swap left and right
          crosspoint map xp-pair34 -1,-1,0,1       a stereo pair to outputs 3 and 4
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("One input index or -1 per output: 0,0 or -1,-1,0,1.", valueName: "map"))
    var map: [String] = []

    func validate() throws { _ = try ChannelMap(parsing: map.joined(separator: " ")) }

    func run() throws {
        let map = try ChannelMap(parsing: self.map.joined(separator: " "))
        let session = try connection.connect()
        try session.change(try session.target(node)) { (m: inout Mixer) throws(CrosspointError) in try m.apply(map) }
    }
}

struct MatrixCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Set the whole matrix from a file (or - for standard input).",
        discussion: """
        The file holds one row per input, each row one gain per output, as text (gains \
        separated by spaces or commas, one row a line, # starts a comment; gains linear or in \
        dB) or as JSON (a list of rows: [[1, 0], [0, 1]]).
        \(ParameterHelp.describe("matrix.<in>.<out>"))
        All cross-points go in one pw_node_set_param call, so the node changes them at once.

        Examples:
          printf '1 0\\n0 1\\n' | crosspoint matrix xp-swap -
          crosspoint matrix xp-4x3 mix.txt          (4 lines of 3 gains)
          crosspoint matrix big matrix64.json       (64 rows of 64 gains, JSON)
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Argument(help: ArgumentHelp("The matrix file, or - to read standard input.", valueName: "file")) var file: String

    func run() throws {
        let rows = try MatrixText.parse(readInput(file), source: file == "-" ? "standard input" : file)
        let session = try connection.connect()
        try session.change(try session.target(node)) { (m: inout Mixer) throws(CrosspointError) in try m.setMatrix(rows: rows) }
    }
}

/// The matrix file formats `crosspoint matrix` reads.
enum MatrixText {
    static func parse(_ text: String, source: String) throws -> [[Double]] {
        let trimmed = text.drop { $0.isWhitespace }
        if trimmed.first == "[" {
            do {
                return try JSONDecoder().decode([[Double]].self, from: Data(text.utf8))
            } catch {
                throw CommandError.file(source, "not a JSON list of rows of numbers like [[1, 0], [0, 1]]")
            }
        }
        var rows: [[Double]] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\r" })
            guard !fields.isEmpty else { continue }
            var row: [Double] = []
            for field in fields {
                do {
                    row.append(try Gain.parse(String(field)))
                } catch {
                    throw CommandError.file(source, "line \(n + 1): '\(field)' is not a gain; write 0.5, -6dB or -inf")
                }
            }
            rows.append(row)
        }
        guard !rows.isEmpty else { throw CommandError.file(source, "holds no matrix rows") }
        return rows
    }
}

/// The only value of a `.allUnrecognized` argument.
func single(_ values: [String], _ name: String) throws -> String {
    guard values.count == 1 else {
        throw CommandError.invalid(values.isEmpty ? "missing \(name)" : "expected one \(name), got '\(values.joined(separator: " "))'")
    }
    return values[0]
}

/// A file's text, or standard input's for "-".
func readInput(_ path: String) throws -> String {
    if path == "-" {
        var text = ""
        while let line = readLine(strippingNewline: false) { text += line }
        return text
    }
    do {
        return String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    } catch {
        throw CommandError.file(path, "cannot read it (\(reason(error)))")
    }
}

/// The system's reason for a failed file operation ("No such file or directory").
func reason(_ error: any Error) -> String {
    if let posix = (error as? CocoaError)?.underlying as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    return "\(error)"
}
