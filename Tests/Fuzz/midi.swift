// Fuzz target (e): MIDI control (Sources/CrosspointCore/MIDI*.swift). Each input is mapping
// lines, then a line `--`, then raw MIDI bytes, as a controller or a file could send them:
//
//     cc 1 7 = gain.in.0
//     note 1 60 = mute.in.FL momentary
//     --
//     <bytes>
//
// A line is `CONTROL = KEY [toggle|momentary|nopickup]`, read with MIDIControl(text:) and
// MIDIMapping(...), and as a whole by MIDIMapping(text:) (`CONTROL KEY [options]`, the form
// midi.map holds): bad ones are refused with an error, never a trap. The bytes go through
// MIDIParser (running status, SysEx, real-time bytes, truncation) whole and again split
// at a point the input picks (the same messages), and the messages through a MIDIInbox
// (collected after each, then all at once) and MIDIMapper on each fuzz shape: every change it
// makes is one the mixer accepts (the mapper never proposes an invalid value), and every
// feedback message is one the parser reads back as itself.
//
// Build and run: scripts/fuzz. Seeds: Tests/Fuzz/corpus/midi.
import CrosspointCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMIDI(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    // Mapping lines up to "--\n"; with none, all of it is MIDI.
    var mappings: [MIDIMapping] = []
    var midi = bytes[...]
    if let end = findSeparator(bytes) {
        let text = String(decoding: bytes[..<end], as: UTF8.self)
        midi = bytes[(end + 3)...]
        for line in text.split(separator: "\n").prefix(64) {
            // The mapping's own text (module arguments, midi.map, `crosspoint midi map`): read,
            // or refused with a reason; what is read writes itself back the same.
            do {
                let mapping = try MIDIMapping(text: String(line))
                if try MIDIMapping(text: mapping.text) != mapping { fatalError("'\(mapping.text)' does not read back") }
            } catch {
                if error.description.isEmpty { fatalError("a refusal without a reason") }
            }
            let halves = line.split(separator: "=", maxSplits: 1)
            guard halves.count == 2 else { continue }
            let words = halves[1].split(separator: " ")
            guard let key = words.first else { continue }
            let options = Set(words.dropFirst().map(String.init))
            do {
                let control = try MIDIControl(text: String(halves[0]))
                if try MIDIControl(text: control.description) != control { fatalError("\(control) does not read back") }
                mappings.append(try MIDIMapping(
                    control: control, key: String(key),
                    switchMode: options.contains("momentary") ? .momentary : options.contains("toggle") ? .toggle : nil,
                    pickup: options.contains("nopickup") ? false : nil))
            } catch {
                _ = error.description
            }
        }
    }

    var parser = MIDIParser()
    let messages = midi.compactMap { parser.feed($0) }
    // Split anywhere: a parser carried across (as across a cycle's events) finds the same.
    let cut = midi.isEmpty ? 0 : Int(midi[midi.startIndex]) % midi.count
    var carried = MIDIParser()
    let again = midi.prefix(cut).compactMap { carried.feed($0) } + midi.dropFirst(cut).compactMap { carried.feed($0) }
    guard again == messages else { fatalError("a split stream parsed differently") }

    let inbox = MIDIInbox.make()
    defer { inbox.free() }
    for shape in fuzzShapes {
        // Collected after each message, then all at once (a flood): the same rules either way.
        for batched in [false, true] {
            var mixer = shape
            var mapper = MIDIMapper(mappings)
            for (n, message) in messages.prefix(512).enumerated() {
                inbox.receive(message)
                guard !batched || n == min(messages.count, 512) - 1 else { continue }
                for record in inbox.collect() {
                    for change in mapper.changes(for: record, in: mixer) {
                        do {
                            try mixer.set(change.parameter, to: change.value)
                        } catch {
                            fatalError("\(record) made \(change.parameter.key) = \(change.value), which the mixer refused: \(error)")
                        }
                    }
                }
                for feedback in mapper.feedback(for: mixer) {
                    let (a, b, c) = feedback.bytes
                    var reader = MIDIParser()
                    let read = [a, b, c].compactMap { reader.feed($0) }
                    guard read == [feedback] else { fatalError("feedback \(feedback) reads back as \(read)") }
                }
            }
            _ = inbox.collect()
        }
    }
    return 0
}

/// The index of "--\n" at the start of a line.
private func findSeparator(_ bytes: [UInt8]) -> Int? {
    var at = 0
    while at + 3 <= bytes.count {
        if bytes[at] == UInt8(ascii: "-"), bytes[at + 1] == UInt8(ascii: "-"), bytes[at + 2] == UInt8(ascii: "\n"),
           at == 0 || bytes[at - 1] == UInt8(ascii: "\n") {
            return at
        }
        at += 1
    }
    return nil
}
