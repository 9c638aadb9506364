/// A stream announced on the network (issue 32): one SAP packet (RFC 2974) carrying the SDP
/// (RFC 4566) of an RTP session, as PipeWire's senders announce theirs: 0.3.65's
/// `module-rtp-sink` by itself, 1.x's through `module-rtp-sap` (to 224.0.0.56:9875 on the local
/// link), AES67 gear and PipeWire's AES67 setup to 239.255.255.255. `crosspoint net list
/// --announced` listens for them and lists what it hears; anyone on the network can send one,
/// so every byte is read with bounds and a packet that is not one is refused with a reason.
///
///     SAP header: V=1 A R T E C | auth len | msg id hash (2) | origin (4 or 16) | [auth]
///     then "application/sdp\0" (or the SDP at once, starting with "v=0"), then the SDP:
///
///     v=0
///     o=alice 3953000001 3953000001 IN IP4 192.168.1.10
///     s=desk-stream
///     c=IN IP4 239.69.1.10/1
///     t=3953000001 0
///     m=audio 46000 RTP/AVP 127
///     i=2 channels: FL, FR
///     a=rtpmap:127 L16/48000/2
///     a=tool:PipeWire 1.4.2
public struct SAPAnnouncement: Equatable, Sendable {
    /// The largest packet read: PipeWire's listener drops 2,048 bytes and more; AES67's SDP
    /// fits in one datagram.
    public static let maximumBytes = 4096
    /// SAP's port and PipeWire's group (RFC 2974's link-local one), and AES67's.
    public static let port = 9875
    public static let groups = ["224.0.0.56", "239.255.255.255"]

    /// A deletion (the sender going away), not an announcement.
    public var deletion: Bool
    /// The message id hash (opaque; PipeWire 1.4.2 sends 0 for an instance's first session).
    public var hash: UInt16
    /// The originating source in the header (often 0.0.0.0 from PipeWire).
    public var source: String
    public var session: SDPSession

    /// Reads one packet; throws with the reason it is not an announcement of an audio stream.
    public init(packet: some Collection<UInt8>) throws(CrosspointError) {
        func fail(_ reason: String) -> CrosspointError { .invalidValue(key: "sap", reason: reason) }
        guard packet.count <= Self.maximumBytes else { throw fail("a packet of \(packet.count) bytes; at most \(Self.maximumBytes)") }
        let bytes = Array(packet)
        guard bytes.count >= 8 else { throw fail("a packet of \(bytes.count) bytes: shorter than SAP's header") }
        let flags = bytes[0]
        guard flags >> 5 == 1 else { throw fail("SAP version \(flags >> 5), not 1") }
        guard flags & 0x03 == 0 else { throw fail("an encrypted or compressed announcement (not read)") }
        let v6 = flags & 0x10 != 0
        deletion = flags & 0x04 != 0
        hash = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        let sourceLength = v6 ? 16 : 4
        let payloadStart = 4 + sourceLength + 4 * Int(bytes[1])
        guard payloadStart <= bytes.count else { throw fail("the header claims \(payloadStart) bytes; the packet has \(bytes.count)") }
        source = Self.address(bytes[4..<(4 + sourceLength)], v6: v6)
        var payload = bytes[payloadStart...]
        let mime = Array("application/sdp".utf8) + [0]
        if payload.starts(with: mime) {
            payload = payload.dropFirst(mime.count)
        } else if !payload.starts(with: Array("v=0".utf8)) {
            throw fail("a payload that is not SDP")
        }
        session = try SDPSession(text: payload)
    }

    /// An address in the header, written as people read it.
    static func address(_ bytes: ArraySlice<UInt8>, v6: Bool) -> String {
        if !v6 { return bytes.map { String($0) }.joinedBytes(separator: ".") }
        var groups: [String] = []
        var k = bytes.startIndex
        while k + 1 < bytes.endIndex {
            groups.append(String(UInt16(bytes[k]) << 8 | UInt16(bytes[k + 1]), radix: 16))
            k += 2
        }
        return groups.joinedBytes(separator: ":")
    }

    /// What tells two announcements of one stream from two streams: the origin line (o=:
    /// user, session id, version, address), the name and the port (PipeWire 1.4.2 sends the same
    /// origin and hash 0 for the first stream of each of its announcers).
    public var identity: String { "\(session.origin)|\(session.name)|\(session.port.map(String.init) ?? "")" }
}

/// The parts of an SDP session description that say what a stream is and where it goes.
public struct SDPSession: Equatable, Sendable {
    /// The longest line kept; longer values are cut (a name is at most 255 bytes).
    static let lineLimit = 255

    /// `s=`: the session's name (what a receiver takes it by).
    public var name = ""
    /// `o=`: user, session id, version, network type, address type, address.
    public var origin = ""
    /// `c=`: where the stream goes (the address, without `/ttl`).
    public var address: String?
    /// `m=audio PORT RTP/AVP PAYLOAD`.
    public var port: Int?
    public var payload: Int?
    /// `a=rtpmap:PAYLOAD ENCODING/RATE[/CHANNELS]` of the media's payload (channels 1 when not given).
    public var encoding: String?
    public var rate: Int?
    public var channels: Int?
    /// `i=N channels: A, B`: the channels' names, where the sender gives them.
    public var channelNames: [String] = []
    /// `a=tool:` (PipeWire 1.4.2, ...).
    public var tool: String?
    /// `a=ptime:` in milliseconds, as written.
    public var packetTime: String?
    /// `a=ts-refclk:` (RFC 7273): the clock its timestamps follow, as AES67 senders name it
    /// (`ptp=IEEE1588-2008:00-11-22-FF-FE-33-44-55:0`, a PTP grandmaster and domain;
    /// `ptp=traceable`; `local`).
    public var referenceClock: String?
    /// `a=mediaclk:` (`direct=0`: timestamps are the reference clock's time at the rate).
    public var mediaClock: String?

    /// Reads an SDP text (lines ended by `\n` or `\r\n`); throws if it is not an audio session.
    public init(text: some Collection<UInt8>) throws(CrosspointError) {
        func fail(_ reason: String) -> CrosspointError { .invalidValue(key: "sap", reason: reason) }
        let lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { line -> ArraySlice<UInt8> in
            let bytes = ArraySlice(line)
            return bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes
        }
        guard let first = lines.first, first.elementsEqual("v=0".utf8) else { throw fail("an SDP that does not start with v=0") }
        var rtpmaps: [(payload: Int, value: ArraySlice<UInt8>)] = []
        var audio = false
        for line in lines.dropFirst() {
            guard line.count >= 2, line[line.startIndex + 1] == UInt8(ascii: "=") else { continue }
            let kind = line[line.startIndex], value = line.dropFirst(2)
            switch kind {
            case UInt8(ascii: "s"): name = Self.text(value)
            case UInt8(ascii: "o"): origin = Self.text(value)
            case UInt8(ascii: "c"):
                // IN IP4 239.69.1.10/1
                let words = value.split(separator: UInt8(ascii: " "))
                if words.count >= 3, let address = words[2].split(separator: UInt8(ascii: "/")).first { self.address = Self.text(address) }
            case UInt8(ascii: "m") where port == nil:
                // audio 46000 RTP/AVP 127
                let words = value.split(separator: UInt8(ascii: " "))
                guard words.count >= 4, words[0].elementsEqual("audio".utf8) else { continue }
                audio = true
                port = Self.number(words[1], in: 1...65535)
                payload = Self.number(words[3], in: 0...127)
            case UInt8(ascii: "i"):
                // 2 channels: FL, FR
                let text = Self.text(value)
                if let colon = text.firstIndex(of: ":"), text[..<colon].hasSuffix(" channels") {
                    channelNames = text[text.index(after: colon)...].split(separator: ",").map { String($0.drop { $0 == " " }) }.filter { !$0.isEmpty }
                    if channelNames.count > 256 { channelNames = Array(channelNames.prefix(256)) }
                }
            case UInt8(ascii: "a"):
                if value.starts(with: "rtpmap:".utf8) {
                    let rest = value.dropFirst(7)
                    let words = rest.split(separator: UInt8(ascii: " "), maxSplits: 1)
                    if words.count == 2, let p = Self.number(words[0], in: 0...127) { rtpmaps.append((p, words[1])) }
                } else if value.starts(with: "tool:".utf8) {
                    tool = Self.text(value.dropFirst(5))
                } else if value.starts(with: "ptime:".utf8) {
                    packetTime = Self.text(value.dropFirst(6))
                } else if value.starts(with: "ts-refclk:".utf8), referenceClock == nil {
                    referenceClock = Self.text(value.dropFirst(10))
                } else if value.starts(with: "mediaclk:".utf8), mediaClock == nil {
                    mediaClock = Self.text(value.dropFirst(9))
                }
            default: continue
            }
        }
        guard audio else { throw fail("session '\(name)' carries no audio (no m=audio line)") }
        // The media's own payload's map (it may come before or after m=).
        if let payload, let map = rtpmaps.first(where: { $0.payload == payload })?.value {
            let parts = map.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            let name = Self.text(parts[0])
            encoding = name.isEmpty ? nil : name
            if parts.count > 1 { rate = Self.number(parts[1], in: 1...768_000) }
            channels = parts.count > 2 ? Self.number(parts[2], in: 1...256) : 1
        }
    }

    /// A value as text: printable ASCII and UTF-8 kept, control bytes written as `?`, cut at
    /// `lineLimit` bytes.
    static func text(_ bytes: some Collection<UInt8>) -> String {
        let kept = bytes.prefix(lineLimit).map { $0 < 0x20 || $0 == 0x7F ? UInt8(ascii: "?") : $0 }
        return String(decoding: kept, as: UTF8.self)
    }

    /// A decimal number in `range`, or nil (at most 9 digits read).
    static func number(_ bytes: some Collection<UInt8>, in range: ClosedRange<Int>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 9, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let value = bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return range.contains(value) ? value : nil
    }

    /// For people: its packet time and clock when it says them (`1 ms, clock
    /// ptp=IEEE1588-2008:...:0`), or nil.
    public var timingText: String? {
        let parts = (packetTime.map { ["\($0) ms packets"] } ?? []) + (referenceClock.map { ["clock \($0)"] } ?? [])
        return parts.isEmpty ? nil : parts.joinedBytes(separator: ", ")
    }

    /// For people: `L16/48000/2 (FL, FR)`.
    public var formatText: String {
        var text = encoding ?? "payload \(payload.map(String.init) ?? "?")"
        if let rate { text += "/\(rate)" }
        if let channels { text += "/\(channels)" }
        if !channelNames.isEmpty { text += " (" + channelNames.joinedBytes(separator: ", ") + ")" }
        return text
    }
}
