// Streams announced on the network (SAP carrying SDP, SAP.swift): the packets PipeWire 0.3.65's
// and 1.4.2's senders and AES67 gear send, read as `crosspoint net list --announced` lists
// them; what is not an announcement of audio refused with the reason.

import CrosspointCore
import Testing

@Suite("SAP announcements")
struct SAPTests {
    static func packet(_ sdp: String, flags: UInt8 = 0x20, hash: UInt16 = 0x1234, source: [UInt8] = [10, 1, 2, 3], mime: Bool = true) -> [UInt8] {
        [flags, 0, UInt8(hash >> 8), UInt8(hash & 0xFF)] + source + (mime ? Array("application/sdp".utf8) + [0] : []) + Array(sdp.utf8)
    }

    static let pipewire142 = """
        v=0
        o=alice 3953000001 3953000001 IN IP4 192.168.1.10
        s=desk-stream
        c=IN IP4 239.69.1.10/1
        t=3953000001 0
        m=audio 46000 RTP/AVP 127
        i=2 channels: FL, FR
        a=recvonly
        a=rtpmap:127 L16/48000/2
        a=ssrc:2864434397
        a=ptime:6.45833
        a=tool:PipeWire 1.4.2

        """

    @Test func pipeWire142sAnnouncementIsReadWithItsNameAddressFormatAndChannels() throws {
        let heard = try SAPAnnouncement(packet: Self.packet(Self.pipewire142))
        #expect(!heard.deletion && heard.hash == 0x1234 && heard.source == "10.1.2.3")
        let sdp = heard.session
        #expect(sdp.name == "desk-stream" && sdp.address == "239.69.1.10" && sdp.port == 46000 && sdp.payload == 127)
        #expect(sdp.encoding == "L16" && sdp.rate == 48000 && sdp.channels == 2 && sdp.channelNames == ["FL", "FR"])
        #expect(sdp.tool == "PipeWire 1.4.2" && sdp.packetTime == "6.45833")
        #expect(sdp.formatText == "L16/48000/2 (FL, FR)")
        #expect(sdp.origin == "alice 3953000001 3953000001 IN IP4 192.168.1.10")
        // A deletion of the same stream: the same identity.
        let gone = try SAPAnnouncement(packet: Self.packet(Self.pipewire142, flags: 0x24))
        #expect(gone.deletion && gone.identity == heard.identity)
    }

    @Test func pipeWire0365sAndAES67sAndAnIPv6OriginAreRead() throws {
        // 0.3.65: a=rtpmap after m=, a=tool before it, the origin 0.0.0.0, no channel names.
        let old = try SAPAnnouncement(packet: Self.packet("""
            v=0
            o=alice 3953000000 0 IN IP4 0.0.0.0
            s=PipeWire RTP Stream on myhost
            c=IN IP4 224.0.0.56/1
            t=3953000000 0
            a=recvonly
            a=tool:PipeWire 0.3.65
            m=audio 46682 RTP/AVP 127
            a=rtpmap:127 L16/48000/2
            a=ptime:6

            """, source: [0, 0, 0, 0]))
        #expect(old.source == "0.0.0.0" && old.session.name == "PipeWire RTP Stream on myhost" && old.session.port == 46682)
        #expect(old.session.formatText == "L16/48000/2" && old.session.tool == "PipeWire 0.3.65")
        // AES67: CRLF lines, eight channels of L24, the SDP without the MIME type.
        let aes67 = try SAPAnnouncement(packet: Self.packet(
            "v=0\r\no=- 1 0 IN IP4 192.168.1.30\r\ns=Stage box\r\nc=IN IP4 239.69.2.1/32\r\nt=0 0\r\nm=audio 5004 RTP/AVP 98\r\na=rtpmap:98 L24/48000/8\r\n"
                + "a=ptime:1\r\na=ts-refclk:ptp=IEEE1588-2008:00-11-22-FF-FE-33-44-55:0\r\na=mediaclk:direct=0\r\n",
            mime: false))
        #expect(aes67.session.name == "Stage box" && aes67.session.address == "239.69.2.1" && aes67.session.formatText == "L24/48000/8")
        // Its clock: the PTP grandmaster its timestamps follow.
        #expect(aes67.session.referenceClock == "ptp=IEEE1588-2008:00-11-22-FF-FE-33-44-55:0" && aes67.session.mediaClock == "direct=0")
        #expect(aes67.session.timingText == "1 ms packets, clock ptp=IEEE1588-2008:00-11-22-FF-FE-33-44-55:0")
        #expect(old.session.referenceClock == nil && old.session.timingText == "6 ms packets")
        let v6 = try SAPAnnouncement(packet: Self.packet(Self.pipewire142, flags: 0x30, source: [0xff, 0x15] + [UInt8](repeating: 0, count: 13) + [1]))
        #expect(v6.source == "ff15:0:0:0:0:0:0:1")
        // PipeWire 1.4.2's first stream of an announcer: hash 0, id and version 0. Two such
        // streams of one machine are told apart by name and port.
        let first = try SAPAnnouncement(packet: Self.packet(Self.pipewire142.replacingOccurrences(of: "3953000001 3953000001", with: "0 0"), hash: 0))
        let other = try SAPAnnouncement(packet: Self.packet(Self.pipewire142.replacingOccurrences(of: "3953000001 3953000001", with: "0 0")
            .replacingOccurrences(of: "desk-stream", with: "monitor").replacingOccurrences(of: "46000", with: "46002"), hash: 0))
        #expect(first.hash == 0 && first.identity != other.identity)
    }

    @Test("What is not an announcement of audio is refused, naming why", arguments: [
        ([0x20, 0, 0], "shorter than SAP's header"),
        ([0x40, 0, 0, 0, 1, 2, 3, 4] + Array("v=0\n".utf8), "SAP version 2"),
        ([0x22, 0, 0, 0, 1, 2, 3, 4] + Array("v=0\n".utf8), "encrypted or compressed"),
        ([0x20, 255, 0, 0, 1, 2, 3, 4] + Array("v=0\n".utf8), "the header claims"),
        ([0x20, 0, 0, 0, 1, 2, 3, 4] + Array("text/plain\0hello".utf8), "not SDP"),
        ([0x20, 0, 0, 0, 1, 2, 3, 4] + Array("application/sdp\0v=1\n".utf8), "does not start with v=0"),
        ([0x20, 0, 0, 0, 1, 2, 3, 4] + Array("application/sdp\0v=0\ns=x\nm=video 5004 RTP/AVP 96\n".utf8), "carries no audio"),
        ([UInt8](repeating: 0x20, count: 5000), "at most 4096"),
    ] as [([UInt8], String)])
    func refused(packet: [UInt8], reason: String) {
        #expect {
            _ = try SAPAnnouncement(packet: packet)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func anRtpmapWithoutAnEncodingIsListedByItsPayload() throws {
        // Found by the fuzz target: `a=rtpmap:127 /L16/480/...` gave an empty format to list.
        let heard = try SAPAnnouncement(packet: Self.packet("v=0\ns=x\nm=audio 5004 RTP/AVP 127\na=rtpmap:127 /L16/480/\n"))
        #expect(heard.session.encoding == nil && heard.session.formatText == "payload 127")
    }

    @Test func hostileValuesAreBounded() throws {
        let names = (0..<400).map { "c\($0)" }.joined(separator: ",")
        let heard = try SAPAnnouncement(packet: Self.packet("v=0\ns=\u{1b}[31mred\u{07}\nm=audio 99999999999 RTP/AVP 96\ni=400 channels: \(names)\na=rtpmap:96 L16\n"))
        #expect(heard.session.name == "?[31mred?")
        #expect(heard.session.port == nil && heard.session.payload == 96 && heard.session.encoding == "L16" && heard.session.channels == 1)
        #expect((1..<100).contains(heard.session.channelNames.count))  // the line cut at 255 bytes
    }
}
