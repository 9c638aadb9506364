// `crosspoint-bench --ducking`: what ducking rules cost the data thread, beside the same render
// without them, in the same run (issue 31). Per shape (dense matrices): the render with no rule;
// with one rule whose trigger is input 0, lowering half of the other inputs; with four rules
// (inputs 0 to 3 as triggers, each lowering a quarter of the inputs, and one of them an output
// too). The trigger is a full-scale signal, so each rule is at its depth and every lowered
// channel is scaled each block. Batches interleaved, so all three see the same machine.

import CrosspointCore
import CrosspointTestSupport

func runDucking(quick: Bool, machine: MachineInfo) {
    let batches = quick ? 7 : 31
    let blocks = 150
    print("crosspoint-bench --ducking: ducking rules beside the same render without them")
    print("date:    \(machine.date)")
    print("cpu:     \(machine.cpuModel), \(machine.onlineCores) cores online")
    print("build:   \(buildKind); \(quick ? "quick: " : "")median of \(batches) batches of \(blocks) blocks")
    print("")
    print("| shape | frames | no rule | 1 rule | 4 rules | ns a rule (of 4) | 1 rule / none | 4 rules / none |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for (n, m, frames) in [(8, 8, 64), (8, 8, 256), (64, 64, 64), (64, 64, 256)] {
        var rng = SplitMix64(seed: 0xD0C4_0000 &+ UInt64(n * 1000 + frames))
        let rows = Shape(inputs: n, outputs: m, kind: .dense).rows(using: &rng)
        func engine(rules: Int) -> MatrixMixer {
            do {
                let engine = MatrixMixer(try Mixer(inputs: n, outputs: m))
                try engine.update { mixer throws(CrosspointError) in
                    try mixer.setMatrix(rows: rows)
                    var texts: [String] = []
                    for r in 0..<rules {
                        // Rule r: trigger input r, lowering inputs 4 + r, 8 + r, ... (a 1-rule set: every other input from 1).
                        let lowered = rules == 1 ? Array(stride(from: 1, to: n, by: 2)) : Array(stride(from: 4 + r, to: n, by: 4))
                        let outputs = r == 0 && rules > 1 ? ",out:0" : ""
                        texts.append("\(r) lowers=" + lowered.map(String.init).joined(separator: ",") + outputs + " depth=-15 attack=0")
                    }
                    try mixer.setDucking(texts)
                }
                return engine
            } catch {
                fail("\(n)x\(m): \(error)")
            }
        }
        let plain = engine(rules: 0), one = engine(rules: 1), four = engine(rules: 4)
        let buffers = RenderBlocks(inputs: n, outputs: m, frames: frames, rng: &rng)
        var a = buffers.render(plain), b = buffers.render(one), c = buffers.render(four)
        for _ in 0..<400 { a.run(); b.run(); c.run() }  // past the setup's gain ramps; every rule at its depth
        let (ta, tb, tc, rb, rc) = timeInterleaved(&a, &b, &c, batches: batches, blocks: blocks)
        func ns(_ v: Double) -> String { v >= 10_000 ? "\(Int((v / 1000).rounded())) µs" : "\(Int(v.rounded())) ns" }
        func ratio(_ v: Double) -> String { "\(Double(Int((v * 100).rounded())) / 100)x" }
        let perRule = (median(tc) - median(ta)) / 4
        print("| \(n)x\(m) dense | \(frames) | \(ns(median(ta))) | \(ns(median(tb))) | \(ns(median(tc))) | \(ns(perRule)) | \(ratio(median(rb))) | \(ratio(median(rc))) |")
    }
    print("")
    print("A rule's cost is measuring its trigger (a pass over the block) and scaling what it lowers")
    print("(a lowered input is copied scaled into scratch the matrix reads; an output scaled in place).")
}
