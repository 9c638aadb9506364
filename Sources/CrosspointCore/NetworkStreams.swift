import Glibc

/// A device that carries audio over the network: a group of the node's outputs sent as one
/// stream (`send`), or a stream received into a group of its inputs (`receive`). Crosspoint
/// writes no network protocol: the node makes PipeWire's own sender and receiver
/// (`module-rtp-sink`, `module-rtp-source`; CrosspointNode, NetworkDevice.swift) as it makes
/// its virtual devices, links them and removes them with itself. This file is the model: the
/// options of a `send` or `receive` line of `devices` (VirtualDevices.swift), read and written
/// back, checked, and nothing of PipeWire.
///
///     send stream-out to=239.69.1.10:5004 channels=stream_FL,stream_FR session=desk-stream
///     receive guest from=0.0.0.0:5004 latency=20
///     receive guest session=desk-stream latency=20
///
/// - `to=ADDRESS:PORT` (send): where the stream goes, unicast or multicast; IPv4 as four
///   numbers, IPv6 in brackets (`[ff15::1]:5004`).
/// - `from=ADDRESS:PORT` (receive): the port it arrives on; the address a multicast group to
///   join, or `0.0.0.0` for unicast (what PipeWire 1.x's `module-rtp-source` takes).
/// - `session=NAME`: the stream's name (RTP's session name, announced by SAP). A sender
///   without one uses the device's name. PipeWire 0.3.65 receives a stream only by the name
///   its sender announces (its `module-rtp-source` listens to SAP and takes no address).
/// - `format=`: the samples on the wire (RTP: S16BE, as PipeWire sends by default, S24BE for
///   AES67, L16/L24 names taken too).
/// - `latency=MS` (receive): what the receiver holds back against jitter
///   (`sess.latency.msec`; 100 ms when not given, as PipeWire's default; AES67: 3 ms, as
///   `pipewire-aes67`). An AES67 sender takes one too: what it gathers before it sends, the
///   most the graph's quantum may then be (3 ms when not given, as `pipewire-aes67`'s sender).
/// - `protocol=rtp` (the default), `protocol=vban` (VB-Audio's VBAN, as Voicemeeter sends
///   and receives it: PipeWire's `module-vban-send`/`-recv`, PipeWire 0.3.76 and later) or
///   `protocol=aes67` (RTP as AES67 gear and PipeWire's `pipewire-aes67` send it: L24 or L16 at
///   48 kHz in packets of 1 ms, announced by SAP to AES67's group with the PTP clock it follows,
///   the stream in a PTP-driven group; PipeWire 1.0 and later). A VBAN stream's `session` is
///   its stream name (at most 15 characters); a VBAN receiver takes its stream by that name
///   (`session=`, required) on the port of `from=` (0.0.0.0:6980 when not given).
/// - `group=NAME`: the PipeWire driver group the stream joins (`node.group`), so that the
///   driver of that group (a PTP clock: conf/crosspoint-ptp-clock.conf, or `pipewire-aes67`'s
///   `PTP0-Driver`) drives the stream, the node and everything linked to them. AES67's default:
///   `pipewire.ptp0`, the group of both; other protocols join none unless given.
/// - `ptp=PATH` (an AES67 sender): the PTP daemon's management socket, from which its
///   announcement takes the grandmaster clock it names (`a=ts-refclk:ptp=IEEE1588-2008:...`):
///   ptp4l's read-only one, `/var/run/ptp4lro`, when not given, as `pipewire-aes67` asks it.
public struct NetworkStream: Equatable, Sendable {
    public enum Wire: String, Sendable, CaseIterable {
        case rtp, vban, aes67

        /// The samples on the wire, as PipeWire's modules name them: RTP's network order, VBAN's
        /// little-endian (its data types: 8-bit, 16, 24 and 32-bit integers, 32 and 64-bit floats).
        public var formats: [String] {
            switch self {
            case .rtp: ["S16BE", "S24BE", "U8", "ALAW", "ULAW"]
            case .vban: ["S16LE", "S24LE", "S32LE", "F32LE", "F64LE", "U8"]
            // AES67's two (its L24 first, as `pipewire-aes67` sends).
            case .aes67: ["S24BE", "S16BE"]
            }
        }

        /// What a stream sends when `format=` is not given: each module's own default.
        public var defaultFormat: String { formats[0] }

        /// The longest stream name: SAP's `s=` line for RTP; VBAN's header holds 16 bytes, and
        /// PipeWire 1.4.2's sender copies the name into it with its terminator.
        public var sessionLimit: Int { self == .vban ? 15 : 63 }

        var name: String {
            switch self {
            case .rtp: "RTP"
            case .vban: "VBAN"
            case .aes67: "AES67"
            }
        }

        /// The latency (ms) when `latency=` is not given: PipeWire's RTP default, AES67's as
        /// `pipewire-aes67.conf` sets it for its sender and receivers.
        public var defaultLatency: Int { self == .aes67 ? 3 : 100 }

        /// The driver group a stream joins when `group=` is not given: AES67's PTP-driven one.
        public var defaultGroup: String? { self == .aes67 ? NetworkStream.ptpGroup : nil }
    }

    /// The samples on the wire, every protocol's (`Wire.formats`).
    public static let formats = Wire.allCases.flatMap(\.formats).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    /// RTP's other names for its formats (RFC 3551: L16, L24).
    static let formatAliases = ["L16": "S16BE", "L24": "S24BE"]
    /// The longest session name of any protocol (`Wire.sessionLimit`).
    public static let sessionLimit = 63
    /// VBAN's port, when a receiver's `from=` does not give one.
    public static let vbanPort = 6980
    /// The receiver's latency, in milliseconds.
    public static let latencyRange = 1...5000
    /// The driver group of PipeWire's PTP clock (`pipewire-aes67`'s `PTP0-Driver`, and
    /// conf/crosspoint-ptp-clock.conf's).
    public static let ptpGroup = "pipewire.ptp0"
    /// ptp4l's read-only management socket, where an AES67 sender's announcement asks for the
    /// grandmaster clock (as `pipewire-aes67` does).
    public static let ptpSocket = "/var/run/ptp4lro"
    /// AES67's rate and packet time (ms): what its receivers must take.
    public static let aes67Rate = 48000
    public static let aes67PacketTime = 1
    /// AES67's SAP group (PipeWire's own is 224.0.0.56).
    public static let aes67SAPGroup = "239.255.255.255"

    public var wire: Wire
    /// Where it goes (send) or arrives (receive); nil for a receiver that takes its stream by
    /// session name.
    public var address: String?
    public var port: Int?
    public var session: String?
    /// The format given (`format=`); nil: the protocol's default.
    private var formatGiven: String?
    /// Receive only: `sess.latency.msec`.
    public var latencyMilliseconds: Int?
    /// `sess.latency.msec`: the one given, else the protocol's default.
    public var latency: Int { latencyMilliseconds ?? wire.defaultLatency }

    /// The group given (`group=`); nil: the protocol's default.
    private var groupGiven: String?
    /// An AES67 sender: the PTP management socket given (`ptp=`); nil: ptp4l's.
    private var ptpGiven: String?

    /// The driver group it joins (`node.group`): the one given, else the protocol's (none for RTP and VBAN).
    public var group: String? {
        get { groupGiven ?? wire.defaultGroup }
        set { groupGiven = newValue }
    }

    /// An AES67 sender's PTP management socket: the one given, else ptp4l's read-only one.
    public var ptpSocket: String {
        get { ptpGiven ?? Self.ptpSocket }
        set { ptpGiven = newValue }
    }

    /// The samples on the wire: the one given, else the protocol's default.
    public var format: String {
        get { formatGiven ?? wire.defaultFormat }
        set { formatGiven = newValue }
    }

    public init(wire: Wire = .rtp, address: String? = nil, port: Int? = nil, session: String? = nil, format: String? = nil,
                latencyMilliseconds: Int? = nil, group: String? = nil, ptpSocket: String? = nil) {
        (self.wire, self.address, self.port, self.session, self.formatGiven, self.latencyMilliseconds, self.groupGiven, self.ptpGiven)
            = (wire, address, port, session, format, latencyMilliseconds, group, ptpSocket)
    }

    /// Equal when they send or receive the same: a default and the same value given are one.
    public static func == (a: NetworkStream, b: NetworkStream) -> Bool {
        a.wire == b.wire && a.address == b.address && a.port == b.port && a.session == b.session && a.format == b.format
            && a.latencyMilliseconds == b.latencyMilliseconds && a.group == b.group && a.ptpSocket == b.ptpSocket
    }

    /// The options this file reads (`read(option:)`), as a line and a module argument name them.
    public static let options = ["protocol", "to", "from", "session", "format", "latency", "group", "ptp"]
    /// The options, for the errors that list them.
    static let optionNames = options.map { $0 + "=" }.joinedBytes(separator: ", ")
    /// The longest socket path (`sockaddr_un`'s).
    static let socketPathLimit = 107

    /// Reads one option of a `send`/`receive` line into `stream`; false if `name` is not one of
    /// its options.
    static func read(option name: String, value: Substring, into stream: inout NetworkStream, sending: Bool) throws(CrosspointError) -> Bool {
        let key = VirtualDevice.key
        switch name {
        case "to", "from":
            guard (name == "to") == sending else {
                throw .invalidValue(key: key, reason: "a \(sending ? "sender" : "receiver") takes \(sending ? "to=" : "from="), not \(name)=")
            }
            (stream.address, stream.port) = try endpoint(value)
        case "session":
            guard isPlainName(value) else {
                throw .invalidValue(key: key, reason: "session '\(value.prefix(80))' is not a session name (1 to \(sessionLimit) ASCII letters, digits, -, _ and .)")
            }
            stream.session = String(value)
        case "format":
            let upper = value.uppercased()
            guard let format = formats.contains(upper) ? upper : formatAliases[upper] else {
                throw .invalidValue(key: key, reason: "format '\(value.prefix(40))' is not one RTP or VBAN carries (RTP: \(Wire.rtp.formats.joinedBytes(separator: ", ")); VBAN: \(Wire.vban.formats.joinedBytes(separator: ", ")))")
            }
            stream.format = format
        case "latency":
            let digits = value.hasSuffix("ms") ? value.dropLast(2) : value
            guard let ms = Int(digits), latencyRange.contains(ms) else {
                throw .invalidValue(key: key, reason: "latency '\(value.prefix(40))' is not \(latencyRange.lowerBound) to \(latencyRange.upperBound) ms")
            }
            stream.latencyMilliseconds = ms
        case "protocol":
            guard let wire = Wire(rawValue: value.lowercased()) else {
                throw .invalidValue(key: key, reason: "protocol '\(value.prefix(40))' is not one Crosspoint sends (rtp, vban or aes67)")
            }
            stream.wire = wire
        case "group":
            guard isPlainName(value) else {
                throw .invalidValue(key: key, reason: "group '\(value.prefix(80))' is not a driver group's name (1 to \(sessionLimit) ASCII letters, digits, -, _ and ., e.g. \(ptpGroup))")
            }
            stream.group = String(value)
        case "ptp":
            guard sending else { throw .invalidValue(key: key, reason: "ptp= is an AES67 sender's: its announcement names the PTP clock it follows") }
            guard value.hasPrefix("/"), (2...socketPathLimit).contains(value.utf8.count),
                  value.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" && $0 != "\\" && ($0.asciiValue ?? 0) >= 0x20 }) else {
                throw .invalidValue(key: key, reason: "ptp '\(value.prefix(80))' is not a socket's path (absolute, at most \(socketPathLimit) characters, no spaces or quotes; ptp4l's read-only socket is \(ptpSocket))")
            }
            stream.ptpSocket = String(value)
        default:
            return false
        }
        return true
    }

    /// A session's or a driver group's name: 1 to `sessionLimit` ASCII letters, digits, `-`, `_`
    /// and `.`.
    static func isPlainName(_ value: Substring) -> Bool {
        (1...sessionLimit).contains(value.utf8.count) && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }

    /// `ADDRESS:PORT`: an IPv4 address as four numbers or an IPv6 one in brackets, and a port.
    static func endpoint(_ text: Substring) throws(CrosspointError) -> (String, Int) {
        let usage = "write ADDRESS:PORT, e.g. 239.69.1.10:5004 or [ff15::1]:5004"
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw .invalidValue(key: VirtualDevice.key, reason: "'\(text.prefix(80))' is not an address and port: \(usage)")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw .invalidValue(key: VirtualDevice.key, reason: "'\(text.prefix(80))' has no port: \(usage)")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw .invalidValue(key: VirtualDevice.key, reason: "'\(portText.prefix(20))' in '\(text.prefix(80))' is not a port (1 to 65535)")
        }
        guard isNumericAddress(host, v6: text.hasPrefix("[")) else {
            throw .invalidValue(key: VirtualDevice.key, reason: "'\(host.prefix(60))' is not an IP address (numbers, not a host name: \(usage))")
        }
        return (String(host), port)
    }

    /// True for an IPv4 address in dotted decimal, or an IPv6 one (`v6`), as inet_pton reads them.
    static func isNumericAddress(_ host: Substring, v6: Bool) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 45 else { return false }
        var buffer = (UInt64(0), UInt64(0))
        return String(host).withCString { inet_pton(v6 ? AF_INET6 : AF_INET, $0, &buffer) } == 1
    }

    /// The address as `to=`/`from=` write it: IPv6 in brackets.
    var endpointText: String? {
        guard let address, let port else { return nil }
        return address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    /// The options, as `read` reads them (after the device's name).
    func text(sending: Bool) -> String {
        var words = ["protocol=\(wire.rawValue)"]
        if let endpoint = endpointText { words.append("\(sending ? "to" : "from")=\(endpoint)") }
        if let session { words.append("session=\(session)") }
        words.append("format=\(format)")
        if let latencyMilliseconds { words.append("latency=\(latencyMilliseconds)") }
        if let groupGiven { words.append("group=\(groupGiven)") }
        if let ptpGiven { words.append("ptp=\(ptpGiven)") }
        return words.joinedBytes(separator: " ")
    }

    /// For people: `rtp to 239.69.1.10:5004, session desk, S16BE`, `rtp from 0.0.0.0:5004,
    /// S16BE, latency 20 ms`.
    public func summary(sending: Bool) -> String {
        var parts = [wire.rawValue + (endpointText.map { " \(sending ? "to" : "from") \($0)" } ?? "")]
        if let session { parts.append("session \(session)") }
        parts.append(format)
        if let latencyMilliseconds { parts.append("latency \(latencyMilliseconds) ms") }
        if let group { parts.append("group \(group)") }
        return parts.joinedBytes(separator: ", ")
    }

    /// What a line must say beyond its options: a sender where to send, a receiver where or what
    /// to receive.
    func check(sending: Bool, name: String) throws(CrosspointError) {
        let key = VirtualDevice.key
        if sending, address == nil {
            throw .invalidValue(key: key, reason: "sender '\(name)' says not where to send: give to=ADDRESS:PORT")
        }
        if !sending, address == nil, session == nil {
            throw .invalidValue(key: key, reason: "receiver '\(name)' says not what to receive: give from=ADDRESS:PORT or session=NAME")
        }
        guard wire.formats.contains(format) else {
            throw .invalidValue(key: key, reason: "format \(format) is not one \(wire.name) carries (\(wire.formats.joinedBytes(separator: ", ")))")
        }
        if sending, latencyMilliseconds != nil, wire != .aes67 {
            throw .invalidValue(key: key, reason: "latency= is the receiver's (and an AES67 sender's): a \(wire.name) sender sends as it mixes")
        }
        if ptpGiven != nil, wire != .aes67 {
            throw .invalidValue(key: key, reason: "ptp= is an AES67 sender's (protocol=aes67): \(wire.name) announces no PTP clock")
        }
        if wire == .vban {
            // A sender's stream name is its session, else the device's name.
            let stream = session ?? (sending ? name : "")
            guard stream.utf8.count <= wire.sessionLimit else {
                throw .invalidValue(key: key, reason: "'\(stream.prefix(80))' is too long for a VBAN stream name (at most \(wire.sessionLimit) characters): give session=NAME")
            }
            if !sending, session == nil {
                throw .invalidValue(key: key, reason: "VBAN receiver '\(name)' takes its stream by name: give session=NAME (the sender's stream name; Voicemeeter's first is Stream1)")
            }
        }
    }
}
