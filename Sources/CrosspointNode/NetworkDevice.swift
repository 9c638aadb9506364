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
/// - A sender is `module-rtp-sink`, its stream made an `Audio/Sink` named after the device
///   (`stream.props`: without them it is a capture stream that the session manager links to the
///   default source), not linked by the session manager (`node.autoconnect = false`): the node
///   links its outputs into the sink's ports (`playback_FL` on 0.3.65, `send_FL` on 1.x). Applications may choose it too, as
///   a sink; its session priority is the virtual devices' (never the default by itself).
/// - A receiver is `module-rtp-source`, an `Audio/Source` whose ports (`capture_FL` on 0.3.65,
///   `receive_FL` on 1.x) the node links into its inputs. PipeWire 1.x's takes an address and port (`source.ip`,
///   `source.port`; `0.0.0.0` for unicast, a group to join for multicast) and drops a sender
///   that restarts with a new SSRC unless told not to (`sess.ignore-ssrc`, set). PipeWire 0.3.65's
///   takes no address: it listens to the SAP announcements that 0.3.65's sender makes and makes
///   a stream of each session; the receiver takes the one of its `session` (a `create-stream`
///   rule naming it), and waits for it to be announced.
///
/// The arguments differ by the running PipeWire's version (`pw_get_library_version`): the one
/// the node runs in, daemon or client.
struct NetworkDevice: DeviceKind {
    /// True on PipeWire 1.x, whose RTP receiver takes an address (0.3.65's receives only what
    /// SAP announces) and whose RTP streams name their ports `send_FL`, `receive_FL` (0.3.65's:
    /// `playback_FL`, `capture_FL`).
    let pipeWireOne: Bool

    init(pipeWireOne: Bool = RunningPipeWire.atLeast(1, 0)) {
        self.pipeWireOne = pipeWireOne
    }

    static let senderModule = "libpipewire-module-rtp-sink"
    static let receiverModule = "libpipewire-module-rtp-source"

    func makes(_ device: VirtualDevice) -> Bool { device.kind.isNetwork }

    func request(for device: VirtualDevice, node: String) -> DeviceRequest {
        let stream = device.network ?? NetworkStream()
        let sending = device.kind == .send
        let streamProps: [(String, SPA)] = [
            (PW_KEY_NODE_NAME, .text(device.name)),
            (PW_KEY_NODE_DESCRIPTION, .text(device.description)),
            (PW_KEY_MEDIA_CLASS, .text(sending ? MediaClass.sink : MediaClass.source)),
            (PW_KEY_NODE_AUTOCONNECT, .word("false")),
            (PW_KEY_NODE_VIRTUAL, .word("true")),
            (PW_KEY_PRIORITY_SESSION, .word(NullSinkDevice.sessionPriority)),
            (CrosspointProperty.deviceOf, .text(node)),
        ]
        var arguments: [(String, SPA)] = [
            ("audio.format", .word(stream.format)),
            ("audio.channels", .word("\(device.positions.count)")),
            ("audio.position", .list(device.positions.map { .word($0) })),
        ]
        if sending {
            arguments += [
                ("destination.ip", .text(stream.address ?? "")),
                ("destination.port", .word("\(stream.port ?? 0)")),
                ("sess.name", .text(stream.session ?? device.name)),
            ]
        } else {
            arguments.append(("sess.latency.msec", .word("\(stream.latencyMilliseconds ?? 100)")))
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
                let match: SPA = .object([("rtp.session", .text(stream.session ?? device.name))])
                let rule: SPA = .object([("matches", .list([match])),
                                         ("actions", .object([("create-stream", .object([(PW_KEY_NODE_NAME, .text(device.name))]))]))])
                arguments.append(("stream.rules", .list([rule])))
            }
        }
        arguments.append(("stream.props", .object(streamProps)))
        return .module(name: sending ? Self.senderModule : Self.receiverModule, arguments: SPA.object(arguments).text)
    }

    func links(of device: VirtualDevice) -> [DeviceLink] {
        zip(device.positions, device.channels).map { position, channel in
            device.kind == .receive
                ? DeviceLink(output: (pipeWireOne ? "receive_" : "capture_") + position, input: PortName.input(channel), fromDevice: true)
                : DeviceLink(output: PortName.output(channel), input: (pipeWireOne ? "send_" : "playback_") + position, fromDevice: false)
        }
    }

    func defaultKey(for device: VirtualDevice) -> String? { nil }

    func refusal(for device: VirtualDevice) -> String? {
        guard device.kind == .receive, let stream = device.network else { return nil }
        if pipeWireOne, stream.address == nil {
            return "this PipeWire's RTP receiver takes an address: give from=ADDRESS:PORT (finding streams by name is to come)"
        }
        if !pipeWireOne, stream.session == nil {
            return "PipeWire \(String(cBytes: pw_get_library_version()))'s RTP receiver takes no address, only a stream its sender announces: give session=NAME"
        }
        return nil
    }

    /// A sender's route to its address, asked of the system as the RTP sender's own socket
    /// does (a UDP socket connected to it: nothing is sent): PipeWire 0.3.65's sender does not
    /// load without one, 1.x's loads and fails when its stream starts, leaving its node as it
    /// was and never trying again. Asked before it is made and every few seconds while it is.
    func problem(for device: VirtualDevice) -> String? {
        guard device.kind == .send, let stream = device.network, let address = stream.address, let port = stream.port else { return nil }
        return Self.route(to: address, port: port)
    }

    /// Why there is no route to `address`, or nil if there is one.
    static func route(to address: String, port: Int) -> String? {
        let v6 = address.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "no socket: \(String(cBytes: strerror(errno)))" }
        defer { close(fd) }
        var result: Int32 = -1
        if v6 {
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = in_port_t(UInt16(clamping: port).bigEndian)
            guard address.withCString({ inet_pton(AF_INET6, $0, &sa.sin6_addr) }) == 1 else { return "'\(address)' is not an address" }
            result = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        } else {
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
            guard address.withCString({ inet_pton(AF_INET, $0, &sa.sin_addr) }) == 1 else { return "'\(address)' is not an address" }
            result = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        return result == 0 ? nil : "no route to \(address): \(String(cBytes: strerror(errno)))"
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
