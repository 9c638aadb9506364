/// Turns MIDI into parameter changes and parameter changes into MIDI feedback, for a node's
/// list of mappings. Runs on the main loop (it returns arrays), on what `MIDIInbox.collect`
/// gives: each control's last message and its presses since the last collection.
///
/// - 14-bit pairs: the coarse half (controller N) sets the value with the fine half at 0, as
///   MIDI 1.0 says; the fine half (N + 32) then refines it. A fine half with no coarse one
///   before it is ignored.
/// - Pickup: a continuous key with pickup on follows its control only once the control
///   reaches the key's value (within one and a half steps) or crosses it between two
///   collections; until then the control is ignored. A change of the key from anywhere else
///   lets go again.
/// - On/off keys: toggle flips on each press (a note on; a controller rising to 64 or more),
///   as many times as it was pressed; momentary follows the button (on from note on to note
///   off, or while the controller is at 64 or more).
/// - Feedback: `feedback(for:)` gives the messages that put each control where its key now
///   is, for the keys that changed since they were last sent. A value that came in on a
///   fader or a momentary button is not sent back to it; a toggle's button gets the state it
///   switched to (so that its light shows it).
public struct MIDIMapper: Sendable {
    public private(set) var mappings: [MIDIMapping]
    private var states: [State]

    private struct State: Sendable {
        /// 14-bit pairs: the coarse half last received.
        var coarse: UInt16?
        /// Pickup: following the control.
        var engaged = false
        /// The control's last position (0...1).
        var lastPosition: Double?
        /// The value this control last gave its key.
        var applied: Double?
        /// The value the control was last put at (feedback, or its own message).
        var sent: Double?
    }

    /// One change a message makes: apply it to the mixer with `Mixer.set`.
    public struct Change: Equatable, Sendable {
        public let parameter: Parameter
        public let value: ParameterValue
        /// The index of the mapping it came through.
        public let mapping: Int
    }

    public init(_ mappings: [MIDIMapping] = []) {
        self.mappings = mappings
        states = Array(repeating: State(), count: mappings.count)
    }

    /// The changes a control's news makes to a node in state `mixer`.
    public mutating func changes(for record: MIDIRecord, in mixer: Mixer) -> [Change] {
        var changes: [Change] = []
        for k in mappings.indices {
            guard let input = input(of: record, for: k),
                  let parameter = try? Parameter(key: mappings[k].key, in: mixer) else { continue }
            if let value = apply(input, to: k, current: mixer.value(of: parameter)) {
                changes.append(Change(parameter: parameter, value: value, mapping: k))
            }
        }
        return changes
    }

    /// What a control's news means to mapping `k`: a position of its control, or for an on/off
    /// key, its presses and whether the button is held now.
    private enum Input { case position(Double), buttons(presses: Int, held: Bool) }

    private mutating func input(of record: MIDIRecord, for k: Int) -> Input? {
        let steps = Double(mappings[k].control.steps)
        let onOff = mappings[k].law == .onOff
        switch (mappings[k].control, record.message) {
        case let (.controlChange(channel, controller), .controlChange(c, n, value)) where c == channel && n == controller:
            return onOff ? .buttons(presses: record.presses, held: value >= 64) : .position(Double(value) / steps)
        case let (.controlChange14(channel, controller), .controlChange(c, n, value)) where c == channel && n == controller:
            states[k].coarse = UInt16(value)
            return onOff ? .buttons(presses: record.presses, held: value >= 64) : .position(Double(UInt16(value) << 7) / steps)
        case let (.controlChange14(channel, controller), .controlChange(c, n, value)) where c == channel && n == controller &+ 32:
            guard let coarse = states[k].coarse, !onOff else { return nil }
            return .position(Double(coarse << 7 | UInt16(value)) / steps)
        case let (.note(channel, note), .noteOn(c, n, _)) where c == channel && n == note:
            return .buttons(presses: record.presses, held: true)
        case let (.note(channel, note), .noteOff(c, n)) where c == channel && n == note:
            return .buttons(presses: record.presses, held: false)
        case let (.pitchBend(channel), .pitchBend(c, value)) where c == channel:
            return .position(Double(value) / steps)
        case let (.programChange(channel, program), .programChange(c, p)) where c == channel && p == program:
            return .buttons(presses: record.presses, held: true)
        default:
            return nil
        }
    }

    private mutating func apply(_ input: Input, to k: Int, current: ParameterValue) -> ParameterValue? {
        let mapping = mappings[k]
        if case let .recall(recall) = mapping.law {
            // A press (a note on, a program change) asks for the scene; a release asks nothing.
            guard case let .buttons(presses, _) = input, presses > 0 else { return nil }
            return recall.value
        }
        switch (input, current) {
        case let (.buttons(presses, held), .bool(on)):
            let next: Bool
            if mapping.switchMode == .toggle {
                guard presses % 2 == 1 else { return nil }
                next = !on
                states[k].sent = nil  // the button is told the state it switched to
            } else {
                next = held
                states[k].sent = held ? 1 : 0  // a momentary button is not echoed
            }
            return .bool(next)
        case let (.position(position), .number(now)):
            defer { states[k].lastPosition = position }
            if let applied = states[k].applied, !Self.same(applied, now) { states[k].engaged = false }
            if mapping.pickup && !states[k].engaged {
                let target = mapping.position(value: now)
                let step = 1.0 / Double(mapping.control.steps)
                let crossed = states[k].lastPosition.map { ($0 - target) * (position - target) <= 0 } ?? false
                guard abs(position - target) <= step * 1.5 || crossed else { return nil }
            }
            states[k].engaged = true
            let value = mapping.value(position: position, sign: now < 0 ? -1 : 1)
            // What the mixer keeps (gains are Float): compared with what it holds next time.
            let kept = mapping.law == .fader ? Double(Float(value)) : value
            states[k].applied = kept
            states[k].sent = kept
            return .number(value)
        default:
            return nil
        }
    }

    /// Forgets what was sent: the next `feedback` puts every control where its key is (a
    /// surface just linked, or switched on).
    public mutating func resendAll() {
        for k in states.indices { states[k].sent = nil }
    }

    /// The messages that put each control where its key now is, for keys that changed since
    /// their control was last put there (or moved it).
    public mutating func feedback(for mixer: Mixer) -> [MIDIMessage] {
        var messages: [MIDIMessage] = []
        for k in mappings.indices {
            guard let parameter = try? Parameter(key: mappings[k].key, in: mixer) else { continue }
            let value: Double
            switch mixer.value(of: parameter) {
            case let .number(v): value = mappings[k].law == .fader ? Double(Float(v)) : v
            case let .bool(on): value = on ? 1 : 0
            default: continue
            }
            if let sent = states[k].sent, Self.same(sent, value) { continue }
            states[k].sent = value
            messages += Self.messages(putting: mappings[k].control, at: mappings[k].position(value: value))
        }
        return messages
    }

    /// The messages that move `control` to `position` (0...1).
    static func messages(putting control: MIDIControl, at position: Double) -> [MIDIMessage] {
        let clamped = position.isNaN ? 0 : min(max(position, 0), 1)
        let value = UInt16(truncatingIfNeeded: Int((clamped * Double(control.steps)).rounded()))
        switch control {
        case let .controlChange(channel, controller):
            return [.controlChange(channel: channel, controller: controller, value: UInt8(truncatingIfNeeded: value))]
        case .programChange:
            return []  // a recall's program: nothing to put back
        case let .controlChange14(channel, controller):
            return [.controlChange(channel: channel, controller: controller, value: UInt8(truncatingIfNeeded: value >> 7)),
                    .controlChange(channel: channel, controller: controller &+ 32, value: UInt8(truncatingIfNeeded: value & 0x7F))]
        case let .note(channel, note):
            return [value > 0 ? .noteOn(channel: channel, note: note, velocity: 127) : .noteOff(channel: channel, note: note)]
        case let .pitchBend(channel):
            return [.pitchBend(channel: channel, value: value)]
        }
    }

    private static func same(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-6 * max(1, abs(b)) }
}
