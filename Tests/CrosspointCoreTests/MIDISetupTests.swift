// MIDI control as node state (`midi`, `midi.map`), the feedback ring to the data thread, and
// learning: the parts that know nothing of PipeWire.

import CAllocationCounter
import CrosspointCore
import Testing

@Suite("MIDI setup")
struct MIDISetupTests {
    func mixer() throws -> Mixer { try Mixer(inputs: 2, outputs: 2) }

    @Test("Mappings are one line of text each, read and written back the same")
    func mappingText() throws {
        for text in ["cc 1 7 gain.in.0", "cc14 16 31 gain.master nopickup", "note 1 60 mute.in.FL momentary",
                     "bend 9 matrix.0.1", "note 2 1 mute.out.1", "cc 1 64 ramp.ms"] {
            #expect(try MIDIMapping(text: text).text == text)
        }
        // Defaults are left out; options in any case, spaces collapsed.
        #expect(try MIDIMapping(text: "  cc 1 7   gain.in.0 PICKUP ").text == "cc 1 7 gain.in.0")
        #expect(try MIDIMapping(text: "note 1 60 mute.in.0 toggle").text == "note 1 60 mute.in.0")
    }

    @Test("A bad mapping is refused, naming what is wrong", arguments: [
        ("", "an empty mapping"), ("cc 1 7", "names no key"), ("cc 17 7 gain.in.0", "channel must be"),
        ("cc 1 7 gain.in.0 loud", "'loud'"), ("note 1 60 gain.in.0", "a note can switch a mute"),
        ("bend 1 mute.in.0", "a pitch bend cannot switch"), ("cc 1 7 inputs", "set by a command"),
        ("cc 1 7 gain.in.0 momentary", "momentary is for mutes"), ("cc 1 7 nothing.here", "unknown parameter"),
    ])
    func badMappings(text: String, reason: String) {
        #expect {
            _ = try MIDIMapping(text: text)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test("midi and midi.map are keys of the table: set, read back, checked against the node")
    func keysOfTheTable() throws {
        var m = try mixer()
        #expect(m.value(of: Parameter(.midiPorts)) == .bool(false))
        #expect(m.value(of: Parameter(.midiMap)) == .names([]))
        try m.set(Parameter(.midiPorts), to: .bool(true))
        try m.set(Parameter(.midiMap), to: .names(["cc 1 7 gain.in.FR", "note 1 60 mute.out.0 momentary"]))
        #expect(m.midi.ports)
        #expect(m.value(of: Parameter(.midiMap)) == .names(["cc 1 7 gain.in.FR", "note 1 60 mute.out.0 momentary"]))
        let before = m
        // A key the node does not have, a control given twice: refused, nothing changed.
        #expect(throws: CrosspointError.self) { try m.set(Parameter(.midiMap), to: .names(["cc 1 7 gain.in.2"])) }
        #expect(throws: CrosspointError.self) { try m.set(Parameter(.midiMap), to: .names(["cc 1 7 gain.in.0", "cc 1 7 gain.in.0"])) }
        #expect(throws: CrosspointError.self) { try m.set(Parameter(.midiMap), to: .number(1)) }
        #expect(m == before)
        // An empty list clears them, however it arrives.
        try m.set(Parameter(.midiMap), to: .ints([]))
        #expect(m.midi.mappings.isEmpty)
        let tooMany = (0...MIDISetup.mappingLimit).map { "cc \($0 % 16 + 1) \($0 / 16) gain.in.0" }
        #expect(throws: CrosspointError.self) { try m.set(Parameter(.midiMap), to: .names(tooMany)) }
    }

    @Test("Presets and state files carry MIDI control only when it is set up; a preset without it leaves it")
    func presets() throws {
        var m = try mixer()
        #expect(m.preset.values[.midiPorts] == nil && m.preset.values[.midiMap] == nil)
        m.setMIDIPorts(true)
        try m.setMIDIMappings(["cc 1 7 gain.in.0"])
        let preset = m.preset
        #expect(preset.values[.midiPorts] == .value(.bool(true)) && preset.values[.midiMap] == .value(.names(["cc 1 7 gain.in.0"])))
        let read = try Preset(json: preset.json)
        #expect(read == preset)
        var other = try mixer()
        try other.apply(read)
        #expect(other.midi == m.midi)
        // A preset of the mix alone (no midi keys) keeps the node's MIDI control.
        var plain = try mixer().preset
        plain.set(.masterGain, to: .number(0.5))
        try other.apply(plain)
        #expect(other.midi == m.midi && other.masterGain == 0.5)
    }

    @Test("The feedback ring: all or nothing on the main loop, in order and without allocating on the data thread")
    func outbox() {
        let outbox = MIDIOutbox.make()
        defer { outbox.free() }
        let messages = (0..<100).map { MIDIMessage.controlChange(channel: 0, controller: UInt8($0), value: 64) }
        #expect(outbox.put(messages))
        let scratch = UnsafeMutablePointer<UInt32>.allocate(capacity: 128)
        defer { scratch.deallocate() }
        crosspoint_alloc_counting_begin()
        let count = outbox.peek(into: scratch, capacity: 60)
        outbox.consume(count)
        let rest = outbox.peek(into: scratch + 60, capacity: 68)
        outbox.consume(rest)
        #expect(crosspoint_alloc_counting_end() == 0)
        #expect(count == 60 && rest == 40)
        #expect((0..<100).allSatisfy { scratch[$0] == MIDIOutbox.pack(messages[$0]) })
        // Full: a batch that does not fit is refused whole.
        let big = Array(repeating: MIDIMessage.noteOff(channel: 0, note: 1), count: 4000)
        #expect(outbox.put(big))
        #expect(!outbox.put(Array(big.prefix(97))))
        #expect(outbox.put(Array(big.prefix(96))))
    }

    @Test("Learning takes the first control that suits the key")
    func learning() throws {
        func record(_ m: MIDIMessage, presses: Int = 0) -> MIDIRecord { MIDIRecord(message: m, presses: presses) }
        let fader = record(.controlChange(channel: 2, controller: 20, value: 40))
        #expect(MIDILearn.mapping(from: [fader], for: "gain.out.1")?.text == "cc 3 20 gain.out.1")
        // A 14-bit pair, its coarse half first (as collected) or not.
        let coarse = record(.controlChange(channel: 0, controller: 7, value: 90)), fine = record(.controlChange(channel: 0, controller: 39, value: 5))
        #expect(MIDILearn.mapping(from: [coarse, fine], for: "gain.master")?.text == "cc14 1 7 gain.master")
        #expect(MIDILearn.mapping(from: [fine, coarse], for: "gain.master")?.text == "cc14 1 7 gain.master")
        // A note does not suit a gain; a pitch bend does.
        let note = record(.noteOn(channel: 0, note: 60, velocity: 99), presses: 1)
        #expect(MIDILearn.mapping(from: [note], for: "gain.in.0") == nil)
        #expect(MIDILearn.mapping(from: [note, record(.pitchBend(channel: 8, value: 99))], for: "gain.in.0")?.text == "bend 9 gain.in.0")
        // A mute takes a press: a note, or a button pressed (not a fader's move below 64).
        #expect(MIDILearn.mapping(from: [fader, note], for: "mute.in.0")?.text == "note 1 60 mute.in.0")
        #expect(MIDILearn.mapping(from: [record(.controlChange(channel: 0, controller: 48, value: 127), presses: 1)], for: "mute.in.0")?.text
            == "cc 1 48 mute.in.0")
        // The request: one key a control can move, or nothing.
        #expect(try MIDILearn(.names(["gain.in.0"])).target == "gain.in.0")
        #expect(try MIDILearn(.names([])).target == nil)
        #expect(throws: CrosspointError.self) { try MIDILearn(.names(["inputs"])) }
        #expect(throws: CrosspointError.self) { try MIDILearn(.names(["gain.in.0", "gain.in.1"])) }
        #expect(throws: CrosspointError.self) { try MIDILearn(.number(1)) }
    }
}
