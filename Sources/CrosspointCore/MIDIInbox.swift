import Synchronization

// How MIDI crosses from the data thread to the main loop. Not a queue of messages: the latest
// value of every control, one slot each (16 channels x (128 controllers + 128 notes + pitch
// bend + 128 programs)), with a count of presses. A queue would have to drop messages when a controller
// floods it faster than the main loop drains it, and then the last value of a fader could be
// the one lost. A slot cannot overflow: however many messages arrive between two collections,
// the main loop sees each control's last value, and each button's presses by count, so that a
// toggle flips as often as it was pressed and a momentary button ends as it was left.
//
// The data thread (the producer, `receive`) writes a slot with one atomic store, then raises
// its channel's bit in `pending`; the main loop (the consumer, `collect`) takes the bits first,
// then, in those channels only, each slot marked dirty with one atomic and-not. A slot written
// after the scan passed it raises its bit again, and is taken at the next collection. No lock, no allocation, no retain on
// the data thread; each side keeps its own counts, in memory only it touches.
//
// The collected order is the slots' (by channel: controllers, then notes, then pitch bend), not
// the arrival order: a 14-bit pair's coarse half (controller N < 32) is collected before its
// fine half (N + 32), as a surface sends them.

/// One control's news at a collection: its last message and how many presses it had since the
/// previous collection (a note on; a controller rising to 64 or more).
public struct MIDIRecord: Equatable, Sendable {
    public let message: MIDIMessage
    public let presses: Int

    public init(message: MIDIMessage, presses: Int) {
        self.message = message
        self.presses = presses
    }
}

/// The slots both threads share. Lives at a fixed address.
struct MIDIInboxState: ~Copyable {
    static let perChannel = 385
    static let slotCount = 16 * perChannel
    /// Bit 63: dirty (written since taken); bits 16-47: presses, counted (wrapping after 2^32);
    /// bits 0-13: the value.
    static let dirty: UInt64 = 1 << 63

    let slots: UnsafeMutablePointer<Atomic<UInt64>>
    /// One bit per MIDI channel with a slot written since the last collection.
    let pending = Atomic<UInt16>(0)
    /// The producer's own: each slot's press count and last value.
    let producerPresses: UnsafeMutablePointer<UInt32>
    let producerValues: UnsafeMutablePointer<UInt16>
    /// The consumer's own: each slot's press count at its last collection.
    let consumerPresses: UnsafeMutablePointer<UInt32>

    init() {
        slots = .allocate(capacity: Self.slotCount)
        for i in 0..<Self.slotCount { (slots + i).initialize(to: Atomic(0)) }
        producerPresses = .allocate(capacity: Self.slotCount)
        producerPresses.initialize(repeating: 0, count: Self.slotCount)
        producerValues = .allocate(capacity: Self.slotCount)
        producerValues.initialize(repeating: 0, count: Self.slotCount)
        consumerPresses = .allocate(capacity: Self.slotCount)
        consumerPresses.initialize(repeating: 0, count: Self.slotCount)
    }

    func free() {
        slots.deinitialize(count: Self.slotCount)
        slots.deallocate()
        producerPresses.deallocate()
        producerValues.deallocate()
        consumerPresses.deallocate()
    }
}

/// The two ends of the crossing, as one handle: `receive` on the data thread, `collect` on the
/// main loop. A plain value holding one pointer (no retain on the data thread); made and freed
/// on the main loop (`make`, `free`).
public struct MIDIInbox: @unchecked Sendable {
    let state: UnsafeMutablePointer<MIDIInboxState>

    public static func make() -> MIDIInbox {
        let state = UnsafeMutablePointer<MIDIInboxState>.allocate(capacity: 1)
        state.initialize(to: MIDIInboxState())
        return MIDIInbox(state: state)
    }

    /// Frees the slots: once the data thread no longer calls `receive`.
    public func free() {
        state.pointee.free()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Data thread: keeps `message` as its control's latest. Real-time safe.
    @inline(__always)
    public func receive(_ message: MIDIMessage) {
        let slot: Int, value: UInt16
        var pressed = false
        switch message {
        case let .controlChange(channel, controller, v):
            slot = Int(channel & 0x0F) * MIDIInboxState.perChannel + Int(controller & 0x7F)
            value = UInt16(v & 0x7F)
            pressed = value >= 64 && state.pointee.producerValues[slot] < 64
        case let .noteOn(channel, note, velocity):
            slot = Int(channel & 0x0F) * MIDIInboxState.perChannel + 128 + Int(note & 0x7F)
            value = UInt16(max(velocity & 0x7F, 1))
            pressed = true
        case let .noteOff(channel, note):
            slot = Int(channel & 0x0F) * MIDIInboxState.perChannel + 128 + Int(note & 0x7F)
            value = 0
        case let .pitchBend(channel, v):
            slot = Int(channel & 0x0F) * MIDIInboxState.perChannel + 256
            value = v & 0x3FFF
        case let .programChange(channel, program):
            slot = Int(channel & 0x0F) * MIDIInboxState.perChannel + 257 + Int(program & 0x7F)
            value = 1
            pressed = true
        }
        let presses = state.pointee.producerPresses
        state.pointee.producerValues[slot] = value
        if pressed { presses[slot] &+= 1 }
        state.pointee.slots[slot].store(MIDIInboxState.dirty | UInt64(presses[slot]) << 16 | UInt64(value), ordering: .releasing)
        state.pointee.pending.bitwiseOr(1 << UInt16(slot / MIDIInboxState.perChannel), ordering: .releasing)
    }

    /// Main loop: every control that changed since the last collection, in slot order.
    public func collect() -> [MIDIRecord] {
        let channels = state.pointee.pending.exchange(0, ordering: .acquiringAndReleasing)
        guard channels != 0 else { return [] }
        var records: [MIDIRecord] = []
        for channel in 0..<16 where channels & 1 << channel != 0 {
            let first = channel * MIDIInboxState.perChannel
            for slot in first..<first + MIDIInboxState.perChannel {
                if let record = take(slot) { records.append(record) }
            }
        }
        return records
    }

    /// Main loop: slot `slot`'s news, if it was written since it was last taken.
    private func take(_ slot: Int) -> MIDIRecord? {
        let slots = state.pointee.slots, consumerPresses = state.pointee.consumerPresses
        // A plain load first: most slots are clean, and this keeps the scan read-only for them.
        guard slots[slot].load(ordering: .acquiring) & MIDIInboxState.dirty != 0 else { return nil }
        let word = slots[slot].bitwiseAnd(~MIDIInboxState.dirty, ordering: .acquiringAndReleasing).oldValue
        let count = UInt32(truncatingIfNeeded: word >> 16)
        let presses = Int(count &- consumerPresses[slot])
        consumerPresses[slot] = count
        let value = UInt16(truncatingIfNeeded: word) & 0x3FFF
        let channel = UInt8(slot / MIDIInboxState.perChannel)
        let index = slot % MIDIInboxState.perChannel
        let message: MIDIMessage =
            if index < 128 { .controlChange(channel: channel, controller: UInt8(index), value: UInt8(value & 0x7F)) }
            else if index < 256 {
                value == 0 ? .noteOff(channel: channel, note: UInt8(index - 128))
                    : .noteOn(channel: channel, note: UInt8(index - 128), velocity: UInt8(value & 0x7F))
            } else if index == 256 { .pitchBend(channel: channel, value: value) }
            else { .programChange(channel: channel, program: UInt8(truncatingIfNeeded: index - 257)) }
        return MIDIRecord(message: message, presses: presses)
    }
}
