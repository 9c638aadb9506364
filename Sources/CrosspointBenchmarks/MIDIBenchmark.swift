// `crosspoint-bench --midi`: what MIDI control costs the data thread, beside the render of the
// same cycle, in the same run. Per event: the bytes of one control change through the
// MIDIParser (reset per event, as the node does) into the MIDIInbox (its atomic slot); per
// feedback message: copied out of the MIDIOutbox and consumed. From those, the cost a cycle of
// a controller sending 1,000 events a second, and of a flood of 128 events a cycle, at quantum
// 64 (750 cycles a second at 48 kHz), against an 8x8 render of 64 frames.
//
// Not measured here: PipeWire's own part (dequeuing the MIDI buffer and walking its sequence in
// the C shim: a few pointer checks an event) and the eventfd write that wakes the main loop
// (one system call in a cycle where anything arrived). bench-graph measures whole cycles.

import CrosspointCore
import CrosspointTestSupport

/// One control change a run: parsed and received, as `processMIDI` does each event.
struct MIDIReceive: Workload {
    let inbox: MIDIInbox
    var parser = MIDIParser()
    var value: UInt8 = 0

    @inline(__always)
    mutating func run() {
        value = (value &+ 1) & 0x7F
        parser.reset()
        if let message = parser.feed(0xB0) { inbox.receive(message) }
        if let message = parser.feed(value & 7) { inbox.receive(message) }
        if let message = parser.feed(value) { inbox.receive(message) }
    }
}

/// One feedback message a run: taken as the data thread takes a cycle's feedback. The ring is
/// refilled every 4096 runs by the main loop's `put` (of an array made once): its cost, about a
/// nanosecond a message, is in the figure.
struct MIDIFeedback: Workload {
    let outbox: MIDIOutbox
    let scratch: UnsafeMutablePointer<UInt32>
    let batch = Array(repeating: MIDIMessage.controlChange(channel: 0, controller: 7, value: 64), count: 4096)
    var left = 0

    @inline(__always)
    mutating func run() {
        if left == 0 {
            _ = outbox.put(batch)
            left = batch.count
        }
        let n = outbox.peek(into: scratch, capacity: 1)
        outbox.consume(n)
        left -= 1
    }
}

func runMIDI(quick: Bool, machine: MachineInfo) {
    let batches = quick ? 5 : 21
    let batchNanoseconds: UInt64 = quick ? 2_000_000 : 5_000_000
    print("crosspoint-bench --midi: what MIDI control costs the data thread, beside the render of the same cycle")
    print("date:    \(machine.date)")
    print("cpu:     \(machine.cpuModel), \(machine.onlineCores) cores online")
    print("build:   \(buildKind); \(quick ? "quick: " : "")median of \(batches) batches of ~\(batchNanoseconds / 1_000_000) ms each")
    print("")

    // The reference: an 8x8 dense render of 64 frames, steady.
    var rng = SplitMix64(seed: 0x4D49_4449)
    let n = 8, m = 8, frames = 64
    let shape = Shape(inputs: n, outputs: m, kind: .dense)
    let engine: MatrixMixer
    do {
        engine = MatrixMixer(try Mixer(inputs: n, outputs: m))
        let rows = shape.rows(using: &rng)
        try engine.update { mixer throws(CrosspointError) in
            try mixer.setRamp(milliseconds: 0)
            try mixer.setMatrix(rows: rows)
        }
    } catch {
        fail("8x8: \(error)")
    }
    let buffers = RenderBlocks(inputs: n, outputs: m, frames: frames, rng: &rng)
    let inbox = MIDIInbox.make(), outbox = MIDIOutbox.make()
    let scratch = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
    defer {
        inbox.free()
        outbox.free()
        scratch.deallocate()
    }
    var render = buffers.render(engine)
    var receive = MIDIReceive(inbox: inbox)
    var feedback = MIDIFeedback(outbox: outbox, scratch: scratch)
    warmUp(nanoseconds: quick ? 50_000_000 : 200_000_000)
    let nr = calibrate(&render, batchNanoseconds: batchNanoseconds)
    let ne = calibrate(&receive, batchNanoseconds: batchNanoseconds)
    let nf = calibrate(&feedback, batchNanoseconds: batchNanoseconds)
    var tr: [Double] = [], te: [Double] = [], tf: [Double] = []
    for k in 0..<batches {
        if k % 2 == 0 {
            tr.append(Double(timeBatch(&render, iterations: nr)) / Double(nr))
            te.append(Double(timeBatch(&receive, iterations: ne)) / Double(ne))
        } else {
            te.append(Double(timeBatch(&receive, iterations: ne)) / Double(ne))
            tr.append(Double(timeBatch(&render, iterations: nr)) / Double(nr))
        }
        tf.append(Double(timeBatch(&feedback, iterations: nf)) / Double(nf))
    }
    // Drain what was collected, so the inbox is exercised as the node uses it.
    _ = inbox.collect()
    let renderTime = median(tr), eventTime = median(te), feedbackTime = median(tf)
    let cyclesPerSecond = 48_000.0 / Double(frames)
    let perCycle1000 = 1000 / cyclesPerSecond * eventTime
    let flood = 128 * eventTime
    let perSecond = 1000 * eventTime  // ns of CPU a second at 1,000 events a second
    let share = perSecond / 1e9 * 100
    print("| what | time | beside the 8x8 render of the same cycle |")
    print("|---|---:|---:|")
    print("| 8x8 dense render, 64 frames (the reference) | \(formatTime(renderTime)) | 1x |")
    print("| one control change: parser + inbox | \(formatTime(eventTime)) | \(format("%.2f", eventTime / renderTime))x |")
    print("| one feedback message: outbox to the cycle's buffer (copy out, consume) | \(formatTime(feedbackTime)) | \(format("%.2f", feedbackTime / renderTime))x |")
    print("| 1,000 events a second at quantum 64 (\(format("%.2f", 1000 / cyclesPerSecond)) a cycle) | \(formatTime(perCycle1000)) a cycle | \(format("%.2f", perCycle1000 / renderTime))x |")
    print("| a flood: 128 events in one cycle | \(formatTime(flood)) | \(format("%.1f", flood / renderTime))x |")
    print("")
    print("1,000 events a second cost the data thread \(formatTime(perSecond)) of CPU a second: \(format("%.4f", share)) % of one core.")
    print("target: a controller sending 1,000 events a second costs the data thread little (under 0.01 % of a core): "
        + (share < 0.01 ? "met" : "missed") + " (\(format("%.4f", share)) %)")
}
