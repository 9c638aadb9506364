// `crosspoint-bench --delays`: what output delays cost the data thread, beside the same render
// without them, in the same run. Per shape (dense matrices, 256 frames a block): the render with
// no delay; with every output delayed 10 ms (steady: the block recorded into each output's ring
// and read back); and with every output cross-fading from one delay to another (the worst
// case, which lasts ramp.ms after a change). Batches of 150 blocks (38,400 frames, less than
// the 1 s fade each fading batch starts with), interleaved, so the three see the same machine.

import CrosspointCore
import CrosspointTestSupport

func runDelays(quick: Bool, machine: MachineInfo) {
    let batches = quick ? 7 : 31
    let frames = 256, blocks = 150
    print("crosspoint-bench --delays: output delays beside the same render without them")
    print("date:    \(machine.date)")
    print("cpu:     \(machine.cpuModel), \(machine.onlineCores) cores online")
    print("build:   \(buildKind); \(quick ? "quick: " : "")median of \(batches) batches of \(blocks) blocks of \(frames) frames")
    print("")
    print("| shape | no delay | every output delayed 10 ms | every output cross-fading | delayed / none | fading / none |")
    print("|---|---:|---:|---:|---:|---:|")
    for (n, m) in [(2, 2), (8, 8), (64, 64)] {
        var rng = SplitMix64(seed: 0xDE1A_7000 &+ UInt64(n))
        let rows = Shape(inputs: n, outputs: m, kind: .dense).rows(using: &rng)
        func engine(delay: Double) -> MatrixMixer {
            do {
                let engine = MatrixMixer(try Mixer(inputs: n, outputs: m))
                try engine.update { mixer throws(CrosspointError) in
                    try mixer.setRamp(milliseconds: 1000)
                    try mixer.setMatrix(rows: rows)
                    for j in 0..<m { try mixer.setOutputDelay(j, milliseconds: delay) }
                }
                return engine
            } catch {
                fail("\(n)x\(m): \(error)")
            }
        }
        let plain = engine(delay: 0), delayed = engine(delay: 10), fading = engine(delay: 10)
        let buffers = RenderBlocks(inputs: n, outputs: m, frames: frames, rng: &rng)
        var a = buffers.render(plain), b = buffers.render(delayed), c = buffers.render(fading)
        // Past the gain ramps of the setup, and every ring full.
        for _ in 0..<400 { a.run(); b.run(); c.run() }
        let (ta, tb, tc, rb, rc) = timeInterleaved(&a, &b, &c, batches: batches, blocks: blocks) { k, c in
            // A new delay for every output of `fading`: its next 48,000 frames cross-fade.
            do {
                try fading.update { mixer throws(CrosspointError) in
                    for j in 0..<m { try mixer.setOutputDelay(j, milliseconds: k % 2 == 0 ? 20 : 10) }
                }
            } catch { fail("\(error)") }
            c.run()
        }
        func ns(_ v: Double) -> String { v >= 10_000 ? "\(Int((v / 1000).rounded())) µs" : "\(Int(v.rounded())) ns" }
        func ratio(_ v: Double) -> String { "\(Double(Int((v * 100).rounded())) / 100)x" }
        print("| \(n)x\(m) dense, \(frames) frames | \(ns(median(ta))) | \(ns(median(tb))) | \(ns(median(tc))) | \(ratio(median(rb))) | \(ratio(median(rc))) |")
    }
    print("")
    print("Ratios are medians of batches timed one after the other. A delayed output's ring is 1 s plus")
    print("the largest block (65,536 floats, 256 KiB, at 48 kHz).")
}
