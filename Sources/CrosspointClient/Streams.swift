import CCrosspointShim
import CPipeWire
import CrosspointPipeWire
import Glibc

/// An application's stream: playback (`media.class` `Stream/Output/Audio`: what pavucontrol
/// lists under Playback and `pactl list sink-inputs` prints) or recording
/// (`Stream/Input/Audio`: pavucontrol's Recording, `pactl list source-outputs`).
public struct AppStream: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case playback, recording
        /// The stream's media class.
        public var mediaClass: String { self == .playback ? MediaClass.playbackStream : MediaClass.recordingStream }
    }

    public let node: GraphNode
    public let kind: Kind
    /// `application.name` (from the node, else from its client), else the node's name.
    public let application: String
    /// `application.process.id`, when the application said.
    public let pid: Int?
    /// `media.role` (Music, Game, Communication...), when the application said.
    public let role: String?
    /// `media.name`: what it plays (a file name, a tab's title), when the application said.
    public let media: String?

    public var id: UInt32 { node.id }
    /// `node.dont-move`: the stream asks never to be moved (the session manager ignores its target).
    public var refusesMoving: Bool { node.properties[StreamProperty.dontMove] == "true" }
}

/// One place a stream plays: a device (a sink), or a Crosspoint node's input channels, through
/// one of its virtual devices or linked straight into it.
public struct StreamPlace: Sendable, Equatable {
    /// The node the stream is linked to.
    public let node: GraphNode
    /// The Crosspoint node the audio goes on to, and the input channels it arrives on (the
    /// virtual device's, or those linked directly); nil for a device of its own.
    public let mixer: (name: String, inputs: [String])?

    public static func == (a: StreamPlace, b: StreamPlace) -> Bool {
        a.node == b.node && a.mixer?.name == b.mixer?.name && a.mixer?.inputs == b.mixer?.inputs
    }
}

/// What a stream is to be linked to (`GraphSnapshot.target(of:metadata:)`).
public enum StreamTarget: Sendable, Equatable {
    /// The default device, followed when it changes.
    case followsDefault
    /// A device by name (or the value as given, when no node has it).
    case pinned(String)
}

/// A Crosspoint node's virtual device as its `devices` key declares it.
public struct MixerDevice: Sendable, Equatable {
    /// The Crosspoint node's name.
    public let mixer: String
    /// The channels of the node the device carries: the inputs a sink feeds, the outputs a
    /// source records.
    public let inputs: [String]

    public init(mixer: String, inputs: [String]) { (self.mixer, self.inputs) = (mixer, inputs) }
}

extension GraphSnapshot {
    /// The application streams, playback and recording, in id order. `clients` (client id to
    /// its registry properties) fills in the application's name and process id for a stream
    /// whose node lacks them.
    public func appStreams(clients: [UInt32: [String: String]] = [:]) -> [AppStream] {
        nodes.compactMap { node -> (GraphNode, AppStream.Kind)? in
            guard node.isApplicationStream else { return nil }
            return switch node.mediaClass {
            case AppStream.Kind.playback.mediaClass: (node, .playback)
            case AppStream.Kind.recording.mediaClass: (node, .recording)
            default: nil
            }
        }.map { node, kind in
            let p = node.properties
            let client = p[PW_KEY_CLIENT_ID].flatMap { UInt32($0) }.flatMap { clients[$0] } ?? [:]
            func value(_ key: String) -> String? { (p[key] ?? client[key]).flatMap { $0.isEmpty ? nil : $0 } }
            // The process: as the application says (pipewire-pulse puts it on the stream), else
            // the client's socket credentials (a native client's registry entry carries only
            // those: measured with pw-play on 0.3.65).
            let pid = value(PW_KEY_APP_PROCESS_ID) ?? client[PW_KEY_SEC_PID]
            return AppStream(node: node, kind: kind, application: value(PW_KEY_APP_NAME) ?? node.name,
                             pid: pid.flatMap { Int($0) }, role: value(PW_KEY_MEDIA_ROLE),
                             media: value(PW_KEY_MEDIA_NAME))
        }
    }

    /// Where a stream plays now: the nodes its output ports are linked to, in id order. A
    /// virtual device of a Crosspoint node (`devices`, by device name) names the node and the
    /// inputs it feeds; a sink that is not in `devices` but whose monitor ports are linked into
    /// a Crosspoint node names the inputs they reach; a Crosspoint node linked directly, the
    /// inputs linked.
    public func places(of stream: AppStream, devices: [String: MixerDevice] = [:]) -> [StreamPlace] {
        if stream.kind == .recording { return recordingPlaces(of: stream, devices: devices) }
        let peers = Set(links.filter { $0.outputNode == stream.id }.map(\.inputNode))
        return peers.sorted().compactMap(node).map { peer in
            if peer.crosspointShape != nil {
                let inputs = links.filter { $0.outputNode == stream.id && $0.inputNode == peer.id }
                    .compactMap { port($0.inputPort) }.sorted { $0.index < $1.index }.map(Self.channel)
                return StreamPlace(node: peer, mixer: (peer.name, Self.unique(inputs)))
            }
            if let device = devices[peer.name] { return StreamPlace(node: peer, mixer: (device.mixer, device.inputs)) }
            // The sink's monitor ports linked into a Crosspoint node.
            let fed = links.filter { link in
                link.outputNode == peer.id && port(link.outputPort)?.isMonitor == true
                    && node(link.inputNode)?.crosspointShape != nil
            }
            if let first = fed.first, let mixer = node(first.inputNode) {
                let inputs = fed.filter { $0.inputNode == mixer.id }.compactMap { port($0.inputPort) }
                    .sorted { $0.index < $1.index }.map(Self.channel)
                return StreamPlace(node: peer, mixer: (mixer.name, Self.unique(inputs)))
            }
            return StreamPlace(node: peer, mixer: nil)
        }
    }

    /// Where a recording stream records from: the nodes linked into its input ports, in id
    /// order. A Crosspoint node's virtual source (`devices`, by device name) names the node
    /// and the outputs it carries; a Crosspoint node linked directly, the outputs linked.
    private func recordingPlaces(of stream: AppStream, devices: [String: MixerDevice]) -> [StreamPlace] {
        let peers = Set(links.filter { $0.inputNode == stream.id }.map(\.outputNode))
        return peers.sorted().compactMap(node).map { peer in
            if peer.crosspointShape != nil {
                let outputs = links.filter { $0.inputNode == stream.id && $0.outputNode == peer.id }
                    .compactMap { port($0.outputPort) }.sorted { $0.index < $1.index }
                    .map { $0.channel ?? PortName.outputChannel($0.name) ?? $0.name }
                return StreamPlace(node: peer, mixer: (peer.name, Self.unique(outputs)))
            }
            if let device = devices[peer.name] { return StreamPlace(node: peer, mixer: (device.mixer, device.inputs)) }
            return StreamPlace(node: peer, mixer: nil)
        }
    }

    /// What a stream is to be linked to: the device it is pinned to (a move, the application's
    /// own choice, or one the session manager remembered for it), or the default device,
    /// followed. `metadata` is the `default` metadata's keys for the stream (a move, which wins),
    /// read as WirePlumber reads them: `target.object` (a serial or name) first, then
    /// `target.node` (an id); -1 is no target. Without either there, the stream's own
    /// `target.object` / `target.node` properties (`pw-play --target`).
    public func target(of stream: AppStream, metadata: [String: String]) -> StreamTarget {
        func resolve(_ value: String) -> StreamTarget? {
            guard !value.isEmpty else { return nil }
            if value == DefaultMetadataKey.noTarget { return .followsDefault }
            if let number = UInt64(value) {
                let node = nodes.first { $0.properties[PW_KEY_OBJECT_SERIAL] == value } ?? UInt32(exactly: number).flatMap(node)
                return .pinned(node?.name ?? value)
            }
            return .pinned(value)
        }
        for source in [metadata, stream.node.properties] {
            for key in [DefaultMetadataKey.targetObject, DefaultMetadataKey.targetNode] {
                if let value = source[key], let target = resolve(value) { return target }
            }
        }
        return .followsDefault
    }

    /// A Crosspoint input port's channel: its `audio.channel`, else its name without `in_`.
    private static func channel(_ port: GraphPort) -> String {
        port.channel ?? PortName.inputChannel(port.name) ?? port.name
    }

    private static func unique(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}

extension PipeWireClient {
    /// The client objects' registry properties, by client id (`application.name`, and
    /// `pipewire.sec.pid`, the process the daemon saw connect).
    public func clientProperties() throws(ClientError) -> [UInt32: [String: String]] {
        let registry = try Registry(self)
        var clients: [UInt32: [String: String]] = [:]
        for global in registry.globals where global.type == "PipeWire:Interface:Client" { clients[global.id] = global.properties }
        return clients
    }

    /// Gives a stream back to the default device, as pipewire-pulse does for a move to the sink
    /// that is the default (`pactl move-sink-input ID @DEFAULT_SINK@`): `target.node` and
    /// `target.object` = -1 in the `default` metadata, which both WirePlumber 0.4 and 0.5 read
    /// as "no target": the stream plays on the default device, follows it when it changes, and
    /// the target remembered for the application (restore-stream) is forgotten. Both keys: the
    /// session manager reads `target.object` first. A stream that asks not to fall back
    /// (`node.dont-fallback`: WirePlumber 0.5 would end it over a -1) has the keys removed instead.
    public func moveStreamToDefault(_ stream: GraphNode) throws(ClientError) {
        let remove = stream.properties[StreamProperty.dontFallback] == "true"
        for key in [DefaultMetadataKey.targetNode, DefaultMetadataKey.targetObject] {
            try setMetadata(DefaultMetadataKey.metadataName, subject: stream.id, key: key,
                            type: remove ? nil : "Spa:Id", value: remove ? nil : DefaultMetadataKey.noTarget)
        }
    }

    /// Moves a stream to a sink the way `pactl move-sink-input` and pavucontrol do: in the
    /// `default` metadata, on the stream's id, `target.node` = the sink's id and
    /// `target.object` = its `object.serial` (PipeWire 1.x and WirePlumber 0.5 read the
    /// serial, 0.3 and WirePlumber 0.4 either). The session manager then relinks the stream,
    /// and remembers the choice for the application (restore-stream). The sink's serial comes
    /// from its properties; without one, only `target.node` is set.
    public func moveStream(_ stream: UInt32, to sink: GraphNode) throws(ClientError) {
        try setMetadata(DefaultMetadataKey.metadataName, subject: stream, key: DefaultMetadataKey.targetNode, type: "Spa:Id", value: "\(sink.id)")
        if let serial = sink.properties[PW_KEY_OBJECT_SERIAL], UInt64(serial) != nil {
            try setMetadata(DefaultMetadataKey.metadataName, subject: stream, key: DefaultMetadataKey.targetObject, type: "Spa:Id", value: serial)
        }
    }
}
