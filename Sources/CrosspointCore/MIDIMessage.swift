/// MIDI 1.0 channel messages as a control surface sends them, and the parser that finds them in
/// a byte stream. Real-time safe: value types of fixed size, no allocation, no throw; the node's
/// data thread feeds it the bytes of each cycle's MIDI events.

/// A message Crosspoint acts on or sends. Channels are 0...15 here (users read and write 1...16).
public enum MIDIMessage: Hashable, Sendable, CustomStringConvertible {
    case controlChange(channel: UInt8, controller: UInt8, value: UInt8)
    /// A note on with a velocity above 0 (a note on with velocity 0 is a note off).
    case noteOn(channel: UInt8, note: UInt8, velocity: UInt8)
    case noteOff(channel: UInt8, note: UInt8)
    /// 0...16383, centre 8192.
    case pitchBend(channel: UInt8, value: UInt16)
    /// A program change (a scene's recall; never sent).
    case programChange(channel: UInt8, program: UInt8)

    public var channel: UInt8 {
        switch self {
        case let .controlChange(channel, _, _), let .noteOn(channel, _, _), let .noteOff(channel, _),
             let .pitchBend(channel, _), let .programChange(channel, _): channel
        }
    }

    /// The message's bytes on the wire: a status and two data bytes (a note off is sent as a
    /// note on with velocity 0, as most surfaces send and read it).
    public var bytes: (UInt8, UInt8, UInt8) {
        switch self {
        case let .controlChange(channel, controller, value): (0xB0 | channel & 0x0F, controller & 0x7F, value & 0x7F)
        case let .noteOn(channel, note, velocity): (0x90 | channel & 0x0F, note & 0x7F, velocity & 0x7F)
        case let .noteOff(channel, note): (0x90 | channel & 0x0F, note & 0x7F, 0)
        case let .pitchBend(channel, value): (0xE0 | channel & 0x0F, UInt8(truncatingIfNeeded: value) & 0x7F,
                                              UInt8(truncatingIfNeeded: value >> 7) & 0x7F)
        // Two bytes on the wire: the third is not sent (the node sends no program change).
        case let .programChange(channel, program): (0xC0 | channel & 0x0F, program & 0x7F, 0)
        }
    }

    public var description: String {
        switch self {
        case let .controlChange(channel, controller, value): "cc \(Int(channel) + 1) \(controller) = \(value)"
        case let .noteOn(channel, note, velocity): "note \(Int(channel) + 1) \(note) on \(velocity)"
        case let .noteOff(channel, note): "note \(Int(channel) + 1) \(note) off"
        case let .pitchBend(channel, value): "bend \(Int(channel) + 1) = \(value)"
        case let .programChange(channel, program): "program \(Int(channel) + 1) \(program)"
        }
    }
}

/// Finds channel messages in MIDI 1.0 bytes, one byte at a time: running status, real-time
/// bytes anywhere (even inside a message), SysEx and system common messages skipped, a message
/// cut short by a new status dropped, data bytes without a status ignored. Messages Crosspoint
/// does not act on (aftertouch) are read and dropped.
public struct MIDIParser: Sendable {
    /// The running status (0: none).
    private var status: UInt8 = 0
    private var first: UInt8 = 0
    /// Data bytes held of the current message.
    private var held = 0
    /// Inside a SysEx (F0 ... F7) or a system common message: data bytes are skipped.
    private var skipping = false

    public init() {}

    /// Forgets a message in progress (each PipeWire control event is read on its own).
    public mutating func reset() { self = MIDIParser() }

    /// Feeds one byte; returns the message it completes, if any.
    public mutating func feed(_ byte: UInt8) -> MIDIMessage? {
        if byte >= 0xF8 { return nil }  // real time: clock, start, stop, active sensing, reset
        if byte >= 0x80 {
            held = 0
            if byte >= 0xF0 {
                // SysEx, its end, or system common: no running status past it.
                status = 0
                skipping = byte != 0xF7
            } else {
                status = byte
                skipping = false
            }
            return nil
        }
        guard !skipping, status != 0 else { return nil }
        let kind = status & 0xF0
        let needed = kind == 0xC0 || kind == 0xD0 ? 1 : 2
        if held == 0 {
            first = byte
            held = 1
            guard needed == 1 else { return nil }
            held = 0
            return kind == 0xC0 ? .programChange(channel: status & 0x0F, program: first) : nil
        }
        held = 0
        let channel = status & 0x0F
        switch kind {
        case 0x80: return .noteOff(channel: channel, note: first)
        case 0x90: return byte == 0 ? .noteOff(channel: channel, note: first) : .noteOn(channel: channel, note: first, velocity: byte)
        case 0xB0: return .controlChange(channel: channel, controller: first, value: byte)
        case 0xE0: return .pitchBend(channel: channel, value: UInt16(first) | UInt16(byte) << 7)
        default: return nil  // poly and channel pressure
        }
    }
}
