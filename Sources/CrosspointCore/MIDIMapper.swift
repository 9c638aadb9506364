/// Turns MIDI messages into parameter changes and parameter changes into MIDI feedback, for a
/// node's list of mappings. Runs on the main loop (it returns arrays): the data thread only
/// parses messages (`MIDIParser`) and hands them over.
///
/// - 14-bit pairs: the coarse half (controller N) sets the value with the fine half at 0, as
///   MIDI 1.0 says; the fine half (N + 32) then refines it. A fine half with no coarse one
///   before it is ignored.
/// - Pickup: a continuous key with pickup on follows its control only once the control
///   reaches the key's value (within one step) or crosses it between two messages; until then
///   messages are ignored. A change of the key from anywhere else lets go again.
/// - On/off keys: toggle flips on each press (a note on; a control change rising to 64 or
///   more); momentary is on while held (note on to note off; a control at 64 or more).
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
        /// A control change on an on/off key: held (64 or more) at the last message.
        var held = false
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

    /// The changes `message` makes to a node in state `mixer`.
    public mutating func changes(for message: MIDIMessage, in mixer: Mixer) -> [Change] {
        var changes: [Change] = []
        for k in mappings.indices {
            guard let input = input(of: message, for: k),
                  let parameter = try? Parameter(key: mappings[k].key, in: mixer) else { continue }
            if let value = apply(input, to: k, current: mixer.value(of: parameter)) {
                changes.append(Change(parameter: parameter, value: value, mapping: k))
            }
        }
        return changes
    }

    /// What a message means to mapping `k`: a position of its control, a press or a release.
    private enum Input { case position(Double), press, release }

    private mutating func input(of message: MIDIMessage, for k: Int) -> Input? {
        let steps = Double(mappings[k].control.steps)
        switch (mappings[k].control, message) {
        case let (.controlChange(channel, controller), .controlChange(c, n, value)) where c == channel && n == controller:
            return onOff(k) ? switchInput(k, held: value >= 64) : .position(Double(value) / steps)
        case let (.controlChange14(channel, controller), .controlChange(c, n, value)) where c == channel && n == controller:
            states[k].coarse = UInt16(value)
            let whole = UInt16(value) << 7
            return onOff(k) ? switchInput(k, held: value >= 64) : .position(Double(whole) / steps)
        case let (.controlChange14(channel, controller), .controlChange(c, n, value)) where c == channel && n == controller &+ 32:
            guard let coarse = states[k].coarse, !onOff(k) else { return nil }
            return .position(Double(coarse << 7 | UInt16(value)) / steps)
        case let (.note(channel, note), .noteOn(c, n, _)) where c == channel && n == note:
            return .press
        case let (.note(channel, note), .noteOff(c, n)) where c == channel && n == note:
            return .release
        case let (.pitchBend(channel), .pitchBend(c, value)) where c == channel:
            return .position(Double(value) / steps)
        default:
            return nil
        }
    }

    private func onOff(_ k: Int) -> Bool { mappings[k].law == .onOff }

    /// A control change on an on/off key: a press when it rises to 64 or more, a release when it falls.
    private mutating func switchInput(_ k: Int, held: Bool) -> Input? {
        defer { states[k].held = held }
        if held == states[k].held { return mappings[k].switchMode == .momentary ? (held ? .press : .release) : nil }
        return held ? .press : .release
    }

    private mutating func apply(_ input: Input, to k: Int, current: ParameterValue) -> ParameterValue? {
        let mapping = mappings[k]
        switch (input, current) {
        case (.press, .bool(let on)):
            let next = mapping.switchMode == .toggle ? !on : true
            // A toggle's button is sent the state it switched to; a momentary one is not echoed.
            states[k].sent = mapping.switchMode == .toggle ? nil : (next ? 1 : 0)
            return .bool(next)
        case (.release, .bool):
            guard mapping.switchMode == .momentary else { return nil }
            states[k].sent = 0
            return .bool(false)
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
