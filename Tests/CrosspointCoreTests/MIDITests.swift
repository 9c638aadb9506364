// MIDI control, the parts that know nothing of PipeWire: the parser the data thread runs, the
// controls and mappings users write, the fader law, and the mapper (pickup, 14-bit pairs,
// toggles, feedback).

import CAllocationCounter
import CrosspointCore
import Foundation
import Synchronization
import Testing

@Suite("MIDI")
struct MIDITests {
    func parse(_ bytes: [UInt8]) -> [MIDIMessage] {
        var parser = MIDIParser()
        return bytes.compactMap { parser.feed($0) }
    }

    @Test("The parser reads channel messages, running status, and skips what it does not act on")
    func parser() {
        #expect(parse([0xB0, 7, 100]) == [.controlChange(channel: 0, controller: 7, value: 100)])
        // Running status: one status byte, then pairs.
        #expect(parse([0xB3, 7, 1, 8, 2, 9, 3]) == [
            .controlChange(channel: 3, controller: 7, value: 1), .controlChange(channel: 3, controller: 8, value: 2),
            .controlChange(channel: 3, controller: 9, value: 3),
        ])
        // A note on with velocity 0 is a note off; both forms of note off.
        #expect(parse([0x91, 60, 100, 60, 0, 0x81, 61, 64]) == [
            .noteOn(channel: 1, note: 60, velocity: 100), .noteOff(channel: 1, note: 60), .noteOff(channel: 1, note: 61),
        ])
        // Pitch bend: LSB first.
        #expect(parse([0xEF, 0x7F, 0x7F, 0x00, 0x40]) == [.pitchBend(channel: 15, value: 16383), .pitchBend(channel: 15, value: 8192)])
        // Real-time bytes anywhere, even inside a message, change nothing.
        #expect(parse([0xB0, 0xF8, 7, 0xFE, 100, 0xFA, 8, 0xFF, 50]) == [
            .controlChange(channel: 0, controller: 7, value: 100), .controlChange(channel: 0, controller: 8, value: 50),
        ])
        // SysEx is skipped whole, and ends running status.
        #expect(parse([0xB0, 7, 1, 0xF0, 0x7E, 7, 100, 0xF7, 8, 2, 0xB0, 9, 3]) == [
            .controlChange(channel: 0, controller: 7, value: 1), .controlChange(channel: 0, controller: 9, value: 3),
        ])
        // A message cut short by a new status is dropped; data without a status is ignored.
        #expect(parse([5, 6, 0xB0, 7, 0x90, 60, 90]) == [.noteOn(channel: 0, note: 60, velocity: 90)])
        // Program changes are read (running status too: a scene's recall); aftertouch is read (its data
        // bytes do not shift what follows) and dropped.
        #expect(parse([0xC0, 5, 6, 0xD2, 40, 0xA0, 60, 70, 0xB0, 1, 2])
                == [.programChange(channel: 0, program: 5), .programChange(channel: 0, program: 6), .controlChange(channel: 0, controller: 1, value: 2)])
        // System common messages (song position, MTC quarter frame) end running status too.
        #expect(parse([0xB0, 7, 1, 0xF2, 1, 2, 7, 3, 0xF1, 9]) == [.controlChange(channel: 0, controller: 7, value: 1)])
    }

    @Test("Messages are written back as the bytes they were read from")
    func bytesRoundTrip() {
        let messages: [MIDIMessage] = [
            .controlChange(channel: 2, controller: 74, value: 127), .noteOn(channel: 9, note: 36, velocity: 1),
            .pitchBend(channel: 0, value: 12818), .pitchBend(channel: 7, value: 0),
        ]
        for message in messages {
            let (a, b, c) = message.bytes
            #expect(parse([a, b, c]) == [message], "\(message)")
        }
        #expect(MIDIMessage.noteOff(channel: 3, note: 60).bytes == (0x93, 60, 0))
    }

    @Test("Parsing allocates nothing (the data thread runs it)")
    func parserAllocatesNothing() {
        let bytes: [UInt8] = [0xB0, 7, 1, 8, 2, 0xF0, 1, 2, 0xF7, 0x90, 60, 100, 0xE0, 0, 64, 0xF8, 0xC0, 1]
        var parser = MIDIParser()
        var found = 0
        bytes.withUnsafeBufferPointer { buffer in
            // Once outside the window: the runtime makes a type's metadata on its first use, once.
            for byte in buffer where parser.feed(byte) != nil { found += 1 }
            crosspoint_alloc_counting_begin()
            for _ in 0..<100 { for byte in buffer where parser.feed(byte) != nil { found += 1 } }
            let allocations = crosspoint_alloc_counting_end()
            #expect(allocations == 0)
        }
        #expect(found == 505)  // five messages each pass: a cc, its running status, a note, a bend, a program change
    }

    @Test("The inbox keeps each control's last message and counts presses, in slot order")
    func inbox() {
        let inbox = MIDIInbox.make()
        defer { inbox.free() }
        #expect(inbox.collect() == [])
        for message: MIDIMessage in [
            .pitchBend(channel: 2, value: 100), .controlChange(channel: 0, controller: 39, value: 5),
            .controlChange(channel: 0, controller: 7, value: 10), .controlChange(channel: 0, controller: 7, value: 90),
            .controlChange(channel: 0, controller: 7, value: 20), .controlChange(channel: 0, controller: 7, value: 64),
            .noteOn(channel: 1, note: 60, velocity: 80), .noteOff(channel: 1, note: 60), .noteOn(channel: 1, note: 60, velocity: 1),
            .controlChange(channel: 0, controller: 7, value: 30),
        ] { inbox.receive(message) }
        #expect(inbox.collect() == [
            MIDIRecord(message: .controlChange(channel: 0, controller: 7, value: 30), presses: 2),
            MIDIRecord(message: .controlChange(channel: 0, controller: 39, value: 5), presses: 0),
            MIDIRecord(message: .noteOn(channel: 1, note: 60, velocity: 1), presses: 2),
            MIDIRecord(message: .pitchBend(channel: 2, value: 100), presses: 0),
        ])
        #expect(inbox.collect() == [], "taken")
        inbox.receive(.noteOff(channel: 1, note: 60))
        #expect(inbox.collect() == [MIDIRecord(message: .noteOff(channel: 1, note: 60), presses: 0)])
    }

    @Test("Receiving allocates nothing (the data thread does it)")
    func inboxAllocatesNothing() {
        let inbox = MIDIInbox.make()
        defer { inbox.free() }
        let messages: [MIDIMessage] = [.controlChange(channel: 15, controller: 127, value: 127), .noteOn(channel: 3, note: 0, velocity: 9),
                                       .noteOff(channel: 3, note: 0), .pitchBend(channel: 9, value: 16383)]
        messages.withUnsafeBufferPointer { buffer in
            for message in buffer { inbox.receive(message) }
            crosspoint_alloc_counting_begin()
            for _ in 0..<1000 { for message in buffer { inbox.receive(message) } }
            #expect(crosspoint_alloc_counting_end() == 0)
        }
        #expect(inbox.collect().count == 3)
    }

    @Test("A flood from another thread: every control's last value lands, and every press is counted")
    func inboxAcrossThreads() {
        let inbox = MIDIInbox.make()
        defer { inbox.free() }
        let rounds = 200_000
        final class Flag: Sendable { let done = Atomic<Bool>(false) }
        let flag = Flag()
        let producer = Thread {
            for n in 0..<rounds {
                inbox.receive(.controlChange(channel: 0, controller: UInt8(n % 8), value: UInt8(n % 128)))
                inbox.receive(.controlChange(channel: 1, controller: 21, value: n % 2 == 0 ? 127 : 0))
            }
            inbox.receive(.pitchBend(channel: 5, value: 4321))
            flag.done.store(true, ordering: .releasing)
        }
        producer.start()
        var latest: [MIDIMessage] = []
        var presses = 0, collections = 0
        while true {
            let finished = flag.done.load(ordering: .acquiring)
            for record in inbox.collect() {
                latest.removeAll { $0.sameControl(as: record.message) }
                latest.append(record.message)
                if case .controlChange(1, 21, _) = record.message { presses += record.presses }
            }
            collections += 1
            if finished { break }
        }
        #expect(presses == rounds / 2)
        for k in 0..<8 {
            let last = (0..<rounds).last { $0 % 8 == k }!
            #expect(latest.contains(.controlChange(channel: 0, controller: UInt8(k), value: UInt8(last % 128))), "controller \(k)")
        }
        #expect(latest.contains(.pitchBend(channel: 5, value: 4321)))
        #expect(collections > 1)
    }

    @Test("Controls are written cc, cc14, note and bend, channels 1 to 16", arguments: [
        ("cc 1 7", MIDIControl.controlChange(channel: 0, controller: 7)),
        ("CC 16 127", .controlChange(channel: 15, controller: 127)),
        ("cc14  2   0", .controlChange14(channel: 1, controller: 0)),
        ("note 10 36", .note(channel: 9, note: 36)),
        ("bend 3", .pitchBend(channel: 2)),
    ])
    func controlText(text: String, control: MIDIControl) throws {
        #expect(try MIDIControl(text: text) == control)
        #expect(try MIDIControl(text: control.description) == control)
    }

    @Test("A control that is not one is refused, naming what is wrong", arguments: [
        ("", "empty"), ("cc", "not a MIDI control"), ("cc 0 7", "channel"), ("cc 17 7", "channel"),
        ("cc 1 128", "controller"), ("cc14 1 32", "14-bit"), ("note 1 -1", "note"), ("bend 1 2", "not a MIDI control"),
        ("knob 1 2", "not a MIDI control"), ("cc 1 7.5", "controller"), ("cc 1 99999999999999999999", "controller"),
    ])
    func badControls(text: String, mentioning: String) {
        let error = expectCrosspointError(mentioning: [mentioning]) { _ = try MIDIControl(text: text) }
        #expect(error != nil)
    }

    @Test("Mappings check that the control suits the key, and default pickup and switching")
    func mappingRules() throws {
        let fader = try MIDIMapping(control: MIDIControl(text: "cc 1 7"), key: "gain.in.0")
        #expect(fader.pickup && fader.switchMode == nil && fader.law == .fader)
        let mute = try MIDIMapping(control: MIDIControl(text: "note 1 60"), key: "mute.in.FL")
        #expect(!mute.pickup && mute.switchMode == .toggle && mute.law == .onOff)
        #expect(try MIDIMapping(control: .controlChange(channel: 0, controller: 1), key: "ramp.ms").law == .linear(Mixer.rampRange))
        #expect(try MIDIMapping(control: .pitchBend(channel: 0), key: "matrix.0.1", pickup: false).pickup == false)
        let refusals: [(MIDIControl, String, MIDIMapping.Switch?, Bool?, String)] = [
            (.note(channel: 0, note: 1), "gain.master", nil, nil, "a note can switch a mute"),
            (.pitchBend(channel: 0), "mute.out.0", nil, nil, "pitch bend"),
            (.controlChange(channel: 0, controller: 1), "gain.in.0", .toggle, nil, "toggle is for mutes"),
            (.controlChange(channel: 0, controller: 1), "mute.in.0", nil, true, "pickup is for faders"),
            (.controlChange(channel: 0, controller: 1), "channel-map", nil, nil, "set by a command"),
            (.controlChange(channel: 0, controller: 1), "inputs", nil, nil, "set by a command"),
            (.controlChange(channel: 0, controller: 1), "volume", nil, nil, "unknown parameter 'volume'"),
            (.controlChange(channel: 0, controller: 1), "gain.in.", nil, nil, "unknown parameter"),
        ]
        for (control, key, mode, pickup, words) in refusals {
            let error = expectCrosspointError(mentioning: [words]) { _ = try MIDIMapping(control: control, key: key, switchMode: mode, pickup: pickup) }
            #expect(error != nil, "\(key)")
        }
    }

    @Test("The fader law: silence at the bottom, unity at 78 %, +6 dB at the top, and its inverse")
    func faderLaw() {
        #expect(FaderLaw.gain(position: 0) == 0)
        #expect(abs(FaderLaw.gain(position: 1) - 2) < 1e-12)
        #expect(abs(FaderLaw.gain(position: 0.781_786_753_5) - 1) < 1e-9)
        #expect(abs(Gain.decibels(FaderLaw.gain(position: 99.0 / 127)) - -0.07) < 0.005)
        #expect(abs(Gain.decibels(FaderLaw.gain(position: 100.0 / 127)) - 0.17) < 0.005)
        #expect(abs(Gain.decibels(FaderLaw.gain(position: 12808.0 / 16383))) < 0.001)
        #expect(abs(Gain.decibels(FaderLaw.gain(position: 0.325_3)) - -20) < 0.01)
        var previous = 0.0
        for step in 1...16383 {
            let position = Double(step) / 16383
            let gain = FaderLaw.gain(position: position)
            #expect(gain > previous)
            previous = gain
            if step % 97 == 0 { #expect(abs(FaderLaw.position(gain: gain) - position) < 1e-9) }
        }
        #expect(FaderLaw.position(gain: 0) == 0 && FaderLaw.position(gain: -1) == FaderLaw.position(gain: 1))
        #expect(FaderLaw.position(gain: 10) == 1 && FaderLaw.position(gain: .nan) == 0 && FaderLaw.position(gain: 1e-30) == 0)
    }

    func mixer() throws -> Mixer { try Mixer(inputs: 2, outputs: 2) }

    /// A node's MIDI path without the node: an inbox the messages go into (as the data thread
    /// puts them), the mapper, and the mixer the changes apply to.
    final class Path {
        let inbox = MIDIInbox.make()
        var mapper: MIDIMapper
        var mixer: Mixer

        init(_ mappings: [MIDIMapping], mixer: Mixer) {
            mapper = MIDIMapper(mappings)
            self.mixer = mixer
        }

        deinit { inbox.free() }

        /// Each message received and collected on its own (`batched`: all received, then one
        /// collection, as when a controller sends faster than the main loop collects).
        func play(_ messages: [MIDIMessage], batched: Bool = false) throws {
            for message in messages {
                inbox.receive(message)
                if !batched { try collect() }
            }
            try collect()
        }

        func collect() throws {
            for record in inbox.collect() {
                for change in mapper.changes(for: record, in: mixer) { try mixer.set(change.parameter, to: change.value) }
            }
        }
    }

    @Test("A fader without pickup sets its gain through the law at once")
    func faderWithoutPickup() throws {
        let path = Path([try MIDIMapping(control: .controlChange(channel: 0, controller: 7), key: "gain.in.1", pickup: false)], mixer: try mixer())
        try path.play([.controlChange(channel: 0, controller: 7, value: 64)])
        let after = path.mixer
        #expect(abs(Double(after.inputGains[1]) - FaderLaw.gain(position: 64.0 / 127)) < 1e-6)
        #expect(after.inputGains[0] == 1)
        // Another channel or controller: nothing.
        try path.play([.controlChange(channel: 1, controller: 7, value: 0), .controlChange(channel: 0, controller: 8, value: 0)])
        #expect(path.mixer == after)
    }

    @Test("Pickup: the key follows once the fader reaches or crosses its value, and lets go after a change from elsewhere")
    func pickup() throws {
        // The master at unity: position 0.78, 7-bit 99.3.
        let path = Path([try MIDIMapping(control: .controlChange(channel: 0, controller: 7), key: "gain.master")], mixer: try mixer())
        try path.play([.controlChange(channel: 0, controller: 7, value: 10), .controlChange(channel: 0, controller: 7, value: 60)])
        #expect(path.mixer.masterGain == 1, "below the value: not picked up")
        try path.play([.controlChange(channel: 0, controller: 7, value: 110)])
        #expect(abs(Double(path.mixer.masterGain) - FaderLaw.gain(position: 110.0 / 127)) < 1e-6, "crossed: follows")
        try path.play([.controlChange(channel: 0, controller: 7, value: 20)])
        #expect(abs(Double(path.mixer.masterGain) - FaderLaw.gain(position: 20.0 / 127)) < 1e-6, "engaged: follows anywhere")
        // Someone else sets the master: the fader lets go until it reaches it again.
        try path.mixer.setMasterGain(1)
        try path.play([.controlChange(channel: 0, controller: 7, value: 30)])
        #expect(path.mixer.masterGain == 1)
        try path.play([.controlChange(channel: 0, controller: 7, value: 99)])
        #expect(abs(Double(path.mixer.masterGain) - FaderLaw.gain(position: 99.0 / 127)) < 1e-6, "within a step of it: follows")
    }

    @Test("14-bit pairs and pitch bend use every step; a fine half alone is ignored")
    func fourteenBit() throws {
        let path = Path([
            try MIDIMapping(control: .controlChange14(channel: 0, controller: 1), key: "gain.out.0", pickup: false),
            try MIDIMapping(control: .pitchBend(channel: 4), key: "matrix.1.0", pickup: false),
        ], mixer: try mixer())
        try path.play([.controlChange(channel: 0, controller: 33, value: 5)])
        #expect(path.mixer.outputGains[0] == 1)
        try path.play([.controlChange(channel: 0, controller: 1, value: 100), .controlChange(channel: 0, controller: 33, value: 18)])
        #expect(abs(Double(path.mixer.outputGains[0]) - FaderLaw.gain(position: Double(100 << 7 | 18) / 16383)) < 1e-6)
        // Both halves in one collection: the coarse one is taken first.
        try path.play([.controlChange(channel: 0, controller: 1, value: 90), .controlChange(channel: 0, controller: 33, value: 7)], batched: true)
        #expect(abs(Double(path.mixer.outputGains[0]) - FaderLaw.gain(position: Double(90 << 7 | 7) / 16383)) < 1e-6)
        try path.play([.pitchBend(channel: 4, value: 12808)])
        #expect(abs(Double(path.mixer.crosspoint(input: 1, output: 0)) - 1) < 0.0001)
    }

    @Test("Toggles flip on each press, momentary mutes follow the button")
    func switches() throws {
        let path = Path([
            try MIDIMapping(control: .note(channel: 0, note: 60), key: "mute.in.0"),
            try MIDIMapping(control: .controlChange(channel: 0, controller: 20), key: "mute.in.1", switchMode: .momentary),
            try MIDIMapping(control: .controlChange(channel: 0, controller: 21), key: "mute.out.0"),
        ], mixer: try mixer())
        try path.play([.noteOn(channel: 0, note: 60, velocity: 100), .noteOff(channel: 0, note: 60)])
        #expect(path.mixer.inputMutes[0])
        try path.play([.noteOn(channel: 0, note: 60, velocity: 1)])
        #expect(!path.mixer.inputMutes[0])
        try path.play([.controlChange(channel: 0, controller: 20, value: 127)])
        #expect(path.mixer.inputMutes[1])
        try path.play([.controlChange(channel: 0, controller: 20, value: 0)])
        #expect(!path.mixer.inputMutes[1])
        // A button's cc as a toggle: a press is a rise to 64 or more; holding it flips nothing more.
        try path.play([.controlChange(channel: 0, controller: 21, value: 127), .controlChange(channel: 0, controller: 21, value: 127)])
        #expect(path.mixer.outputMutes[0])
        try path.play([.controlChange(channel: 0, controller: 21, value: 0), .controlChange(channel: 0, controller: 21, value: 127)])
        #expect(!path.mixer.outputMutes[0])
        // Faster than the main loop collects: a toggle flips once per press, a momentary one ends as it was left.
        let presses = (0..<5).flatMap { _ in [MIDIMessage.noteOn(channel: 0, note: 60, velocity: 90), .noteOff(channel: 0, note: 60)] }
        try path.play(presses, batched: true)
        #expect(path.mixer.inputMutes[0], "5 presses flip it once more than 4")
        try path.play(presses + presses.prefix(2), batched: true)
        #expect(path.mixer.inputMutes[0], "6 presses leave it as it was")
        try path.play([.controlChange(channel: 0, controller: 20, value: 127), .controlChange(channel: 0, controller: 20, value: 0),
                       .controlChange(channel: 0, controller: 20, value: 100)], batched: true)
        #expect(path.mixer.inputMutes[1], "held at the end")
    }

    @Test("Feedback puts controls where their keys are, once per change, not back to the fader that moved it")
    func feedback() throws {
        let path = Path([
            try MIDIMapping(control: .controlChange(channel: 0, controller: 7), key: "gain.in.0", pickup: false),
            try MIDIMapping(control: .controlChange14(channel: 1, controller: 2), key: "gain.in.0"),
            try MIDIMapping(control: .note(channel: 0, note: 60), key: "mute.in.0"),
            try MIDIMapping(control: .pitchBend(channel: 3), key: "gain.master"),
        ], mixer: try mixer())
        // Everything, the first time: unity is 7-bit 99, 14-bit 12808 (100 << 7 | 8), a mute off is a note off.
        #expect(path.mapper.feedback(for: path.mixer) == [
            .controlChange(channel: 0, controller: 7, value: 99),
            .controlChange(channel: 1, controller: 2, value: 100), .controlChange(channel: 1, controller: 34, value: 8),
            .noteOff(channel: 0, note: 60), .pitchBend(channel: 3, value: 12808),
        ])
        #expect(path.mapper.feedback(for: path.mixer) == [], "nothing changed")
        // A change from elsewhere goes to every control of its key.
        try path.mixer.setInputGain(0, 0.5)
        let half = FaderLaw.position(gain: 0.5)
        #expect(path.mapper.feedback(for: path.mixer) == [
            .controlChange(channel: 0, controller: 7, value: UInt8((half * 127).rounded())),
            .controlChange(channel: 1, controller: 2, value: UInt8(Int((half * 16383).rounded()) >> 7)),
            .controlChange(channel: 1, controller: 34, value: UInt8(Int((half * 16383).rounded()) & 127)),
        ])
        // The fader moves it: the other control of the key follows, the fader is not echoed.
        try path.play([.controlChange(channel: 0, controller: 7, value: 120)])
        let moved = path.mapper.feedback(for: path.mixer)
        #expect(moved.count == 2 && !moved.contains { $0.channel == 0 })
        // A toggle's button is told the state it switched to (its light).
        try path.play([.noteOn(channel: 0, note: 60, velocity: 127)])
        #expect(path.mapper.feedback(for: path.mixer) == [.noteOn(channel: 0, note: 60, velocity: 127)])
        path.mapper.resendAll()
        #expect(path.mapper.feedback(for: path.mixer).count == 5)
    }

    @Test("A key the node does not have (fewer channels, another name) is skipped")
    func missingKeys() throws {
        var mapper = MIDIMapper([
            try MIDIMapping(control: .controlChange(channel: 0, controller: 7), key: "gain.in.5", pickup: false),
            try MIDIMapping(control: .controlChange(channel: 0, controller: 7), key: "gain.in.LFE", pickup: false),
        ])
        let mixer = try mixer()
        #expect(mapper.changes(for: MIDIRecord(message: .controlChange(channel: 0, controller: 7, value: 1), presses: 0), in: mixer) == [])
        #expect(mapper.feedback(for: mixer) == [])
    }
}

extension MIDIMessage {
    /// Whether two messages come from the same control (the same slot of an inbox).
    func sameControl(as other: MIDIMessage) -> Bool {
        switch (self, other) {
        case let (.controlChange(a, n, _), .controlChange(b, m, _)): a == b && n == m
        case let (.noteOn(a, n, _), .noteOn(b, m, _)), let (.noteOn(a, n, _), .noteOff(b, m)),
             let (.noteOff(a, n), .noteOn(b, m, _)), let (.noteOff(a, n), .noteOff(b, m)): a == b && n == m
        case let (.pitchBend(a, _), .pitchBend(b, _)): a == b
        default: false
        }
    }
}
