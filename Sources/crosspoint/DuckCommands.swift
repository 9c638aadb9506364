import ArgumentParser
import CrosspointControl
import CrosspointCore

/// `crosspoint duck`: a node's ducking rules, over the `duck` key of the parameter table
/// (README: Ducking).
struct DuckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "duck",
        abstract: "Lower channels while others carry signal: a node's ducking rules.",
        discussion: """
        A rule lowers inputs (by channel name or index), outputs (out:NAME) or single \
        cross-points (matrix.IN.OUT: an input in one mix only) by --depth while \
        its trigger inputs are above --threshold, reaching the depth over --attack, holding it \
        --hold after the trigger falls quiet and coming back over --release. Levels in dB, times \
        in ms (10ms, 1s). Several rules lowering one channel: the deepest wins.

        Examples:
          crosspoint duck add desk mic --lowers music_FL,music_FR,game_FL,game_FR --depth -15dB
          crosspoint duck add desk speech_FL,speech_FR --lowers out:FL,out:FR --release 1.5s
          crosspoint duck add desk mic --lowers matrix.music_FL.stream_FL,matrix.music_FR.stream_FR
          crosspoint duck list desk
          crosspoint duck off desk 0
          crosspoint duck remove desk 0
        """,
        subcommands: [DuckListCommand.self, DuckAddCommand.self, DuckRemoveCommand.self, DuckOnCommand.self, DuckOffCommand.self])
}

struct DuckListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The node's ducking rules, numbered.")
    @OptionGroup var connection: Connection
    @Flag(help: "Print as JSON: { node, rules: [ { index, text, triggers, inputs, outputs, crosspoints, depth, threshold, knee, attack, hold, release, detect, enabled } ] }.")
    var json = false
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String?

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.mixer(of: target)
        if json {
            print(try JSONText.encode(DuckListing(node: target.name, rules: mixer.ducking)), terminator: "")
            return
        }
        if mixer.ducking.isEmpty { print("\(target.name): no ducking rules (crosspoint duck add \(target.name.printable) TRIGGER --lowers CHANNELS)") }
        for (n, rule) in mixer.ducking.enumerated() {
            let lowered = rule.inputs.map { "in_" + $0 } + rule.outputs.map { "out_" + $0 }
                + rule.crosspoints.map { "in_\($0.input)->out_\($0.output)" }
            print("  \(n): \(rule.triggers.map { "in_" + $0 }.joined(separator: ",")) lowers \(lowered.joined(separator: ",")) "
                + "by \(Gain.format(rule.depth)) dB above \(Gain.format(rule.threshold)) dBFS \(rule.detect.rawValue)"
                + (rule.knee > 0 ? " (knee \(Gain.format(rule.knee)) dB)" : "")
                + "; attack \(Gain.formatMilliseconds(rule.attack)) ms, hold \(Gain.formatMilliseconds(rule.hold)) ms, release \(Gain.formatMilliseconds(rule.release)) ms"
                + (rule.enabled ? "" : "; off"))
        }
    }
}

struct DuckAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a rule: TRIGGER[,TRIGGER] --lowers CHANNEL[,CHANNEL].")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The inputs whose level lowers the others, by name or index, comma-separated.", valueName: "trigger"))
    var trigger: String
    @Option(help: ArgumentHelp("What goes down: inputs by name or index, outputs as out:NAME, cross-points as matrix.IN.OUT, comma-separated.", valueName: "channels"))
    var lowers: String
    @Option(help: ArgumentHelp("How far, -60 to 0 dB (default -12).", valueName: "dB")) var depth: String?
    @Option(help: ArgumentHelp("The trigger's level it starts at, -90 to 0 dBFS (default -40).", valueName: "dB")) var threshold: String?
    @Option(help: ArgumentHelp("dB above the threshold over which the depth grows, 0 to 40 (default 0).", valueName: "dB")) var knee: String?
    @Option(help: ArgumentHelp("Time to the full depth, 0 to 5000 ms (default 20).", valueName: "ms")) var attack: String?
    @Option(help: ArgumentHelp("Time it stays after the trigger falls quiet, 0 to 10000 ms (default 300).", valueName: "ms")) var hold: String?
    @Option(help: ArgumentHelp("Time back from the full depth, 0 to 10000 ms (default 600).", valueName: "ms")) var release: String?
    @Option(help: ArgumentHelp("rms or peak (default rms).", valueName: "detector")) var detect: String?
    @Flag(help: "Add it switched off.") var off = false

    func run() throws {
        // Values that start with a dash (-15dB) come through CommandLineWords' stand-in.
        var words = [CommandLineWords.restore(trigger), "lowers=" + CommandLineWords.restore(lowers)]
        for (name, value) in [("depth", depth), ("threshold", threshold), ("knee", knee), ("attack", attack), ("hold", hold),
                              ("release", release), ("detect", detect)] {
            if let value { words.append("\(name)=\(CommandLineWords.restore(value))") }
        }
        if off { words.append("off") }
        let text = words.joined(separator: " ")
        try connection.connect().change(node: node, keys: [Parameter(.ducking)], report: output.reporter) { m in
            try m.setDucking(m.ducking.map(\.text) + [text])
        }
    }
}

/// The rules `what` names: a number of `duck list`, a trigger as written in a rule, or all.
private func pick(_ what: String, in rules: [DuckingRule], mixer: Mixer) throws -> Set<Int> {
    if what == "all" { return Set(rules.indices) }
    if let n = Int(what) {
        guard rules.indices.contains(n) else {
            throw CommandError.invalid(rules.isEmpty ? "the node has no ducking rules" : "there is no rule \(n); `crosspoint duck list` numbers them from 0 to \(rules.count - 1)")
        }
        return [n]
    }
    let found = Set(mixer.duckingRules(triggeredBy: Substring(what)))
    guard !found.isEmpty else { throw CommandError.invalid("no rule is triggered by \(what.printable); see `crosspoint duck list`") }
    return found
}

struct DuckRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a rule by its number in `duck list`, the rules of a trigger, or all (the channels come back up).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("A number, a trigger, or all.", valueName: "rule")) var rule: String

    func run() throws {
        try connection.connect().change(node: node, keys: [Parameter(.ducking)], report: output.reporter) { m in
            let gone = try pick(rule, in: m.ducking, mixer: m)
            try m.setDucking(m.ducking.enumerated().filter { !gone.contains($0.offset) }.map(\.element.text))
        }
    }
}

/// Switches the rules `rule` names on or off.
private func switchRules(_ connection: Connection, _ output: ReportOptions, node: String, rule: String, on: Bool) throws {
    try connection.connect().change(node: node, keys: [Parameter(.ducking)], report: output.reporter) { m in
        let chosen = try pick(rule, in: m.ducking, mixer: m)
        try m.setDucking(m.ducking.enumerated().map { n, r in
            var r = r
            if chosen.contains(n) { r.enabled = on }
            return r.text
        })
    }
}

struct DuckOnCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "on", abstract: "Switch rules on (a number, a trigger, or all).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("A number, a trigger, or all.", valueName: "rule")) var rule: String
    func run() throws { try switchRules(connection, output, node: node, rule: rule, on: true) }
}

struct DuckOffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "off", abstract: "Switch rules off, keeping them (a number, a trigger, or all).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("A number, a trigger, or all.", valueName: "rule")) var rule: String
    func run() throws { try switchRules(connection, output, node: node, rule: rule, on: false) }
}
