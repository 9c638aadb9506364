import CrosspointClient
import CrosspointCore
import CrosspointPipeWire

/// The applications' streams (playback and recording), listed and moved: the one code behind
/// `crosspoint apps` and `crosspoint move` (their commands print what it returns) and the
/// control surface's `GET /api/apps`, `POST /api/apps/move` and WebSocket `apps` messages
/// (ServeRoutes.swift, Surface.swift). Names come as the person typed them (the command
/// restores its words first); errors are the command's own (`CommandError`): an application or
/// a device that is not there is `notFound` (the API's 404), anything else `invalid` (400).
package enum Apps {
    // MARK: Listing

    /// Every stream, where it plays or records, and its target: `apps --json`. `metadata` is the
    /// `default` metadata by subject when the caller has read it already.
    package static func listing(_ session: Session, metadata: [UInt32: [String: String]]? = nil) throws -> AppsListing {
        let streams = try streams(session)
        let devices = mixerDevices(session)
        let targets = metadata ?? (try? session.client.metadataBySubject(DefaultMetadataKey.metadataName)) ?? [:]
        return AppsListing(apps: streams.map { stream in
            AppsListing.App(stream, places: session.graph.places(of: stream, devices: devices),
                            target: session.graph.target(of: stream, metadata: targets[stream.id] ?? [:]))
        })
    }

    /// What the surface's Apps panel draws: the listing, and the devices a stream can be moved
    /// to (sinks for playback, sources for recording: id, name and description, by description),
    /// with the default of each kind now. One read of the `default` metadata for both.
    package struct SurfaceView {
        package struct Device: Encodable { let id: UInt32, name: String, description: String }
        package let apps: [AppsListing.App]
        package let sinks: [Device]
        package let sources: [Device]
        package let defaultSink: String?
        package let defaultSource: String?
    }

    package static func surfaceView(_ session: Session) throws -> SurfaceView {
        let metadata = (try? session.client.metadataBySubject(DefaultMetadataKey.metadataName)) ?? [:]
        let listing = try listing(session, metadata: metadata)
        func devices(_ kind: (GraphNode) -> Bool) -> [SurfaceView.Device] {
            session.graph.nodes.filter(kind).map { SurfaceView.Device(id: $0.id, name: $0.name, description: $0.description.isEmpty ? $0.name : $0.description) }
                .sorted { ($0.description.lowercased(), $0.name) < ($1.description.lowercased(), $1.name) }
        }
        let defaults = metadata[0] ?? [:]
        return SurfaceView(apps: listing.apps, sinks: devices(\.isSink), sources: devices(\.isSource),
                           defaultSink: defaults[DefaultMetadataKey.sink].flatMap(DefaultMetadataKey.deviceName(inJSON:)),
                           defaultSource: defaults[DefaultMetadataKey.source].flatMap(DefaultMetadataKey.deviceName(inJSON:)))
    }

    /// What the apps view depends on in the graph, cheap to make: the streams (with their
    /// properties), the sinks and sources, and every link to or from one of them. The surface
    /// reads the view again (reading every Crosspoint node's Props: tens of milliseconds with a
    /// 256 x 256 node) only when this changed, not at every graph change (a client coming and
    /// going, as every pw-cli and pw-dump does, is one).
    package static func graphSignature(_ graph: GraphSnapshot) -> String {
        var involved = Set<UInt32>()
        var parts: [String] = []
        for node in graph.nodes {
            let stream = node.isApplicationStream
            guard stream || node.isSink || node.isSource else { continue }
            involved.insert(node.id)
            parts.append("\(node.id) \(node.name) \(node.description) \(node.mediaClass ?? "")")
            if stream { parts.append(node.properties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\u{1}")) }
        }
        for link in graph.links where involved.contains(link.outputNode) || involved.contains(link.inputNode) {
            parts.append("\(link.outputNode):\(link.outputPort)>\(link.inputNode):\(link.inputPort)")
        }
        return parts.joined(separator: "\n")
    }

    /// The applications' streams, with the application names and process ids their clients give.
    private static func streams(_ session: Session) throws -> [AppStream] {
        session.graph.appStreams(clients: try session.client.clientProperties())
    }

    /// Every Crosspoint node's virtual devices, by device name (a node whose Props cannot be read
    /// is left out: its devices are then found by their links).
    private static func mixerDevices(_ session: Session) -> [String: MixerDevice] {
        var devices: [String: MixerDevice] = [:]
        for node in session.crosspointNodes {
            guard let target = try? session.target("\(node.id)"), let mixer = try? session.mixer(of: target) else { continue }
            for device in mixer.devices { devices[device.name] = MixerDevice(mixer: node.name, inputs: device.channels) }
        }
        return devices
    }

    // MARK: Moving

    /// What `move` did: each stream, the device it went to and what it was on before; the
    /// lines the command prints; the report `--json` prints.
    package struct Moved {
        package let toDefault: Bool
        package let lines: [String]
        package let report: MoveReport
    }

    /// What `crosspoint move --json` prints (and `POST /api/apps/move` answers as `report`).
    package struct MoveReport: Encodable {
        package struct Moved: Encodable { let id: UInt32, app: String, kind: String, from: [String], to: String }
        /// The device (the first stream's, for `--to default` with streams of both kinds).
        package let device: String
        package let id: UInt32
        /// `--to default`: the streams follow the default device from now on.
        package let followsDefault: Bool
        package let moved: [Moved]
    }

    /// The words `--to` takes for the default device, and the streams each takes.
    package static let defaultWords: [String: Set<AppStream.Kind>] = [
        "default": [.playback, .recording], "@DEFAULT_SINK@": [.playback], "@DEFAULT_SOURCE@": [.recording],
    ]

    /// Moves the streams `app` names to device `word` (or to the default device, followed):
    /// both are checked before anything is set; then the target is set in the `default`
    /// metadata, and the move waited for (up to 5 s) until each stream is linked there.
    package static func move(_ app: String, to word: String, _ session: Session) throws -> Moved {
        let streams = try streams(session)
        // Both named and checked before anything is set.
        let named = try find(app, among: streams)
        let toDefault = defaultWords[word]
        let moves: [(stream: AppStream, device: GraphNode)]
        if let kinds = toDefault {
            let chosen = named.filter { kinds.contains($0.kind) }
            guard !chosen.isEmpty else { throw CommandError.invalid(noStream(of: kinds.first!, in: named, device: word)) }
            moves = try chosen.map { ($0, try defaultDevice($0.kind, session)) }
        } else {
            let device = try device(word, session, for: Set(named.map(\.kind)))
            let kind: AppStream.Kind = device.isSink ? .playback : .recording
            let chosen = named.filter { $0.kind == kind }
            guard !chosen.isEmpty else { throw CommandError.invalid(noStream(of: kind, in: named, device: "\(device.name.printable) (a \(device.isSink ? "sink" : "source"))")) }
            moves = chosen.map { ($0, device) }
        }
        if let stuck = moves.first(where: \.stream.refusesMoving) {
            throw CommandError.invalid("\(label(stuck.stream)) asks not to be moved (node.dont-move); nothing was changed")
        }
        let before = Dictionary(uniqueKeysWithValues: moves.map { ($0.stream.id, session.graph.places(of: $0.stream).map(\.node.name)) })
        for (stream, device) in moves {
            if toDefault != nil { try session.client.moveStreamToDefault(stream.node) } else { try session.client.moveStream(stream.id, to: device) }
        }
        try waitForMove(moves, before: before, session)

        var lines: [String] = []
        for (stream, device) in moves {
            let from = before[stream.id] ?? []
            let verb = stream.kind == .playback ? "plays" : "records"
            if toDefault != nil {
                lines.append("\(label(stream)) \(verb) \(stream.kind == .playback ? "on" : "from") the default device (\(device.name.printable) now) and follows it"
                             + (from.isEmpty || from == [device.name] ? "" : "; it was on \(from.joined(separator: ", ").printable)"))
            } else if from == [device.name] {
                lines.append("\(label(stream)) already \(verb) \(stream.kind == .playback ? "on" : "from") \(device.name.printable); kept there")
            } else {
                lines.append("moved \(label(stream)) " + (from.isEmpty ? "" : "from \(from.joined(separator: ", ").printable) ")
                             + "to \(device.name.printable)")
            }
        }
        let report = MoveReport(device: moves[0].device.name, id: moves[0].device.id, followsDefault: toDefault != nil, moved: moves.map {
            MoveReport.Moved(id: $0.stream.id, app: $0.stream.application, kind: $0.stream.kind.rawValue, from: before[$0.stream.id] ?? [], to: $0.device.name)
        })
        return Moved(toDefault: toDefault != nil, lines: lines, report: report)
    }

    /// `Firefox (id 71, pid 4711)`; `pw-play (id 74, pid 4790, stream player)` when the
    /// stream's node.name is not the application's name.
    private static func label(_ stream: AppStream) -> String {
        "\(stream.application.printable) (id \(stream.id)" + (stream.pid.map { ", pid \($0)" } ?? "")
            + (stream.node.name == stream.application ? "" : ", stream \(stream.node.name.printable)") + ")"
    }

    /// Why none of the `named` streams can go to `device`: they are all of the other kind.
    private static func noStream(of kind: AppStream.Kind, in named: [AppStream], device: String) -> String {
        let what = kind == .playback ? "playback stream (it records: give a source)" : "recording stream (it plays: give a sink)"
        return "\(named.map(label).joined(separator: ", ")) has no \(what); \(device) takes only "
            + (kind == .playback ? "playback" : "recording") + " streams; nothing was changed"
    }

    /// The streams APP names: a stream's id, else a process id; an application's name, else a
    /// stream's node.name, else an application's name in any case (`firefox` for Firefox).
    private static func find(_ token: String, among streams: [AppStream]) throws -> [AppStream] {
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
        guard !streams.isEmpty else {
            throw CommandError.notFound("unknown application '\(token.printable)': no application is playing or recording", argument: "app")
        }
        let (ordered, close) = NameSuggestions.rank(token, streams) { [$0.application, $0.node.name] }
        let suggestion = NameSuggestions.phrase(close.map { $0.application.printable })
        throw CommandError.notFound("unknown application '\(token.printable)'; " + (suggestion.isEmpty ? "" : suggestion + " ")
                                    + "the applications playing or recording are: " + ordered.map(label).joined(separator: ", "), argument: "app")
    }

    /// The device the session manager plays to (or records from) by default now.
    private static func defaultDevice(_ kind: AppStream.Kind, _ session: Session) throws -> GraphNode {
        let name = kind == .playback ? try session.client.defaultSinkName() : try session.client.defaultSourceName()
        guard let name, let device = session.graph.nodes.first(where: { (kind == .playback ? $0.isSink : $0.isSource) && $0.name == name }) else {
            throw CommandError.invalid("there is no default \(kind == .playback ? "sink" : "source") now (none, or no session manager to choose one); nothing was changed")
        }
        return device
    }

    /// The sink or source DEVICE names (a sink first: a duplex device is both); a node that
    /// is neither is refused by what it is.
    private static func device(_ token: String, _ session: Session, for kinds: Set<AppStream.Kind>) throws -> GraphNode {
        let nodes = session.graph.nodes
        func find(_ among: [GraphNode]) -> GraphNode? { session.find(token, among: among) }
        let sinks = nodes.filter(\.isSink), sources = nodes.filter(\.isSource)
        let wanted = kinds == [.recording] ? [sources, sinks] : [sinks, sources]
        if let device = find(wanted[0]) ?? find(wanted[1]) { return device }
        let choices = kinds.contains(.playback) && kinds.contains(.recording) ? sinks + sources : kinds.contains(.recording) ? sources : sinks
        let what = kinds == [.recording] ? "source" : kinds == [.playback] ? "sink" : "sink or source"
        guard let other = find(nodes) else {
            let (ordered, close) = NameSuggestions.rank(token, choices) { [$0.name, $0.description] }
            let suggestion = NameSuggestions.phrase(close.map { $0.name.printable })
            throw CommandError.notFound("unknown \(what) '\(token.printable)'; " + (suggestion.isEmpty ? "" : suggestion + " ")
                + (ordered.isEmpty ? "there is none" : "the \(what)s are: " + ordered.map(session.label).joined(separator: ", ")), argument: "to")
        }
        let reason = other.crosspointShape != nil
            ? "it is a Crosspoint node; use one of its virtual devices (crosspoint virtual list \(other.name.printable))"
            : "its media.class is " + (other.mediaClass?.printable ?? "not set")
        throw CommandError.invalid("'\(token.printable)' (id \(other.id)) is not a \(what): \(reason); the \(what)s are: "
                                   + choices.map(session.label).joined(separator: ", "))
    }

    /// Waits until each stream that was linked is linked to its device alone (the session
    /// manager relinks it within a moment), or has ended. A stream that was not linked is not
    /// waited for.
    private static func waitForMove(_ moves: [(stream: AppStream, device: GraphNode)], before: [UInt32: [String]], _ session: Session) throws {
        let waiting = moves.filter { !(before[$0.stream.id] ?? []).isEmpty }
        guard !waiting.isEmpty else { return }
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            try session.refresh()
            let graph = session.graph
            let pending = waiting.filter { move in
                guard graph.node(move.stream.id) != nil else { return false }  // it ended
                return graph.places(of: move.stream).map(\.node.id) != [move.device.id]
            }
            if pending.isEmpty { return }
            guard ContinuousClock.now < deadline else {
                let now = pending.map { "\(label($0.stream)) is on " + graph.places(of: $0.stream).map(\.node.name).joined(separator: ", ").printable }
                throw CommandError.invalid("the session manager did not move "
                    + pending.map { "\(label($0.stream)) to \($0.device.name.printable)" }.joined(separator: ", ")
                    + " within 5 s (\(now.joined(separator: "; "))); its target is set in the default metadata")
            }
            _ = try session.client.iterateOnce(milliseconds: 50)
        }
    }
}
