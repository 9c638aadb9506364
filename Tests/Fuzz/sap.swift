// Fuzz target (h): SAP announcements and the SDP they carry (Sources/CrosspointCore/SAP.swift),
// as anyone on the network can send a datagram to port 9875, where `crosspoint net list
// --announced` listens. Each input is one packet: read, or refused with a reason; what is read
// is bounded (names cut, numbers in range, at most 256 channel names) and can be listed.
//
// Build and run: scripts/fuzz. Seeds: Tests/Fuzz/corpus/sap.
import CrosspointCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSAP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let packet = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    let heard: SAPAnnouncement
    do {
        heard = try SAPAnnouncement(packet: packet)
    } catch {
        if error.description.isEmpty { fatalError("a refusal without a reason") }
        return 0
    }
    let sdp = heard.session
    // A value is cut at 255 bytes; each byte that is not UTF-8 reads as U+FFFD (3 bytes).
    for text in [sdp.name, sdp.origin, sdp.address ?? "", sdp.encoding ?? "", sdp.tool ?? "", sdp.packetTime ?? ""] + sdp.channelNames
    where text.utf8.count > 3 * 255 {
        fatalError("a value of \(text.utf8.count) bytes")
    }
    if sdp.channelNames.count > 256 { fatalError("\(sdp.channelNames.count) channel names") }
    if let port = sdp.port, !(1...65535).contains(port) { fatalError("port \(port)") }
    if let channels = sdp.channels, !(1...256).contains(channels) { fatalError("\(channels) channels") }
    if sdp.port == nil && sdp.payload == nil && sdp.encoding != nil { fatalError("a format without its media line") }
    if heard.source.isEmpty || heard.identity.isEmpty || sdp.formatText.isEmpty { fatalError("nothing to list") }
    return 0
}
