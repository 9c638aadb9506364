import ArgumentParser
import CrosspointClient
import CrosspointCore
import Glibc

/// `crosspoint apps` and `crosspoint move`: the applications' playback streams, where each
/// plays, and moving one to another device through the session manager (README: Crosspoint as
/// your sound output).
struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List the applications playing (their streams) and the device each plays on.",
        discussion: """
        One line per playback stream (what pavucontrol lists under Playback): its id, the \
        application's name and process id, its media role, and where it plays: a device, or a \
        Crosspoint virtual device and the node's inputs it feeds ("game (desk inputs game_FL, \
        game_FR)"). `crosspoint move` moves one.

        Examples:
          crosspoint apps
          crosspoint apps --json
        """)

    @OptionGroup var connection: Connection
    @Flag(help: "Print as JSON: { \"apps\": [ { \"id\": ..., \"app\": ..., \"pid\": ..., \"plays\": [ ... ] } ] }.") var json = false

    func run() throws {
        let session = try connection.connect()
        let streams = try appStreams(session)
        let devices = mixerDevices(session)
        let listed = streams.map { AppsListing.App($0, places: session.graph.places(of: $0, devices: devices)) }
        if json {
            print(try JSONText.encode(AppsListing(apps: listed)), terminator: "")
            return
        }
        guard !listed.isEmpty else {
            print("no application is playing")
            return
        }
        printTable([["ID", "APP", "PID", "ROLE", "STREAM", "PLAYS ON"]] + listed.map { app in
            ["\(app.id)", app.app.printable, app.pid.map(String.init) ?? "-", app.role?.printable ?? "-", app.node.printable,
             app.plays.isEmpty ? "(not linked)" : app.plays.map(\.text).joined(separator: ", ")]
        }, terminal: Terminal(colour: .auto, width: nil))
    }
}

struct AppsListing: Encodable {
    struct Place: Encodable {
        struct Mixer: Encodable { let node: String, inputs: [String] }
        let id: UInt32, name: String, description: String
        /// The Crosspoint node and inputs the audio reaches through this device (nil for a device of its own).
        let mixer: Mixer?

        init(_ place: StreamPlace) {
            (id, name, description) = (place.node.id, place.node.name, place.node.description)
            mixer = place.mixer.map { Mixer(node: $0.name, inputs: $0.inputs) }
        }

        /// `interface`, `game (desk inputs game_FL, game_FR)`, `desk (inputs FL)`.
        var text: String {
            guard let mixer else { return name.printable }
            let inputs = mixer.inputs.isEmpty ? "" : " inputs " + mixer.inputs.joined(separator: ", ")
            return mixer.node == name ? "\(name)\(inputs.isEmpty ? "" : " (\(inputs.dropFirst()))")".printable
                : "\(name) (\(mixer.node)\(inputs))".printable
        }
    }

    struct App: Encodable {
        let id: UInt32, app: String, node: String, pid: Int?, role: String?, media: String?, plays: [Place]

        init(_ stream: AppStream, places: [StreamPlace]) {
            (id, app, node, pid, role, media) = (stream.id, stream.application, stream.node.name, stream.pid, stream.role, stream.media)
            plays = places.map(Place.init)
        }

        func encode(to encoder: any Encoder) throws {
            // Absent values are null, not left out: a script reads every key of every app.
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(app, forKey: .app)
            try c.encode(node, forKey: .node)
            try c.encode(pid, forKey: .pid)
            try c.encode(role, forKey: .role)
            try c.encode(media, forKey: .media)
            try c.encode(plays, forKey: .plays)
        }

        enum CodingKeys: String, CodingKey { case id, app, node, pid, role, media, plays }
    }

    let apps: [App]
}

/// The playback streams, with the application names and process ids their clients give.
private func appStreams(_ session: Session) throws -> [AppStream] {
    session.graph.appStreams(clients: try session.client.clientProperties())
}

/// Every Crosspoint node's virtual sinks, by device name (a node whose Props cannot be read
/// is left out: its devices are then found by their links).
private func mixerDevices(_ session: Session) -> [String: MixerDevice] {
    var devices: [String: MixerDevice] = [:]
    for node in session.crosspointNodes {
        guard let target = try? session.target("\(node.id)"), let mixer = try? session.mixer(of: target) else { continue }
        for device in mixer.devices where device.kind == .sink {
            devices[device.name] = MixerDevice(mixer: node.name, inputs: device.channels)
        }
    }
    return devices
}

struct MoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move an application's stream to another device (as pavucontrol and pactl move-sink-input do).",
        discussion: """
        APP is a stream's id, an application's name (any case) or process id, or a stream's node.name \
        (see `crosspoint apps`); a name or process id with several streams moves them all. \
        DEVICE is a sink's name, description or id: a Crosspoint virtual device too. The \
        session manager moves the stream (the target in its `default` metadata, as pavucontrol \
        sets it) and remembers the device for the application: started again, it plays there. \
        `--to default` undoes a move: the stream plays on the default device, follows it when \
        it changes, and the device remembered for the application is forgotten (as \
        `pactl move-sink-input ID @DEFAULT_SINK@` does; a sink named "default" is reached by \
        its id). The command waits (up to 5 s) until the stream plays on the device.

        Examples:
          crosspoint move firefox --to game
          crosspoint move 1234 --to "USB interface"
          crosspoint move 57 --to alsa_output.usb-interface --json
          crosspoint move firefox --to default        (back to the default device, and following it)
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: ArgumentHelp("The stream's id, the application's name or process id.", valueName: "app")) var app: String
    @Option(help: ArgumentHelp("The sink to play on: its name, description or id; or default (the default device, followed).", valueName: "device"),
            completion: .custom { words, _, prefix in Completion.sinks(words, prefix: prefix) })
    var to: String

    struct Report: Encodable {
        struct Moved: Encodable { let id: UInt32, app: String, from: [String], to: String }
        let device: String
        let id: UInt32
        /// `--to default`: the streams follow the default device from now on.
        let followsDefault: Bool
        let moved: [Moved]
    }

    func run() throws {
        let session = try connection.connect()
        let streams = try appStreams(session)
        // Both named and checked before anything is set.
        let chosen = try find(CommandLineWords.restore(app), among: streams)
        let toDefault = Self.defaultWords.contains(CommandLineWords.restore(to))
        let sink = toDefault ? try defaultSink(session) : try device(CommandLineWords.restore(to), session)
        if let stuck = chosen.first(where: \.refusesMoving) {
            throw CommandError.invalid("\(label(stuck)) asks not to be moved (node.dont-move); nothing was changed")
        }
        let before = Dictionary(uniqueKeysWithValues: chosen.map { ($0.id, session.graph.places(of: $0).map(\.node.name)) })
        for stream in chosen {
            if toDefault { try session.client.moveStreamToDefault(stream.node) } else { try session.client.moveStream(stream.id, to: sink) }
        }
        try waitForMove(chosen, to: sink, before: before, session)

        let reporter = output.reporter
        for stream in chosen {
            let from = before[stream.id] ?? []
            if toDefault {
                reporter.say("\(label(stream)) plays on the default device (\(sink.name.printable) now) and follows it"
                             + (from.isEmpty || from == [sink.name] ? "" : "; it was on \(from.joined(separator: ", ").printable)"))
            } else if from == [sink.name] {
                reporter.say("\(label(stream)) already plays on \(sink.name.printable); kept there")
            } else {
                reporter.say("moved \(label(stream)) " + (from.isEmpty ? "" : "from \(from.joined(separator: ", ").printable) ")
                             + "to \(sink.name.printable)")
            }
        }
        try reporter.emit(Report(device: sink.name, id: sink.id, followsDefault: toDefault, moved: chosen.map {
            Report.Moved(id: $0.id, app: $0.application, from: before[$0.id] ?? [], to: sink.name)
        }))
    }

    /// `Firefox (id 71, pid 4711)`; `pw-play (id 74, pid 4790, stream player)` when the
    /// stream's node.name is not the application's name.
    private func label(_ stream: AppStream) -> String {
        "\(stream.application.printable) (id \(stream.id)" + (stream.pid.map { ", pid \($0)" } ?? "")
            + (stream.node.name == stream.application ? "" : ", stream \(stream.node.name.printable)") + ")"
    }

    /// The streams APP names: a stream's id, else a process id; an application's name, else a
    /// stream's node.name, else an application's name in any case (`firefox` for Firefox).
    private func find(_ token: String, among streams: [AppStream]) throws -> [AppStream] {
        var found: [AppStream] = []
        if let number = UInt32(token) {
            found = streams.filter { $0.id == number }
            if found.isEmpty { found = streams.filter { $0.pid == Int(number) } }
        } else {
            found = streams.filter { $0.application == token }
            if found.isEmpty { found = streams.filter { $0.node.name == token } }
            if found.isEmpty { found = streams.filter { $0.application.lowercased() == token.lowercased() } }
        }
        guard found.isEmpty else { return found }
        guard !streams.isEmpty else { throw CommandError.invalid("unknown application '\(token.printable)': no application is playing") }
        let (ordered, close) = NameSuggestions.rank(token, streams) { [$0.application, $0.node.name] }
        let suggestion = NameSuggestions.phrase(close.map { $0.application.printable })
        throw CommandError.invalid("unknown application '\(token.printable)'; " + (suggestion.isEmpty ? "" : suggestion + " ")
                                   + "the applications playing are: " + ordered.map(label).joined(separator: ", "))
    }

    /// The words `--to` takes for the default device.
    static let defaultWords: Set<String> = ["default", "@DEFAULT_SINK@"]

    /// The sink the session manager plays to by default now.
    private func defaultSink(_ session: Session) throws -> GraphNode {
        guard let name = try session.client.defaultSinkName(),
              let sink = session.graph.nodes.first(where: { $0.isSink && $0.name == name }) else {
            throw CommandError.invalid("there is no default device now (no sink, or no session manager to choose one); nothing was changed")
        }
        return sink
    }

    /// The sink DEVICE names; a node that is not a sink is refused by what it is.
    private func device(_ token: String, _ session: Session) throws -> GraphNode {
        if let sink = try? session.sink(token) { return sink }
        let nodes = session.graph.nodes
        let other = UInt32(token).flatMap { id in nodes.first { $0.id == id } }
            ?? nodes.first { $0.name == token } ?? nodes.first { $0.description == token }
        guard let other else { return try session.sink(token) }  // unknown: the error lists the sinks
        let sinks = nodes.filter(\.isSink).map(session.label).joined(separator: ", ")
        let what = other.crosspointShape != nil
            ? "it is a Crosspoint node; play into one of its virtual sinks (crosspoint virtual list \(other.name.printable))"
            : "its media.class is " + (other.mediaClass?.printable ?? "not set")
        throw CommandError.invalid("'\(token.printable)' (id \(other.id)) is not a sink: \(what); the sinks are: \(sinks)")
    }

    /// Waits until each stream that was playing plays on the sink alone (the session manager
    /// relinks it within a moment), or has ended. A stream that was not linked is not waited for.
    private func waitForMove(_ streams: [AppStream], to sink: GraphNode, before: [UInt32: [String]], _ session: Session) throws {
        let waiting = streams.filter { !(before[$0.id] ?? []).isEmpty }
        guard !waiting.isEmpty else { return }
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            try session.refresh()
            let graph = session.graph
            let pending = waiting.filter { stream in
                guard graph.node(stream.id) != nil else { return false }  // it ended
                return graph.places(of: stream).map(\.node.id) != [sink.id]
            }
            if pending.isEmpty { return }
            guard ContinuousClock.now < deadline else {
                let now = pending.map { "\(label($0)) plays on " + graph.places(of: $0).map(\.node.name).joined(separator: ", ").printable }
                throw CommandError.invalid("the session manager did not move \(pending.map(label).joined(separator: ", ")) to "
                    + "\(sink.name.printable) within 5 s (\(now.joined(separator: "; "))); its target is set in the default metadata")
            }
            _ = try session.client.iterateOnce(milliseconds: 50)
        }
    }
}
