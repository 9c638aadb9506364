import Synchronization

// How feedback crosses to the data thread, the other way from MIDIInbox: the main loop
// (the producer) puts the messages a change makes; the data thread (the consumer) takes what
// fits into each cycle's MIDI output buffer. A single-producer single-consumer ring of packed
// messages (`status << 16 | data1 << 8 | data2`) with atomic indices: no lock, no allocation on
// the data thread. Feedback is state, not a stream: the producer puts a batch whole or not at
// all, and when it does not fit, it sends it again later (`MIDIMapper.resendAll`).

/// The ring both threads share. Lives at a fixed address.
struct MIDIOutboxState: ~Copyable {
    static let capacity = 4096
    let messages: UnsafeMutablePointer<UInt32>
    /// Messages put (the producer's) and taken (the consumer's), counted without end.
    let put = Atomic<Int>(0)
    let taken = Atomic<Int>(0)

    init() {
        messages = .allocate(capacity: Self.capacity)
        messages.initialize(repeating: 0, count: Self.capacity)
    }

    func free() { messages.deallocate() }
}

/// The two ends: `put` on the main loop, `peek` and `consume` on the data thread. A plain value
/// holding one pointer; made and freed on the main loop.
public struct MIDIOutbox: @unchecked Sendable {
    let state: UnsafeMutablePointer<MIDIOutboxState>

    public static func make() -> MIDIOutbox {
        let state = UnsafeMutablePointer<MIDIOutboxState>.allocate(capacity: 1)
        state.initialize(to: MIDIOutboxState())
        return MIDIOutbox(state: state)
    }

    /// Frees the ring: once the data thread no longer takes from it.
    public func free() {
        state.pointee.free()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// A message packed as the ring and the C shim hold it.
    public static func pack(_ message: MIDIMessage) -> UInt32 {
        let (status, first, second) = message.bytes
        return UInt32(status) << 16 | UInt32(first) << 8 | UInt32(second)
    }

    /// Main loop: puts all of `messages`, or none when they do not all fit (false).
    public func put(_ messages: [MIDIMessage]) -> Bool {
        guard !messages.isEmpty else { return true }
        let put = state.pointee.put.load(ordering: .relaxed)
        let taken = state.pointee.taken.load(ordering: .acquiring)
        guard MIDIOutboxState.capacity - (put - taken) >= messages.count else { return false }
        for (k, message) in messages.enumerated() {
            state.pointee.messages[(put + k) % MIDIOutboxState.capacity] = Self.pack(message)
        }
        state.pointee.put.store(put + messages.count, ordering: .releasing)
        return true
    }

    /// Data thread: copies up to `capacity` waiting messages, oldest first, into `buffer`;
    /// returns how many. They stay waiting until `consume`. Real-time safe.
    @inline(__always)
    public func peek(into buffer: UnsafeMutablePointer<UInt32>, capacity: Int) -> Int {
        let taken = state.pointee.taken.load(ordering: .relaxed)
        let put = state.pointee.put.load(ordering: .acquiring)
        let count = min(put - taken, capacity)
        for k in 0..<max(count, 0) { buffer[k] = state.pointee.messages[(taken + k) % MIDIOutboxState.capacity] }
        return max(count, 0)
    }

    /// How many messages the data thread has taken so far (it moves only while the node runs).
    public var taken: Int { state.pointee.taken.load(ordering: .acquiring) }

    /// Data thread: the first `count` waiting messages were sent. Real-time safe.
    @inline(__always)
    public func consume(_ count: Int) {
        guard count > 0 else { return }
        let taken = state.pointee.taken.load(ordering: .relaxed)
        state.pointee.taken.store(taken + count, ordering: .releasing)
    }
}
