import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire

// A node's MIDI control, both sides of it (ARCHITECTURE.md: "MIDI control").
//
// Data thread (`processMIDI`, each cycle, before the audio): the events on `midi_in` go through
// the MIDIParser into the MIDIInbox (each control's last value and its presses, in atomic
// slots); if any arrived, the main loop is woken (`pw_loop_signal_event`: an eventfd write,
// signals coalesce). The feedback waiting in the MIDIOutbox is written to `midi_out`.
// Main loop (`MIDIControlCenter`): collects the inbox, turns what moved into changes through
// the MIDIMapper (pickup, 14-bit pairs, toggle/momentary) and the parameter table, and puts the
// feedback of every change, from anywhere, into the outbox.

/// What the data thread holds of MIDI control, in its DSPContext: made by MIDIControlCenter,
/// freed by the node once its filter is gone (`free`).
struct MIDIRealtime {
    let inbox: MIDIInbox
    let outbox: MIDIOutbox
    var parser = MIDIParser()
    let loop: UnsafeMutablePointer<pw_loop>
    let arrived: UnsafeMutablePointer<spa_source>
    /// The messages of one cycle's feedback, copied out of the outbox (`scratchCapacity`).
    let scratch: UnsafeMutablePointer<UInt32>
    /// Feedback as UMP words (PipeWire 1.4 and later), not MIDI 1.0 bytes.
    let ump: Bool
    /// Set while this cycle's events are read: the main loop is to be woken.
    var received = false

    /// At most this many feedback messages a cycle (24 bytes each in the buffer: 3 kB, within
    /// the 4096 bytes PipeWire 0.3's MIDI buffers have).
    static let scratchCapacity = 128

    /// Frees the crossing: once the data thread no longer runs (the filter is destroyed).
    func free() {
        cpshim_loop_destroy_source(loop, arrived)
        inbox.free()
        outbox.free()
        scratch.deallocate()
    }
}

/// One cycle of MIDI on the data thread: reads `midi_in`, writes `midi_out` (when the table has
/// them). No allocation, no lock, no log.
@inline(__always)
func processMIDI(_ context: UnsafeMutablePointer<DSPContext>) {
    let table = context.pointee.table.pointee
    guard table.midiInput != nil || table.midiOutput != nil, let midi = context.pointee.midi else { return }
    if let port = table.midiInput {
        context.pointee.midi?.received = false
        _ = cpshim_midi_read(port, { data, bytes, size in
            guard let data, let bytes else { return }
            let context = data.assumingMemoryBound(to: DSPContext.self)
            // Each event is read on its own: a message cut short in one does not swallow the next.
            context.pointee.midi?.parser.reset()
            for k in 0..<Int(size) {
                guard let message = context.pointee.midi?.parser.feed(bytes[k]) else { continue }
                context.pointee.midi?.inbox.receive(message)
                context.pointee.midi?.received = true
            }
        }, context)
        if context.pointee.midi?.received == true { _ = cpshim_loop_signal_event(midi.loop, midi.arrived) }
    }
    if let port = table.midiOutput {
        let count = midi.outbox.peek(into: midi.scratch, capacity: MIDIRealtime.scratchCapacity)
        let written = cpshim_midi_write(port, midi.scratch, UInt32(count), midi.ump)
        // Not linked: the feedback goes nowhere (a link made later gets every control's state:
        // FilterNode's add_buffer).
        midi.outbox.consume(written < 0 ? count : Int(written))
    }
}

/// The main loop's side of a node's MIDI control, a node part (NodePart): it makes the
/// crossing (the inbox, the outbox, the wake-up) the first time the node has its MIDI ports and
/// hands it to the node, which frees it once the filter is gone; it takes `midi.learn`, turns
/// what arrived into changes, and sends the feedback of every accepted change.
final class MIDIControlCenter: NodePart {
    private let node: FilterNode
    private let loop: UnsafeMutablePointer<pw_loop>
    /// The crossing, once made (the node holds the data thread's copy and frees it).
    private var realtime: MIDIRealtime?
    private var mapper = MIDIMapper()
    /// Feedback that did not fit the outbox is sent again after this many ms.
    private var retryTimer: UnsafeMutablePointer<spa_source>?
    /// Whether the mixer last heard of had its MIDI ports.
    private var portsWereOn: Bool

    /// Whether this PipeWire speaks UMP on its MIDI ports (1.4 and later): its tools and its
    /// ALSA bridge read only UMP from a port, so the ports are made "32 bit raw UMP" there.
    static let ump = RunningPipeWire.atLeast(1, 4)

    /// The `format.dsp` of the MIDI ports on this PipeWire.
    static var portFormat: String { ump ? "32 bit raw UMP" : "8 bit raw midi" }

    init(node: FilterNode, loop: UnsafeMutablePointer<pw_loop>) {
        self.node = node
        self.loop = loop
        portsWereOn = node.mixer.midi.ports
        // The node connected its filter in its init, but nothing links or runs it before the
        // main loop turns again: the crossing is in place before its first cycle.
        preparePorts(for: node.mixer)
        sendFeedback(for: node.mixer)
    }

    /// Makes the crossing the first time the node has its MIDI ports, before the data thread's
    /// table has them (the table's swap then publishes it to the data thread). Without it (the
    /// loop could not make its event source: out of memory or file descriptors) the ports are
    /// there and do nothing.
    func preparePorts(for mixer: Mixer) {
        guard mixer.midi.ports, realtime == nil else { return }
        // The callback gets this object unretained: the node destroys the source, after the
        // filter and in the same teardown as this part.
        guard let arrived = cpshim_loop_add_event(loop, { data, _ in
            guard let data else { return }
            Unmanaged<MIDIControlCenter>.fromOpaque(data).takeUnretainedValue().arrived()
        }, nil) else {
            Log.error("\(node.configuration.nodeName): cannot make the event source MIDI control needs; its ports do nothing")
            return
        }
        let inbox = MIDIInbox.make(), outbox = MIDIOutbox.make()
        let scratch = UnsafeMutablePointer<UInt32>.allocate(capacity: MIDIRealtime.scratchCapacity)
        scratch.initialize(repeating: 0, count: MIDIRealtime.scratchCapacity)
        let crossing = MIDIRealtime(inbox: inbox, outbox: outbox, loop: loop, arrived: arrived, scratch: scratch, ump: Self.ump)
        arrived.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        realtime = crossing
        node.attach(midi: crossing)
    }

    /// Frees the retry timer; the crossing is the node's to free, after the filter.
    func destroy(connectionGone: Bool) {
        if let retryTimer { cpshim_loop_destroy_source(loop, retryTimer) }
        retryTimer = nil
    }

    func mixerChanged(_ mixer: Mixer) {
        if mixer.midi.ports && !portsWereOn { resendAll() }
        portsWereOn = mixer.midi.ports
        sendFeedback(for: mixer)
    }

    /// midi_out was linked (its buffers arrive): send the linked surface every control, once
    /// the link runs.
    func portGotBuffers(_ kind: PortGroup.Kind) {
        if kind == .midiOutput { resendSoon() }
    }

    // MARK: Learning

    var claimedKeys: [String] { [MIDILearn.key] }

    /// `midi.learn`, a request to the running node, not its state: starts or stops learning.
    func request(_ entry: PropsCodec.Entry) {
        let mixer = node.mixer
        do throws(CrosspointError) {
            let request = try MIDILearn(try Mixer.parameterValue(entry.value, key: MIDILearn.key))
            if let target = request.target { _ = try Parameter(key: target, in: mixer) }
            guard realtime != nil, mixer.midi.ports else {
                throw .invalidValue(key: MIDILearn.key, reason: "the node has no MIDI ports: switch them on first (midi = true)")
            }
            learn(request.target)
            Log.info("\(node.configuration.nodeName): \(request.target.map { "learning: the next MIDI control that moves is mapped to \($0)" } ?? "learning stopped")")
        } catch {
            Log.warn("\(node.configuration.nodeName): set-param refused: \(error)")
        }
    }

    // MARK: What arrived

    /// MIDI arrived (the data thread woke the main loop), or feedback is to be sent again: the
    /// changes it makes play at once; Props and the other parts follow within
    /// `FilterNode.midiPublishInterval`.
    private func arrived() {
        guard realtime != nil else { return }
        let name = node.configuration.nodeName
        let records = collect()
        switch learning(from: records) {
        case .notLearning: break
        case .waiting:
            // Learning: what moved moves nothing (it did not suit the key).
            return
        case let .learned(learned):
            let mixer = node.mixer
            var next = mixer
            let texts = mixer.midi.mappings.filter { !($0.control == learned.control && $0.key == learned.key) }.map(\.text)
            do {
                try next.setMIDIMappings(texts + [learned.text])
                Log.info("\(name): learned \(learned.text)")
                try node.update { $0 = next }
            } catch {
                Log.warn("\(name): cannot map \(learned.text): \(error)")
            }
            return
        }
        var requests: [PropsCodec.Entry] = []
        if let next = apply(records, to: node.mixer, node: name, requests: &requests) { node.play(next) }
        // A scene's recall (a note or a program change mapped to scene.recall) is a request,
        // handed to the part that claims it as a set-param's would be.
        if !requests.isEmpty { _ = node.host?.takeRequests(requests) }
        sendFeedback(for: node.mixer)
    }

    /// The controls that moved since the last call.
    private func collect() -> [MIDIRecord] { realtime?.inbox.collect() ?? [] }

    /// The key being learned, and until when (`midi.learn`; milliseconds on the monotonic
    /// clock: `ContinuousClock` is _Concurrency's, which would link it and libdispatch into the
    /// module, BENCHMARKS.md "Footprint").
    private var learning: (key: String, until: Int64)?

    /// Starts learning a mapping to `key` (nil: stops).
    private func learn(_ key: String?) {
        learning = key.map { ($0, LevelPublisher.now() + Int64(MIDILearn.timeoutSeconds) * 1000) }
    }

    enum Learning { case notLearning, waiting, learned(MIDIMapping) }

    /// While learning: the mapping `records` make for the key (learning then stops), or
    /// `.waiting` when none suited it (the records then move nothing).
    private func learning(from records: [MIDIRecord]) -> Learning {
        guard let current = learning else { return .notLearning }
        guard LevelPublisher.now() < current.until else {
            learning = nil
            return .notLearning
        }
        guard let mapping = MIDILearn.mapping(from: records, for: current.key) else { return .waiting }
        learning = nil
        return .learned(mapping)
    }

    /// The mixer after `records` (nil: nothing changed). A change a key refuses is logged and
    /// skipped; the rest apply.
    private func apply(_ records: [MIDIRecord], to mixer: Mixer, node name: String, requests: inout [PropsCodec.Entry]) -> Mixer? {
        guard !records.isEmpty else { return nil }
        syncMappings(mixer)
        var next = mixer
        var changed = false
        for record in records {
            for change in mapper.changes(for: record, in: next) {
                if change.parameter.kind.family.access == .writeOnly, case let .names(words) = change.value {
                    requests.append(PropsCodec.Entry(key: change.parameter.key, value: .strings(words)))
                    continue
                }
                do {
                    try next.set(change.parameter, to: change.value)
                    changed = true
                } catch {
                    Log.debug("\(name): MIDI \(record.message) not applied to \(change.parameter.key): \(error)")
                }
            }
        }
        return changed ? next : nil
    }

    /// Puts the feedback of `mixer` (the keys whose controls are not where they are) into the
    /// outbox. Without MIDI ports there is nowhere to send it: every control is sent when they
    /// come back. When it does not fit, everything is sent again a little later, as long as the
    /// data thread takes from the outbox (a node nobody links does not run; its next link or
    /// change sends everything then).
    private func sendFeedback(for mixer: Mixer) {
        syncMappings(mixer)
        guard mixer.midi.ports, let realtime else {
            mapper.resendAll()
            return
        }
        let messages = mapper.feedback(for: mixer)
        guard !realtime.outbox.put(messages) else { return }
        mapper.resendAll()
        let taken = realtime.outbox.taken
        if taken != takenAtLastRetry {
            takenAtLastRetry = taken
            armRetry(50)
        }
    }

    /// The outbox's taken count when a retry was last armed: no progress since, no retry.
    private var takenAtLastRetry = -1

    /// Every mapped control is sent where its key is, at the next feedback (the ports were just
    /// switched on, or the mappings changed).
    func resendAll() { mapper.resendAll() }

    /// Every mapped control is sent where its key is, `resendDelay` ms from now: midi_out was
    /// just linked, and what is written before the link runs at both ends would be lost.
    func resendSoon() {
        mapper.resendAll()
        armRetry(Self.resendDelay)
    }

    static let resendDelay: UInt64 = 200

    private func armRetry(_ ms: UInt64) {
        if retryTimer == nil {
            let data = Unmanaged.passUnretained(self).toOpaque()
            retryTimer = cpshim_loop_add_timer(loop, { data, _ in
                Unmanaged<MIDIControlCenter>.fromOpaque(data!).takeUnretainedValue().arrived()
            }, data)
        }
        if let retryTimer { _ = cpshim_loop_arm_timer(loop, retryTimer, ms) }
    }

    /// A new mapper when the mappings changed (its pickup and 14-bit states start afresh).
    private func syncMappings(_ mixer: Mixer) {
        guard mapper.mappings != mixer.midi.mappings else { return }
        mapper = MIDIMapper(mixer.midi.mappings)
    }
}
