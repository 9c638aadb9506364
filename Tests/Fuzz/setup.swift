// Fuzz target (d): an enabled setup's file, as `crosspoint setup list|enable|disable` reads it
// from a user's pipewire.conf.d (Sources/CrosspointControl/Setups/SetupFile.swift, compiled
// into this target alone: the library's other files need Foundation and PipeWire). For each
// input, its first line taken as a name, the rest as a file: reading it never traps; a copy
// written for any name and body reads back as unchanged with that body; any one byte of the
// body changed reads back as changed (CRC-32 catches every burst of up to 32 bits).
//
// Build and run: scripts/fuzz. Seeds: Tests/Fuzz/corpus/setup.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSetup(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    let split = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
    let name = String(decoding: bytes[..<split], as: UTF8.self)
    let file = split < bytes.endIndex ? Array(bytes[(split + 1)...]) : []

    // Whatever the file holds (the user's own, edited, truncated, not UTF-8).
    _ = EnabledCopy(reading: file, name: name)
    _ = SetupFile.description(of: file)
    guard SetupFile.isValidName(name) else { return 0 }

    // What enable writes reads back as unchanged, with the shipped text as its body.
    let written = EnabledCopy.contents(name: name, shipped: file)
    let copy = EnabledCopy(reading: written, name: name)
    guard copy.state == .unchanged, copy.body == file else {
        fatalError("a copy just written reads as \(copy.state)")
    }
    // One byte of the body changed: changed, whichever byte.
    if !file.isEmpty {
        var edited = written
        let at = written.count - 1 - Int(file[0]) % file.count
        edited[at] ^= 0x20
        let state = EnabledCopy(reading: edited, name: name).state
        guard state == .changed else { fatalError("an edited copy reads as \(state)") }
    }
    // The marker line of another name is not ours.
    guard EnabledCopy(reading: written, name: name + "x").state == .foreign else {
        fatalError("a copy of \(name) reads as another setup's")
    }
    return 0
}
