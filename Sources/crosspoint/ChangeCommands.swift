import ArgumentParser
import CrosspointControl
import CrosspointCore

// Values that start with a dash (-6dB, -inf, -1,0) are values, not options: see
// `CommandLineWords`. `--` ends the options as usual.

let nodeHelp = ArgumentHelp("The node: name, description or id.", valueName: "node")
let nodeCompletion = CompletionKind.custom { words, index, prefix in Completion.nodes(words, prefix: prefix) }
private let linearHelp = ArgumentHelp("Read bare numbers as linear gains, whatever their size (6 is +15.6 dB).")

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
          crosspoint set crosspoint FL MONO 3dB-    3 dB quieter than now
          crosspoint set xp-4x3 2 1 -inf            input 2 silent on output 1
          crosspoint set xp-4x3 0 0 2x              a linear gain above 1 (+6 dB)
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Flag(help: linearHelp) var linear = false
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The input: index from 0, or channel name.", valueName: "in"),
              completion: .custom { words, _, prefix in Completion.channels(words, .input, prefix: prefix) })
    var input: String
    @Argument(help: ArgumentHelp("The output: index from 0, or channel name.", valueName: "out"),
              completion: .custom { words, _, prefix in Completion.channels(words, .output, prefix: prefix) })
    var output_: String
    @Argument(help: ArgumentHelp("The gain: 0.5, -6dB, -inf, 2x, or a step: 3dB+, 3dB-.", valueName: "gain"))
    var gain: String?

    // Values are checked in run(), not validate(): the parser reports an unknown option
    // only after validate() has passed, and `--remtoe x` must say so, not that x is no gain.
    func run() throws {
        guard let gain else { throw ValidationError("missing GAIN: \(GainInput.syntax)") }
        let value = try GainInput.parse(gain, linear: linear)
        let report = output.reporter
        var note: String?
        try connection.connect().change(node: node, exact: value.isExact, report: report) { m in
            let i = try m.inputIndex(CommandLineWords.restore(input)), j = try m.outputIndex(CommandLineWords.restore(output_))
            let (gain, clamped) = try value.resolve(current: Double(m.crosspoint(input: i, output: j)), key: "matrix.\(i).\(j)")
            note = clamped
            try m.setCrosspoint(input: i, output: j, gain: gain)
        }
        if let note { report.warn(note) }
    }
}

/// `master`, `in I` or `out J`: what gain, mute and unmute act on.
enum Strip: Equatable {
    case master, input(String), output(String)

    static let syntax = "master | in I | out J"

    /// Reads the strip from the front of `words`, leaving the rest.
    static func parse(_ words: inout [String]) throws -> Strip {
        guard let first = words.first.map(CommandLineWords.restore) else {
            throw CommandError.invalid("say what: \(syntax)")
        }
        switch first.lowercased() {
        case "master":
            words.removeFirst()
            return .master
        case "in", "input", "out", "output":
            guard words.count >= 2 else { throw CommandError.invalid("'\(first)' needs an index or channel name after it") }
            let which = CommandLineWords.restore(words[1])
            words.removeFirst(2)
            return first.lowercased().hasPrefix("in") ? .input(which) : .output(which)
        default:
            throw CommandError.invalid("'\(first.printable)' is not master, in or out; write \(syntax)")
        }
    }

    /// The key this strip's gain is.
    func gainKey(_ m: Mixer) throws -> Parameter {
        switch self {
        case .master: .masterGain
        case let .input(i): .inputGain(try m.inputIndex(i))
        case let .output(j): .outputGain(try m.outputIndex(j))
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
          crosspoint gain crosspoint master 1dB+     1 dB louder than now (at most +20 dB)
          crosspoint gain crosspoint in FR 0.5
          crosspoint gain xp-4x3 out 2 -inf
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Flag(help: linearHelp) var linear = false
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("master GAIN, in I GAIN or out J GAIN.", valueName: "what gain"),
              completion: .custom { words, _, prefix in Completion.strip(words, prefix: prefix) })
    var words: [String] = []

    private func parsed() throws -> (Strip, GainInput) {
        var rest = words
        let strip = try Strip.parse(&rest)
        guard rest.count == 1 else {
            throw ValidationError(rest.isEmpty ? "missing GAIN: \(GainInput.syntax)"
                : "expected one GAIN, got '\(rest.map(CommandLineWords.restore).joined(separator: " ").printable)'")
        }
        return (strip, try GainInput.parse(rest[0], linear: linear))
    }

    func run() throws {
        let (strip, value) = try parsed()
        let report = output.reporter
        var note: String?
        try connection.connect().change(node: node, exact: value.isExact, report: report) { m in
            let key = try strip.gainKey(m)
            guard case let .number(current) = m.value(of: key) else { return }
            let (gain, clamped) = try value.resolve(current: current, key: key.key)
            note = clamped
            try m.set(key, to: .number(gain))
        }
        if let note { report.warn(note) }
    }
}

/// `mute` and `unmute`.
protocol MuteSetting: ParsableCommand {
    static var mute: Bool { get }
    var connection: Connection { get }
    var output: ReportOptions { get }
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
        guard rest.isEmpty else {
            throw CommandError.invalid("unexpected '\(rest.map(CommandLineWords.restore).joined(separator: " ").printable)' after \(Strip.syntax)")
        }
        return strip
    }

    func run() throws {
        let strip = try strip()
        try connection.connect().change(node: node, report: output.reporter) { m in
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
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("master, in I or out J.", valueName: "what"),
              completion: .custom { words, _, prefix in Completion.strip(words, prefix: prefix) })
    var words: [String] = []
}

struct UnmuteCommand: MuteSetting {
    static let configuration = help("unmute")
    static let mute = false
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("master, in I or out J.", valueName: "what"),
              completion: .custom { words, _, prefix in Completion.strip(words, prefix: prefix) })
    var words: [String] = []
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
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("One input index or -1 per output: 0,0 or -1,-1,0,1.", valueName: "map"))
    var map: [String] = []

    private func parsed() throws -> ChannelMap {
        do {
            return try ChannelMap(parsing: map.map(CommandLineWords.restore).joined(separator: " "))
        } catch {
            throw CommandError.from(error, nil)
        }
    }

    func run() throws {
        let map = try parsed()
        try connection.connect().change(node: node, report: output.reporter) { m in
            guard map.sources.count == m.outputs else {
                throw CommandError.invalid("channel-map has \(counted(map.sources.count, "entry").replacing("entrys", with: "entries")) "
                    + "but the node has \(counted(m.outputs, "output")) (one entry per output)")
            }
            try m.apply(map)
        }
    }
}

struct MatrixCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Set the whole matrix from a file (or - for standard input).",
        discussion: """
        The file holds one row per input, each row one gain per output, as text (gains \
        separated by spaces or commas, one row a line, # starts a comment; gains as on the \
        command line: 0.5, -6dB, -inf, 2x) or as JSON (a list of rows of linear gains: \
        [[1, 0], [0, 1]]).
        \(ParameterHelp.describe("matrix.<in>.<out>"))
        All cross-points go in one pw_node_set_param call, so the node changes them at once.

        Examples:
          printf '1 0\\n0 1\\n' | crosspoint matrix xp-swap -
          crosspoint matrix xp-4x3 mix.txt          (4 lines of 3 gains)
          crosspoint matrix big matrix64.json       (64 rows of 64 gains, JSON)
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Flag(help: linearHelp) var linear = false
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The matrix file, or - to read standard input.", valueName: "file"), completion: .file())
    var file: String

    func run() throws {
        let rows = try MatrixText.parse(readInput(file), source: file == "-" ? "standard input" : file, linear: linear)
        try connection.connect().change(node: node, report: output.reporter) { m in
            guard rows.count == m.inputs else {
                throw CommandError.invalid("matrix has \(counted(rows.count, "row")) but the node has \(counted(m.inputs, "input")) (one row per input)")
            }
            for (i, row) in rows.enumerated() where row.count != m.outputs {
                throw CommandError.invalid(
                    "matrix row \(i) has \(counted(row.count, "gain")) but the node has \(counted(m.outputs, "output")) (one gain per output)")
            }
            try m.setMatrix(rows: rows)
        }
    }
}

struct RampCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ramp",
        abstract: "Set the time every gain change glides over.",
        discussion: """
        \(ParameterHelp.describe("ramp.ms"))

        Examples:
          crosspoint ramp crosspoint 50        (or 50ms)
          crosspoint ramp crosspoint 0         jump, no glide
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("Milliseconds, 0 to 1000: 10 or 10ms.", valueName: "ms")) var milliseconds: String

    func run() throws {
        let ms = try ParamValue.milliseconds(milliseconds)
        try connection.connect().change(node: node, report: output.reporter) { m in try m.setRamp(milliseconds: ms) }
    }
}

struct ResizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resize",
        abstract: "Change the number of inputs or outputs, live.",
        discussion: """
        \(ParameterHelp.describe("inputs", "outputs"))
        New channels are named AUX<index> and start from the default matrix; removed ones fade \
        out over the ramp, then their ports (and links) go.

        Examples:
          crosspoint resize crosspoint --outputs 4
          crosspoint resize xp-4x3 --inputs 2 --outputs 2
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Option(help: ArgumentHelp("The number of inputs, 1 to 256.", valueName: "n")) var inputs: Int?
    @Option(help: ArgumentHelp("The number of outputs, 1 to 256.", valueName: "n")) var outputs: Int?

    func validate() throws {
        guard inputs != nil || outputs != nil else { throw ValidationError("give --inputs, --outputs or both") }
        for (name, value) in [("inputs", inputs), ("outputs", outputs)] {
            if let value, !Mixer.channelLimit.contains(value) {
                throw ValidationError("--\(name) must be a whole number from 1 to 256, got \(value)")
            }
        }
    }

    func run() throws {
        let keys = (inputs != nil ? [Parameter.inputCount] : []) + (outputs != nil ? [Parameter.outputCount] : [])
        try connection.connect().change(node: node, keys: keys, report: output.reporter) { m in
            try m.resize(inputs: inputs ?? m.inputs, outputs: outputs ?? m.outputs)
        }
    }
}

struct RenameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Name the input or output channels (and so their ports), live.",
        discussion: """
        \(ParameterHelp.describe("input.position", "output.position"))
        Give every channel's name, in order; as many names as channels (more or fewer resize \
        the node). Links stay.

        Examples:
          crosspoint rename crosspoint out FL FR RL RR
          crosspoint rename xp-4x3 in MIC1,MIC2,LINE_L,LINE_R
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("in or out.", valueName: "in|out"), completion: .list(["in", "out"])) var side: String
    @Argument(help: ArgumentHelp("The names, one per channel: FL FR or FL,FR.", valueName: "names")) var names: [String] = []

    private func parsed() throws -> (Parameter, [String]) {
        let list = names.map(CommandLineWords.restore).flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty }
        guard !list.isEmpty else { throw ValidationError("missing the channel names: rename NODE \(side) FL FR ...") }
        switch side.lowercased() {
        case "in", "input", "inputs": return (.inputPositions, list)
        case "out", "output", "outputs": return (.outputPositions, list)
        default: throw ValidationError("'\(side.printable)' is not in or out")
        }
    }

    func run() throws {
        let (key, list) = try parsed()
        try connection.connect().change(node: node, keys: [key], report: output.reporter) { m in
            try m.set(key, to: .names(list))
        }
    }
}

struct ParamCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "param",
        abstract: "Set any keys of the parameter table: KEY VALUE [KEY VALUE ...].",
        discussion: """
        Every key `crosspoint params` lists, with indices or channel names (matrix.FL.MONO, \
        gain.out.2), in one call, applied in order. Values: gains as on the command line \
        (0.5, -6dB, -inf, 2x, 3dB+), mutes true/false (on/off, 1/0), ramp.ms and delay.out.* in ms, inputs and \
        outputs whole numbers, channel-map and the positions as lists (1,0 or FL,FR).

        Examples:
          crosspoint param crosspoint matrix.FL.MONO -6dB matrix.FR.MONO -6dB
          crosspoint param crosspoint ramp.ms 50 mute.in.1 true
          crosspoint param xp-4x3 outputs 4 gain.out.3 -3dB
          crosspoint param xp-swap output.position RL,RR
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Flag(help: linearHelp) var linear = false
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("Keys and values, in pairs.", valueName: "key value"),
              completion: .custom { words, index, prefix in Completion.params(words, index: index, prefix: prefix) })
    var pairs: [String] = []

    func check() throws {
        guard !pairs.isEmpty else { throw ValidationError("missing KEY VALUE (see `crosspoint params` for the keys)") }
        guard pairs.count % 2 == 0 else {
            throw ValidationError("'\(CommandLineWords.restore(pairs.last!).printable)' has no value; give KEY VALUE pairs")
        }
    }

    func run() throws {
        try check()
        let words = pairs.map(CommandLineWords.restore)
        let report = output.reporter
        let session = try connection.connect()
        let target = try session.target(node)
        var order: [Parameter] = []
        var notes: [String] = []
        var exact = true  // what ParamValue.parse reports; param sends exact values whatever the unit
        try session.change(target, exact: true, keys: { order }, report: report) { m in
            for k in stride(from: 0, to: words.count, by: 2) {
                let (key, text) = (words[k], words[k + 1])
                let p = try Parameter.typed(key, in: m)
                let value = try ParamValue.parse(text, for: p, in: m, linear: linear, note: &notes, exact: &exact)
                try m.set(p, to: value)
                order += Parameter.keysSent(for: p, m)
            }
        }
        for note in notes { report.warn(note) }
    }
}
