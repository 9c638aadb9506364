// `crosspoint-bench --scenes`: what a scene moving by itself costs (issue 31), beside a steady
// render of the same mix in the same run. A recall over seconds (SceneMotion, in the node) sets
// every moving key every 20 ms on the main loop (`SceneMorph.apply`, then a new plan) and the
// renderer glides from each setting to the next. Per shape, two dense scenes (every cross-point
// and gain different):
//
// - steady: the render of one scene;
// - moving: the render while every cross-point of every output glides (the data thread's
//   whole cost of a move; a new glide is taken before each batch, as long as the batch);
// - a step: the main loop's work each 20 ms (the morph's values for a new point of the way,
//   then the plan made and handed over; nothing renders it).
//
// Batches interleaved, so all three see the same machine.

import CrosspointCore
import Glibc
import CrosspointTestSupport

/// One step of a scene on its way, as SceneMotion takes it: the keys set to a new point of the
/// way, then the plan made and published (the renderer here never takes it).
private struct SceneStep: Workload {
    let engine: MatrixMixer
    let morph: SceneMorph
    var t = 0.0

    mutating func run() {
        t = t >= 0.99 ? 0.01 : t + 0.01
        var next = engine.mixer
        do { try morph.apply(at: t, to: &next) } catch { fail("a step: \(error)") }
        engine.replace(with: next)
    }
}

/// A step, then a block rendered (taking the step's plan, its glide starting): a new glide
/// every block, as in a graph whose quantum is about the step (20 ms: 1024 frames at 48 kHz).
private struct SceneStepRender: Workload {
    var step: SceneStep
    var render: CrosspointRender
    /// The blocks' own time, apart from the steps' (nanoseconds, and how many blocks).
    var rendering: UInt64 = 0, blocks: UInt64 = 0

    mutating func run() {
        step.run()
        let start = monotonicNanoseconds()
        render.run()
        rendering &+= monotonicNanoseconds() &- start
        blocks &+= 1
    }
}


func runScenes(quick: Bool, machine: MachineInfo) {
    let batches = quick ? 7 : 31
    let blocks = 150
    print("crosspoint-bench --scenes: a scene moving, beside the steady render of the same mix")
    print("date:    \(machine.date)")
    print("cpu:     \(machine.cpuModel), \(machine.onlineCores) cores online")
    print("build:   \(buildKind); \(quick ? "quick: " : "")median of \(batches) batches of \(blocks) blocks (steps: of \(blocks / 10))")
    print("")
    print("| shape | frames | steady | moving | moving / steady | ns a moving cross-point (render) | a step (main loop) | ns a cross-point a step | a new glide every block |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (n, m, frames) in [(8, 8, 256), (64, 64, 256), (64, 64, 1024)] {
        var rng = SplitMix64(seed: 0x5CE0_0000 &+ UInt64(n * 1000 + frames))
        let shape = Shape(inputs: n, outputs: m, kind: .dense)
        let rowsA = shape.rows(using: &rng), rowsB = shape.rows(using: &rng)
        func mixer(_ rows: [[Double]], gain: Double) -> Mixer {
            do {
                var mixer = try Mixer(inputs: n, outputs: m)
                try mixer.setMatrix(rows: rows)
                for i in 0..<n { try mixer.setInputGain(i, gain) }
                return mixer
            } catch {
                fail("\(n)x\(m): \(error)")
            }
        }
        let a = mixer(rowsA, gain: 0.5), b = mixer(rowsB, gain: 0.25)
        let sceneA = Scene(name: "a", of: a), sceneB = Scene(name: "b", of: b)
        let morph = SceneMorph(from: sceneA, to: sceneB, on: a)
        let steady = MatrixMixer(a), moving = MatrixMixer(a)
        do { try moving.update { m throws(CrosspointError) in try m.setRamp(milliseconds: 1000) } } catch { fail("\(error)") }
        let buffers = RenderBlocks(inputs: n, outputs: m, frames: frames, rng: &rng)
        var s = buffers.render(steady), v = buffers.render(moving)
        var step = SceneStep(engine: MatrixMixer(a), morph: morph)
        for _ in 0..<50 { s.run(); v.run() }
        // Before each batch the moving mix takes a new point of the way, and glides there over
        // 1 s: longer than a batch at these sizes, so every block of it renders a glide.
        let (ts, tstep, tv, _, rv) = timeInterleaved(&s, &step, &v, batches: batches, blocks: blocks) { k, render in
            var next = moving.mixer
            do { try morph.apply(at: k % 2 == 0 ? 0.7 : 0.3, to: &next) } catch { fail("\(error)") }
            moving.replace(with: next)
            render.run()  // taken
        }
        func ns(_ v: Double) -> String { v >= 10_000 ? "\(Int((v / 1000).rounded())) µs" : "\(Int(v.rounded())) ns" }
        func ratio(_ v: Double) -> String { "\(Double(Int((v * 100).rounded())) / 100)x" }
        let points = Double(n * m)
        let perPoint = (median(tv) - median(ts)) / points
        // A new glide every block: a step and a block, less a step alone, is the block with its take-over.
        let every = MatrixMixer(a)
        do { try every.update { m throws(CrosspointError) in try m.setRamp(milliseconds: 40) } } catch { fail("\(error)") }
        var both = SceneStepRender(step: SceneStep(engine: every, morph: morph), render: buffers.render(every))
        var stepOnly = SceneStep(engine: MatrixMixer(a), morph: morph)
        var s2 = buffers.render(steady)
        _ = timeInterleaved(&s2, &stepOnly, &both, batches: batches, blocks: blocks / 10)
        let everyBlock = Double(both.rendering) / Double(max(both.blocks, 1))
        print("| \(n)x\(m) dense | \(frames) | \(ns(median(ts))) | \(ns(median(tv))) | \(ratio(median(rv))) | \(Double(Int((perPoint * 100).rounded())) / 100) ns | \(ns(median(tstep))) | \(Int((median(tstep) / points).rounded())) ns | \(ns(everyBlock)) (\(ratio(everyBlock / median(ts)))) |")
    }
    print("")
    print("moving: every output in a glide (per sample, each cross-point's gain a step on from the last);")
    print("a step: SceneMorph.apply (every cross-point and gain to a point of its curve) and the plan made.")
    print("A move of T seconds takes T / 0.02 steps on the main loop; the data thread renders glides all along.")
}
