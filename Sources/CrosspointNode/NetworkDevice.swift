import CPipeWire
import CrosspointCore
import Glibc
import CrosspointPipeWire

/// A device that goes over the network (`send`, `receive`: NetworkStreams.swift), made of
/// PipeWire's own RTP modules, loaded into the node's context as a drop-in would load them, and
/// named, linked and removed like every device of the node (`VirtualDeviceHost`). Nothing of
/// the protocol is Crosspoint's: what goes on the wire is what `module-rtp-sink` sends and a
/// stock `module-rtp-source` receives.
///
/// - A sender is `module-rtp-sink`, its stream named after the device, a recording stream
///   (`Stream/Input/Audio`, pactl's source-outputs, as PulseAudio's `module-rtp-send`), not
///   linked by the session manager (`node.autoconnect = false`): the node links its outputs into
///   the stream's ports (`input_FL` on 0.3.65, `send_FL` on 1.x), not passively, so that it
///   sends whatever feeds the node (silence too: a stream on the wire is continuous).
///   0.3.65's sender announces its stream by SAP itself; 1.x's does not, and the node loads
///   `module-rtp-sap` beside it (a companion of the device) whose rule announces that node alone.
/// - A receiver is `module-rtp-source`, a playback stream (`Stream/Output/Audio`, as PulseAudio's
///   `module-rtp-recv`) whose ports (`output_FL` on 0.3.65,
///   `receive_FL` on 1.x) the node links into its inputs. PipeWire 1.x's takes an address and port (`source.ip`,
///   `source.port`; `0.0.0.0` for unicast, a group to join for multicast) and drops a sender
///   that restarts with a new SSRC unless told not to (`sess.ignore-ssrc`, set). PipeWire 0.3.65's
///   takes no address: it listens to the SAP announcements that 0.3.65's sender makes and makes
///   a stream of each session; the receiver takes the one of its `session` (a `create-stream`
///   rule naming it), and waits for it to be announced. On 1.x a receiver by `session` alone is
///   `module-rtp-sap` with such a rule: it makes the `module-rtp-source` of that session.
/// - VBAN (`protocol=vban`, PipeWire 0.3.76 and later): `module-vban-send` sends the stream
///   under its name to an address; `module-vban-recv` listens on a port and makes a stream of
///   each name it hears, this device the one its rule names.
/// - AES67 (`protocol=aes67`, PipeWire 1.x): the same RTP modules, with what
///   `pipewire-aes67.conf` gives them: 48 kHz in packets of 1 ms, timestamps from the graph's
///   clock (`sess.ts-offset = 0`), announced to AES67's SAP group with the PTP grandmaster that
///   ptp4l reports (`rtp.fetch-ts-refclk`, the announcer's `ptp.management-socket`), and the
///   stream in the PTP clock's driver group (`node.group`, `pipewire.ptp0` by default) so that
///   the PTP driver drives it, the node and what is linked to them.
/// - Every stream given a `group=` joins that driver group (`node.group`).
///
/// The arguments differ by the running PipeWire's version (`pw_get_library_version`): the one
/// the node runs in, daemon or client.
struct NetworkDevice: DeviceKind {
    /// True on PipeWire 1.x, whose RTP receiver takes an address (0.3.65's receives only what
    /// SAP announces) and whose RTP streams name their ports `send_FL`, `receive_FL` (0.3.65's,
    /// streams: `input_FL`, `output_FL`).
    let pipeWireOne: Bool

    /// True where PipeWire has VBAN's modules (0.3.76 and later).
    let hasVBAN: Bool

    /// True where PipeWire's RTP has what AES67 asks (1.0 and later): a PTP reference clock in
    /// its announcements, timestamps from a PTP-driven graph, packets of 1 ms.
    var hasAES67: Bool { pipeWireOne }

    init(pipeWireOne: Bool = RunningPipeWire.atLeast(1, 0), hasVBAN: Bool = RunningPipeWire.atLeast(0, 3, 76)) {
        self.pipeWireOne = pipeWireOne
        self.hasVBAN = hasVBAN
    }

    static let senderModule = "libpipewire-module-rtp-sink"
    static let receiverModule = "libpipewire-module-rtp-source"
    static let announcerModule = "libpipewire-module-rtp-sap"
    static let vbanSenderModule = "libpipewire-module-vban-send"
    static let vbanReceiverModule = "libpipewire-module-vban-recv"
    /// VBAN's rate: VB-Audio's usual one, and the graph's (PipeWire's VBAN sender would send
    /// 44,100 Hz, resampled, unless told).
    static let vbanRate = 48000

    func makes(_ device: VirtualDevice) -> Bool { device.kind.isNetwork }

    func request(for device: VirtualDevice, node: String) -> DeviceRequest {
        let stream = device.network ?? NetworkStream()
        let sending = device.kind == .send
        let streamProps: [(String, SPA)] = [
            (PW_KEY_NODE_NAME, .text(device.name)),
            (PW_KEY_NODE_DESCRIPTION, .text(device.description)),
            // Streams, not devices (as PulseAudio's RTP modules show: a recording stream that
            // sends, a playback stream that receives): a network stream runs on its own, and its
            // links to the node are not passive (PipeWire 1.x makes a link to a node whose class
            // is a sink or source passive from the node's `node.passive`, whatever the link
            // asks; 0.3 from `link.passive`, which `GraphMirror` sets only for devices). A
            // receiver then plays what arrives into a node whose outputs go to the speakers, and
            // a sender fed by a microphone sends (measured: linked passively on both ends, the
            // graph of a machine that only received and sent back never ran).
            (PW_KEY_MEDIA_CLASS, .text(sending ? MediaClass.recordingStream : MediaClass.playbackStream)),
            (PW_KEY_NODE_AUTOCONNECT, .word("false")),
            (PW_KEY_NODE_VIRTUAL, .word("true")),
            (CrosspointProperty.deviceOf, .text(node)),
        ] + (stream.group.map { [(PW_KEY_NODE_GROUP, SPA.text($0))] } ?? [])
        if stream.wire == .vban { return vbanRequest(for: device, stream: stream, streamProps: streamProps) }
        if pipeWireOne, !sending, stream.address == nil, let session = stream.session {
            return announcedReceiver(for: device, session: session, stream: stream, streamProps: streamProps)
        }
        let aes67 = stream.wire == .aes67
        var arguments: [(String, SPA)] = [
            ("audio.format", .word(stream.format)),
            ("audio.channels", .word("\(device.positions.count)")),
            ("audio.position", .list(device.positions.map { .word($0) })),
        ]
        if aes67 { arguments.append(("audio.rate", .word("\(NetworkStream.aes67Rate)"))) }
        if sending {
            arguments += [
                ("destination.ip", .text(stream.address ?? "")),
                ("destination.port", .word("\(stream.port ?? 0)")),
                ("sess.name", .text(stream.session ?? device.name)),
            ]
            if aes67 {
                // As pipewire-aes67.conf sends: packets of 1 ms, RTP timestamps from the
                // (PTP-driven) graph's clock, the reference clock named in the announcement.
                arguments += [
                    ("sess.min-ptime", .word("\(NetworkStream.aes67PacketTime)")),
                    ("sess.max-ptime", .word("\(NetworkStream.aes67PacketTime)")),
                    ("sess.media", .word("audio")),
                    ("sess.ts-refclk", .text("ptp=traceable")),
                    ("sess.ts-offset", .word("0")),
                    // What it buffers before sending: the most the graph's quantum may be.
                    ("sess.latency.msec", .word("\(stream.latency)")),
                ]
            }
        } else {
            arguments.append(("sess.latency.msec", .word("\(stream.latency)")))
            if pipeWireOne {
                arguments += [
                    ("source.ip", .text(stream.address ?? "0.0.0.0")),
                    ("source.port", .word("\(stream.port ?? 0)")),
                    ("sess.ignore-ssrc", .word("true")),
                ]
                if let session = stream.session { arguments.append(("sess.name", .text(session))) }
            } else {
                // 0.3.65: the session announced by that name, made this device (the rule's
                // properties win over the stream's own name, the session's).
                arguments.append(("stream.rules", Self.rules(matching: [("rtp.session", .text(stream.session ?? device.name))],
                                                            "create-stream", [(PW_KEY_NODE_NAME, .text(device.name))])))
            }
        }
        // 1.x: the channels' names announced (`i=2 channels: FL, FR`), for receivers that name
        // their ports after them.
        let named = sending && pipeWireOne ? [("node.channel-names", SPA.text(device.positions.joinedBytes(separator: ", ")))] : []
        // AES67: the grandmaster asked of the PTP daemon for the announcement (`a=ts-refclk`),
        // and no NTP time in it (`rtp.ntp`), as pipewire-aes67.conf's sender.
        let clocked: [(String, SPA)] = sending && aes67 ? [("rtp.fetch-ts-refclk", .word("true")), ("rtp.ntp", .word("0"))] : []
        arguments.append(("stream.props", .object(streamProps + named + clocked)))
        guard sending, pipeWireOne else {
            return .module(name: sending ? Self.senderModule : Self.receiverModule, arguments: SPA.object(arguments).text)
        }
        // 1.x's sender announces nothing by itself: `module-rtp-sap` beside it announces its
        // node (and nothing else: its rule names this node alone, and makes no receivers).
        let rules = Self.rules(matching: [(PW_KEY_NODE_NAME, .text(device.name)), (CrosspointProperty.deviceOf, .text(node))], "announce-stream", [])
        let announcing = (aes67 ? Self.aes67Announcing(ptp: stream.ptpSocket) : []) + [("stream.rules", rules)]
        let announcer = DeviceRequest.Companion(name: Self.announcerModule, arguments: SPA.object(announcing).text)
        return .module(name: Self.senderModule, arguments: SPA.object(arguments).text, companion: announcer)
    }

    /// PipeWire 1.x's receiver of a stream by the name its sender announces: `module-rtp-sap`
    /// listening to the announcements, its rule making a receiver (`module-rtp-source`, with the
    /// announced address, port, format and channels) of the session of that name only, as this
    /// device (the rule's properties: its name, class, latency). The stream comes and goes with
    /// its announcements (a sender's deletion, 90 s of silence).
    private func announcedReceiver(for device: VirtualDevice, session: String, stream: NetworkStream,
                                   streamProps: [(String, SPA)]) -> DeviceRequest {
        // The ports named after this device's positions whatever the announcement says (a
        // receiver names them after its `i=` channel names: AUX1, AUX2 from a sender that gives
        // none, 01, 08 from AES67 gear), so that the node links them by name.
        let made = streamProps + [("sess.latency.msec", .word("\(stream.latency)")),
                                  ("audio.position", .list(device.positions.map { .word($0) })),
                                  ("node.channel-names", .text(device.positions.joinedBytes(separator: ", ")))]
        let rules = Self.rules(matching: [("rtp.session", .text(session))], "create-stream", made)
        let listening = (stream.wire == .aes67 ? Self.aes67Announcing(ptp: nil) : []) + [("stream.rules", rules)]
        return .module(name: Self.announcerModule, arguments: SPA.object(listening).text)
    }

    /// `module-rtp-sap`'s arguments for AES67: its SAP group (AES67 gear announces and listens
    /// there, not on PipeWire's 224.0.0.56), and for a sender's announcement the PTP daemon's
    /// management socket, asked for the grandmaster's identity.
    static func aes67Announcing(ptp socket: String?) -> [(String, SPA)] {
        [("sap.ip", .text(NetworkStream.aes67SAPGroup))] + (socket.map { [("ptp.management-socket", .text($0))] } ?? [])
    }

    /// VBAN (`module-vban-send`, `module-vban-recv`): a sender sends its stream name
    /// (`sess.name`) in every packet; the receiver listens on an address and port and makes a
    /// stream of each name it hears, in the format the packets say: this device's is the one
    /// its rule names (`create-stream`, as 0.3.65's RTP receiver takes a session).
    private func vbanRequest(for device: VirtualDevice, stream: NetworkStream, streamProps: [(String, SPA)]) -> DeviceRequest {
        var arguments: [(String, SPA)] = [("audio.position", .list(device.positions.map { .word($0) }))]
        if device.kind == .send {
            arguments += [
                ("audio.format", .word(stream.format)),
                ("audio.channels", .word("\(device.positions.count)")),
                ("audio.rate", .word("\(Self.vbanRate)")),
                ("destination.ip", .text(stream.address ?? "")),
                ("destination.port", .word("\(stream.port ?? NetworkStream.vbanPort)")),
                ("sess.name", .text(stream.session ?? device.name)),
            ]
        } else {
            arguments += [
                ("source.ip", .text(stream.address ?? "0.0.0.0")),
                ("source.port", .word("\(stream.port ?? NetworkStream.vbanPort)")),
                ("sess.latency.msec", .word("\(stream.latency)")),
                ("stream.rules", Self.rules(matching: [("sess.name", .text(stream.session ?? device.name))],
                                            "create-stream", [(PW_KEY_NODE_NAME, .text(device.name))])),
            ]
        }
        arguments.append(("stream.props", .object(streamProps)))
        return .module(name: device.kind == .send ? Self.vbanSenderModule : Self.vbanReceiverModule, arguments: SPA.object(arguments).text)
    }

    /// A module's `stream.rules` of one rule: what it matches (every property given), and
    /// one action with its properties (`create-stream`: the stream made as this device;
    /// `announce-stream`: the node announced).
    static func rules(matching match: [(String, SPA)], _ action: String, _ properties: [(String, SPA)]) -> SPA {
        .list([.object([("matches", .list([.object(match)])), ("actions", .object([(action, .object(properties))]))])])
    }

    func links(of device: VirtualDevice) -> [DeviceLink] {
        zip(device.positions, device.channels).map { position, channel in
            device.kind == .receive
                ? DeviceLink(output: (pipeWireOne ? "receive_" : "output_") + position, input: PortName.input(channel), fromDevice: true)
                : DeviceLink(output: PortName.output(channel), input: (pipeWireOne ? "send_" : "input_") + position, fromDevice: false)
        }
    }

    func defaultKey(for device: VirtualDevice) -> String? { nil }

    func refusal(for device: VirtualDevice) -> String? {
        guard let stream = device.network else { return nil }
        if stream.wire == .aes67, !hasAES67 {
            return "AES67 needs PipeWire 1.0 or later (a PTP reference clock in its announcements, a PTP-driven graph), and this is \(String(cBytes: pw_get_library_version())): "
                + "for AES67 gear that does not ask for PTP, send protocol=rtp format=S24BE"
        }
        if stream.wire == .vban {
            return hasVBAN ? nil : "VBAN needs PipeWire 0.3.76 or later (module-vban-send, module-vban-recv), and this is \(String(cBytes: pw_get_library_version()))"
        }
        guard device.kind == .receive else { return nil }
        if !pipeWireOne, stream.session == nil {
            return "PipeWire \(String(cBytes: pw_get_library_version()))'s RTP receiver takes no address, only a stream its sender announces: give session=NAME"
        }
        return nil
    }

    /// PipeWire 0.3.65's RTP receiver reads the SAP announcements of the local link, and a
    /// malformed one ends it and the daemon (measured: a segfault in `module-rtp-source`,
    /// `NetworkStreamTests`; 1.x's `module-rtp-sap` reads them safely).
    func caution(for device: VirtualDevice) -> String? {
        guard device.kind == .receive, device.network?.wire == .rtp, !pipeWireOne else { return nil }
        return "PipeWire \(String(cBytes: pw_get_library_version()))'s RTP receiver ends the daemon on a malformed SAP announcement from the network (a bug of 0.3.65, not in 1.x): receive only on a network you trust"
    }

    /// What keeps a stream from being made now, asked before it is made and every few seconds
    /// while it is:
    /// - a sender: its route to its address, asked of the system as the RTP sender's own socket
    ///   does (a UDP socket connected to it: nothing is sent): PipeWire 0.3.65's sender does not
    ///   load without one, 1.x's loads and fails when its stream starts, leaving its node as it
    ///   was and never trying again;
    /// - a receiver of an address (PipeWire 1.x, RTP or VBAN): its port, bound as the receiver
    ///   binds it (`SO_REUSEADDR`, the group or any address): a program that holds the port
    ///   without sharing it leaves the receiver's stream failing to start, its module ending.
    func problem(for device: VirtualDevice) -> String? {
        guard let stream = device.network, let port = stream.port ?? (stream.wire == .vban ? NetworkStream.vbanPort : nil) else { return nil }
        switch device.kind {
        case .send:
            guard let address = stream.address else { return nil }
            return Self.route(to: address, port: port)
        case .receive:
            guard pipeWireOne || stream.wire == .vban else { return nil }
            return Self.portTaken(address: stream.address ?? "0.0.0.0", port: port)
        default:
            return nil
        }
    }

    /// Why there is no route to `address`, or nil if there is one.
    static func route(to address: String, port: Int) -> String? {
        withSocket(address: address, port: port) { fd, sa, length in
            connect(fd, sa, length) == 0 ? nil : "no route to \(address): \(String(cBytes: strerror(errno)))"
        }
    }

    /// Why a receiver cannot bind `port` (of a multicast group `address`, else of any address),
    /// or nil if it can.
    static func portTaken(address: String, port: Int) -> String? {
        let multicast = address.hasPrefix("ff") || (Int(address.prefix { $0 != "." }).map { (224...239).contains($0) } ?? false)
        let any = address.contains(":") ? "::" : "0.0.0.0"
        return withSocket(address: multicast ? address : any, port: port) { fd, sa, length in
            var on: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            guard bind(fd, sa, length) != 0 else { return nil }
            return errno == EADDRINUSE ? "port \(port) is held by another program that does not share it"
                : "port \(port) cannot be bound: \(String(cBytes: strerror(errno)))"
        }
    }

    /// `body` given a UDP socket of `address`'s family and `address`:`port` (IPv4, or IPv6
    /// without brackets); the socket closed after.
    private static func withSocket(address: String, port: Int,
                                   _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> String?) -> String? {
        let v6 = address.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "no socket: \(String(cBytes: strerror(errno)))" }
        defer { close(fd) }
        if v6 {
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = in_port_t(UInt16(clamping: port).bigEndian)
            guard address.withCString({ inet_pton(AF_INET6, $0, &sa.sin6_addr) }) == 1 else { return "'\(address)' is not an address" }
            return withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        guard address.withCString({ inet_pton(AF_INET, $0, &sa.sin_addr) }) == 1 else { return "'\(address)' is not an address" }
        return withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }

    /// A module's arguments in SPA-JSON, strings quoted and escaped.
    indirect enum SPA {
        case word(String)
        case text(String)
        case list([SPA])
        case object([(String, SPA)])

        var text: String {
            switch self {
            case let .word(w): w
            case let .text(t):
                "\"" + t.flatMap { $0 == "\"" || $0 == "\\" ? ["\\", $0] : [$0] }.map(String.init).joinedBytes(separator: "") + "\""
            case let .list(items): "[ " + items.map(\.text).joinedBytes(separator: " ") + " ]"
            case let .object(pairs): "{ " + pairs.map { "\($0.0) = \($0.1.text)" }.joinedBytes(separator: " ") + " }"
            }
        }
    }
}
