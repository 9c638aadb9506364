import ArgumentParser
import CrosspointControl
import CrosspointCore
import CrosspointPipeWire
import Glibc

/// `crosspoint midi`: a node's MIDI control, over the `midi` and `midi.map` keys of the
/// parameter table (README: MIDI control).
struct MIDICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "midi",
        abstract: "A node's MIDI control: its midi_in/midi_out ports and its mappings.",
        discussion: """
        A mapping ties a control of a MIDI controller to a key of the parameter table:
          CONTROL KEY [toggle|momentary] [nopickup]
        CONTROL is cc CHANNEL N (a knob, fader or button), cc14 CHANNEL N (a 14-bit pair: N and \
        N+32), note CHANNEL N (a pad or key) or bend CHANNEL (a Mackie Control fader); channels \
        are 1 to 16. KEY is a gain (gain.master, gain.in.I, gain.out.J, matrix.I.J), a mute \
        (mute.in.I, mute.out.J) or ramp.ms, with indices or channel names. Gains follow a fader \
        curve: silence at the bottom, unity at 78 % of the travel (CC 99), +6 dB at the top. A \
        fader takes over once it crosses the value (pickup; nopickup: it jumps). A mute flips on \
        each press (toggle) or holds while the button is held (momentary).

        Examples:
          crosspoint midi on crosspoint
          crosspoint midi map crosspoint cc 1 7 gain.in.0
          crosspoint midi map crosspoint note 1 60 mute.in.FL momentary
          crosspoint midi list crosspoint
          crosspoint midi unmap crosspoint cc 1 7
          crosspoint midi learn crosspoint gain.master
        """,
        subcommands: [MIDIListCommand.self, MIDIOnCommand.self, MIDIOffCommand.self, MIDIMapCommand.self,
                      MIDIUnmapCommand.self, MIDILearnCommand.self])
}

struct MIDIListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The node's MIDI ports (on or off) and its mappings, numbered.")
    @OptionGroup var connection: Connection
    @Flag(help: "Print as JSON: { \"midi\": true, \"midi.map\": [ ... ] }.") var json = false
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String?

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.mixer(of: target)
        if json {
            print(try JSONText.encode(MIDIListing(midi: mixer.midi.ports, mappings: mixer.midi.texts)), terminator: "")
            return
        }
        print("\(target.name): MIDI ports \(mixer.midi.ports ? "on (midi_in, midi_out)" : "off (crosspoint midi on \(target.name.printable))")")
        if mixer.midi.mappings.isEmpty { print("no mappings") }
        for (n, text) in mixer.midi.texts.enumerated() { print("  \(n): \(text.printable)") }
    }
}

struct MIDIOnCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "on", abstract: "Give the node its midi_in and midi_out ports.")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String?
    func run() throws { try connection.connect().change(node: node, report: output.reporter) { $0.setMIDIPorts(true) } }
}

struct MIDIOffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "off", abstract: "Remove the node's MIDI ports (their links go; the mappings stay).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String?
    func run() throws { try connection.connect().change(node: node, report: output.reporter) { $0.setMIDIPorts(false) } }
}

struct MIDIMapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Add a mapping: CONTROL KEY [toggle|momentary] [nopickup] (replacing one of the same control and key).",
        discussion: """
        Examples:
          crosspoint midi map crosspoint cc 1 7 gain.in.0
          crosspoint midi map crosspoint cc14 1 0 gain.master nopickup
          crosspoint midi map crosspoint bend 9 gain.out.FL
        """)
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The mapping, as words.", valueName: "mapping")) var words: [String] = []

    func run() throws {
        let text = words.map(CommandLineWords.restore).joined(separator: " ")
        guard !text.isEmpty else { throw ValidationError("missing the mapping: CONTROL KEY, e.g. cc 1 7 gain.in.0") }
        try connection.connect().change(node: node, report: output.reporter) { m in
            let mapping = try MIDIMapping(text: text)
            var texts = m.midi.mappings.filter { !($0.control == mapping.control && $0.key == mapping.key) }.map(\.text)
            texts.append(mapping.text)
            try m.setMIDIMappings(texts)
        }
    }
}

struct MIDIUnmapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmap",
        abstract: "Remove the mappings of a control (CONTROL [KEY]), or one by its number in `midi list`, or all.",
        discussion: """
        Examples:
          crosspoint midi unmap crosspoint cc 1 7             every mapping of CC 7 on channel 1
          crosspoint midi unmap crosspoint cc 1 7 gain.in.0   only its mapping to gain.in.0
          crosspoint midi unmap crosspoint 3                  mapping 3 of `crosspoint midi list`
          crosspoint midi unmap crosspoint all
        """)
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("CONTROL [KEY], a number, or all.", valueName: "what")) var words: [String] = []

    func run() throws {
        let typed = words.map(CommandLineWords.restore)
        guard !typed.isEmpty else { throw ValidationError("missing what to unmap: CONTROL [KEY], a number from `crosspoint midi list`, or all") }
        try connection.connect().change(node: node, report: output.reporter) { m in
            let mappings = m.midi.mappings
            let kept: [MIDIMapping]
            if typed == ["all"] {
                kept = []
            } else if typed.count == 1, let n = Int(typed[0]) {
                guard mappings.indices.contains(n) else {
                    throw CommandError.invalid("there is no mapping \(n); `crosspoint midi list` numbers them from 0 to \(mappings.count - 1)")
                }
                kept = mappings.enumerated().filter { $0.offset != n }.map(\.element)
            } else {
                let controlWords = typed[0].lowercased() == "bend" ? 2 : 3
                let control = try MIDIControl(text: typed.prefix(controlWords).joined(separator: " "))
                let key = typed.count > controlWords ? typed[controlWords] : nil
                kept = mappings.filter { !($0.control == control && (key == nil || $0.key == key)) }
                guard kept.count < mappings.count else {
                    throw CommandError.invalid("no mapping of \(control)\(key.map { " to \($0.printable)" } ?? "") to remove")
                }
            }
            try m.setMIDIMappings(kept.map(\.text))
        }
    }
}

struct MIDILearnCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "learn",
        abstract: "Map the next control that moves on midi_in to KEY (move it within the timeout).",
        discussion: """
        For a gain, move a fader or a knob (a pitch bend fader too); for a mute, press a button \
        or a pad. A 14-bit pair is recognised when both halves move. The mapping is added to \
        the node's midi.map, as `crosspoint midi map` would add it.

        Examples:
          crosspoint midi learn crosspoint gain.in.FL
          crosspoint midi learn crosspoint mute.out.0 --timeout 30
        """)
    @OptionGroup var connection: Connection
    @Flag(help: "Print the learned mapping as JSON: { \"learned\": \"cc 1 7 gain.in.0\" }.") var json = false
    @Option(help: "Seconds to wait for a control to move (1 to 60).") var timeout = 10
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The key to map: gain.in.0, mute.out.FL, gain.master, ...", valueName: "key")) var key: String

    func run() throws {
        guard (1...MIDILearn.timeoutSeconds).contains(timeout) else {
            throw ValidationError("--timeout must be 1 to \(MIDILearn.timeoutSeconds) seconds, got \(timeout)")
        }
        let key = CommandLineWords.restore(self.key)
        let session = try connection.connect()
        let target = try session.target(node)
        let before = try session.mixer(of: target)
        do {
            _ = try MIDILearn(.names([key]))
            _ = try Parameter.typed(key, in: before)
        } catch let error as CrosspointError {
            throw CommandError.from(error, before)
        }
        guard before.midi.ports else {
            throw CommandError.invalid("\(target.name) has no MIDI ports: switch them on with `crosspoint midi on \(target.name.printable)`")
        }
        let known = Set(before.midi.texts)
        try session.request(target, Parameter(.midiLearn), .names([key]), against: before)
        if !json { printError("\(target.name): move the control for \(key.printable) (within \(timeout) s)") }
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            usleep(100_000)
            let now = try session.mixer(of: target)
            if let learned = now.midi.mappings.first(where: { $0.key == key && !known.contains($0.text) }) {
                if json {
                    print(try JSONText.encode(["learned": learned.text]), terminator: "")
                } else {
                    print("\(target.name): learned \(learned.text.printable)")
                }
                return
            }
        }
        try? session.request(target, Parameter(.midiLearn), .names([]), against: before)
        throw CommandError.invalid("no MIDI control moved on \(target.name)'s midi_in within \(timeout) s (is the controller linked to it?)")
    }
}
