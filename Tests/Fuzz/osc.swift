// Fuzz target (f): Open Sound Control packets (Sources/CrosspointCore/OSC.swift), as any sender
// on the network can hand `crosspoint serve --osc` a datagram. Each input is one packet: read
// by `OSC.messages(in:)` (bundles nested, every type tag), refused with a reason or read; what
// is read is written again and must read back as the same bytes, and each message's address
// split as the server splits it.
//
// Build and run: scripts/fuzz. Seeds: Tests/Fuzz/corpus/osc.
import CrosspointCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOSC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let packet = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    let messages: [OSCMessage]
    do {
        messages = try OSC.messages(in: packet)
    } catch {
        if error.description.isEmpty { fatalError("a refusal without a reason") }
        return 0
    }
    if messages.count > OSC.maximumMessages { fatalError("more messages than the limit") }
    for message in messages {
        if message.address.utf8.first != UInt8(ascii: "/") { fatalError("an address without '/': \(message.address)") }
        _ = message.parts
        // Written and read again: the same message (compared as bytes: a NaN is not equal to itself).
        let bytes = message.bytes
        guard let again = try? OSC.messages(in: bytes), again.count == 1 else {
            fatalError("\(message) does not read back")
        }
        if again[0].bytes != bytes { fatalError("\(message) reads back as \(again[0])") }
    }
    let bundle = OSC.bundle(messages)
    guard let back = try? OSC.messages(in: bundle), back.map(\.bytes) == messages.map(\.bytes) else {
        fatalError("the bundle of \(messages.count) messages does not read back")
    }
    return 0
}
