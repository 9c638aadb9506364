import ArgumentParser
import CrosspointControl

/// `crosspoint apps` and `crosspoint move`: the applications' streams (playback and
/// recording), where each plays or records, whether it is pinned to a device or follows the
/// default, and moving one to another device through the session manager (README: Crosspoint
/// as your sound output). What they list and do is `Apps` (Apps.swift), shared with the
/// control surface; here: the commands' words and how they print it.
struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List the applications playing and recording (their streams) and the device of each.",
        discussion: """
        One line per stream, playback ("plays": what pavucontrol lists under Playback) and \
        recording ("records": under Recording): its id, the application's name and process id, \
        its media role, where it plays or records: a device, or a Crosspoint virtual device and \
        the node's channels it feeds or carries ("game (desk inputs game_FL, game_FR)", \
        "stream-mix (desk outputs stream_FL, stream_FR)"), and its TARGET: "default" (it \
        follows the default device when that changes) or "pinned" (moved there, chosen by the \
        application, or remembered for it by the session manager). `crosspoint move` moves one; \
        `crosspoint move APP --to default` unpins it.

        Examples:
          crosspoint apps
          crosspoint apps --json
        """)

    @OptionGroup var connection: Connection
    @Flag(help: "Print as JSON: { \"apps\": [ { \"id\": ..., \"app\": ..., \"kind\": \"playback\", \"followsDefault\": true, \"plays\": [ ... ] } ] }.")
    var json = false

    func run() throws {
        let session = try connection.connect()
        let listing = try Apps.listing(session)
        let listed = listing.apps
        if json {
            print(try JSONText.encode(listing), terminator: "")
            return
        }
        guard !listed.isEmpty else {
            print("no application is playing or recording")
            return
        }
        let rows: [[String]] = listed.map { app -> [String] in
            let pid: String = app.pid.map(String.init) ?? "-"
            let on: String = app.plays.isEmpty ? "(not linked)" : app.plays.map(\.text).joined(separator: ", ")
            let target: String = app.pinnedTo.map { "pinned: " + $0.printable } ?? "default"
            return ["\(app.id)", app.app.printable, pid, app.role?.printable ?? "-",
                    app.kind == .playback ? "plays" : "records", app.node.printable, on, target]
        }
        printTable([["ID", "APP", "PID", "ROLE", "KIND", "STREAM", "ON", "TARGET"]] + rows, terminal: Terminal(colour: .auto, width: nil))
    }
}

struct MoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move an application's stream to another device (as pavucontrol and pactl move-sink-input do).",
        discussion: """
        APP is a stream's id, an application's name (any case) or process id, or a stream's node.name \
        (see `crosspoint apps`); a name or process id with several streams moves them all. \
        DEVICE is a sink's or a source's name, description or id (a Crosspoint virtual device \
        too): a sink takes APP's playback streams, a source its recording streams (OBS \
        recording "Stream mix", a call's microphone). The session manager moves the stream \
        (the target in its `default` metadata, as pavucontrol sets it) and remembers the device \
        for the application: started again, it plays (or records) there. \
        `--to default` undoes a move: each stream goes to the default device of its kind, \
        follows it when it changes, and the device remembered for the application is \
        forgotten (as `pactl move-sink-input ID @DEFAULT_SINK@` does; @DEFAULT_SINK@ and \
        @DEFAULT_SOURCE@ take only playback or recording streams; a device named "default" is \
        reached by its id). The command waits (up to 5 s) until each stream is linked there.

        Examples:
          crosspoint move firefox --to game
          crosspoint move 1234 --to "USB interface"
          crosspoint move obs --to stream-mix          (OBS records the stream mix)
          crosspoint move 57 --to alsa_output.usb-interface --json
          crosspoint move firefox --to default        (back to the default device, and following it)
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: ArgumentHelp("The stream's id, the application's name or process id.", valueName: "app")) var app: String
    @Option(help: ArgumentHelp("The sink or source: its name, description or id; or default (the default device, followed).", valueName: "device"),
            completion: .custom { words, _, prefix in Completion.sinks(words, prefix: prefix) })
    var to: String

    func run() throws {
        let session = try connection.connect()
        let moved = try Apps.move(CommandLineWords.restore(app), to: CommandLineWords.restore(to), session)
        let reporter = output.reporter
        for line in moved.lines { reporter.say(line) }
        try reporter.emit(moved.report)
    }
}
