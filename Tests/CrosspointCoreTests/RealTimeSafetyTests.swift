// The render path never allocates or frees: every `render` call runs inside an allocation
// counting window (CAllocationCounter interposes malloc and free), while plans are
// published from this thread between renders, outside the window.

import CAllocationCounter
import CrosspointCore
import CrosspointTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Allocates an array, keeps it alive past the caller's window.
@inline(never)
func makeArray(_ count: Int) -> [Int] {
    [Int](repeating: count, count: count)
}

/// Allocates an array and lets it go: one malloc and one free.
@inline(never)
func allocateAndRelease(_ count: Int) -> Int {
    var array = [Int](repeating: 1, count: count)
    array.append(count)
    return array.reduce(0, +)
}

/// Renders `renderer` once inside a counting window; returns (allocations, frees).
@inline(__always)
func countedRender(
    _ renderer: inout MatrixRenderer, frames: Int,
    _ inputs: UnsafeBufferPointer<UnsafePointer<Float>?>, _ outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>
) -> (Int, Int) {
    crosspoint_alloc_counting_begin()
    renderer.render(frameCount: frames, inputs: inputs, outputs: outputs)
    let allocations = crosspoint_alloc_counting_end()
    return (allocations, crosspoint_alloc_counting_frees())
}

/// Runs every render path once, outside any counting window: steady columns of one to five
/// sources (copy, mix1, mix2, mix2 + mix1, mix4), silent columns, ramps, SIMD bodies and
/// scalar tails, a shape change, outputs past the mixer's count.
///
/// The first use of a generic type in a process makes the Swift runtime build its metadata,
/// and that allocates, once. In a debug build the kernels ask for `SIMD8<Float>`'s metadata
/// (`loadUnaligned(as:)` in Kernel.swift), so the very first ramp rendered in the process
/// allocates; every later one does not. These tests are about the steady state, so they
/// warm up first.
func warmUpRenderPaths() throws {
    var model = try Mixer(inputs: 6, outputs: 6)
    try model.setMatrix(rows: (0..<6).map { i in (0..<6).map { j in i <= j ? 0.5 : 0 } })
    let mixer = MatrixMixer(model)
    var renderer = mixer.renderer
    let bench = Bench(inputs: 6, outputs: 7, capacity: 64)
    var rng = SplitMix64(seed: 1)
    bench.fillInputs(&rng, frames: 64)
    for round in 0..<4 {
        bench.render(&renderer, frames: 37)
        bench.connectInput(round, false)
        try mixer.update { m throws(CrosspointError) in
            try m.setCrosspoint(input: 5 - round, output: round, gain: 1)
            try m.setRamp(milliseconds: round == 3 ? 0 : 1)
            try m.setOutputDelay(round, milliseconds: round == 2 ? 0 : 0.5)
        }
        bench.render(&renderer, frames: 29)
        bench.render(&renderer, frames: 64)
    }
    mixer.replace(with: try Mixer(inputs: 3, outputs: 2))
    bench.render(&renderer, frames: 64)
}

/// One random change, as a control thread would make it.
func randomChange(_ mixer: inout Mixer, _ rng: inout SplitMix64) throws(CrosspointError) {
    let n = mixer.inputs, m = mixer.outputs
    switch rng.index(20) {
    case 0..<8:
        try mixer.setCrosspoint(input: rng.index(n), output: rng.index(m), gain: rng.chance(0.4) ? 0 : rng.gain())
    case 8, 9: try mixer.setInputGain(rng.index(n), rng.gain())
    case 10, 11: try mixer.setOutputGain(rng.index(m), rng.gain())
    case 12: try mixer.setInputMute(rng.index(n), rng.chance(0.5))
    case 13: try mixer.setOutputMute(rng.index(m), rng.chance(0.5))
    case 14: try mixer.setMasterGain(rng.double(in: -2...2))
    case 15: mixer.setMasterMute(rng.chance(0.2))
    case 16: try mixer.apply(ChannelMap((0..<m).map { _ in rng.index(n + 1) - 1 }))
    case 17: try mixer.setRamp(milliseconds: [0, 1, 10, 10, 10, 30][rng.index(6)])
    default:
        // Several at once.
        for _ in 0..<4 {
            try mixer.setCrosspoint(input: rng.index(n), output: rng.index(m), gain: rng.double(in: -1...1))
        }
    }
}

/// A render thread of its own: renders blocks of 64 frames, each inside a counting window,
/// until told to stop.
final class RenderThread: @unchecked Sendable {
    var renderer: MatrixRenderer
    let bench: Bench
    let stop = Atomic<Bool>(false)
    let blocks = Atomic<Int>(0)
    /// Written by the render thread only; read after it is joined.
    var allocations = 0
    var frees = 0
    private var thread = pthread_t()

    init(_ renderer: MatrixRenderer, bench: Bench) {
        self.renderer = renderer
        self.bench = bench
    }

    func start() -> Bool {
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<RenderThread>.fromOpaque(raw!).takeRetainedValue()
            me.loop()
            return nil
        }, context)
        return started == 0
    }

    func join() { pthread_join(thread, nil) }

    private func loop() {
        let ins = UnsafeBufferPointer(bench.inputPointers), outs = UnsafeBufferPointer(bench.outputPointers)
        while !stop.load(ordering: .acquiring) {
            crosspoint_alloc_counting_begin()
            renderer.render(frameCount: 64, inputs: ins, outputs: outs)
            allocations += crosspoint_alloc_counting_end()
            frees += crosspoint_alloc_counting_frees()
            blocks.add(1, ordering: .releasing)
        }
    }
}

@Suite("Real-time safety")
struct RealTimeSafetyTests {
    @Test("The counter works: a Swift array allocated in the window is counted, and its release")
    func counterCountsSwiftAllocations() {
        #expect(crosspoint_alloc_counter_is_active() == 1, "malloc is interposed")
        crosspoint_alloc_counting_begin()
        let array = makeArray(1000)
        let allocations = crosspoint_alloc_counting_end()
        #expect(allocations > 0)
        #expect(array.count == 1000)

        crosspoint_alloc_counting_begin()
        let sum = allocateAndRelease(100)
        let more = crosspoint_alloc_counting_end()
        #expect(more > 0)
        #expect(crosspoint_alloc_counting_frees() > 0)
        #expect(sum == 200)
    }

    @Test("The counter counts nothing outside its window, nor in an empty one")
    func counterCountsOnlyInsideTheWindow() {
        crosspoint_alloc_counting_begin()
        let empty = crosspoint_alloc_counting_end()
        #expect(empty == 0)
        #expect(crosspoint_alloc_counting_frees() == 0)
        let outside = makeArray(500)  // not counted: the window is closed
        crosspoint_alloc_counting_begin()
        let after = crosspoint_alloc_counting_end()
        #expect(after == 0)
        #expect(outside.count == 500)
    }

    @Test(
        "Rendering allocates and frees nothing, with plans published between renders and ramps in flight",
        arguments: [(8, 8, 10_000), (64, 64, 10_000), (1, 1, 10_000), (2, 1, 10_000), (256, 256, 150)])
    func renderingAllocatesNothing(inputs: Int, outputs: Int, blocks: Int) throws {
        try warmUpRenderPaths()
        var rng = SplitMix64(seed: UInt64(inputs * 7919 + outputs))
        let maxFrames = inputs * outputs > 10_000 ? 16 : 64
        var model = try Mixer(inputs: inputs, outputs: outputs)
        if inputs * outputs > 10_000 {
            // Start the big one dense, so its first renders do real work.
            model = try randomMixer(inputs, outputs, &rng, density: 0.1, ramp: 10)
        }
        let mixer = MatrixMixer(model)
        var renderer = mixer.renderer
        let bench = Bench(inputs: inputs, outputs: outputs, capacity: maximumFrameCount)
        bench.fillInputs(&rng, frames: maximumFrameCount)
        let ins = UnsafeBufferPointer(bench.inputPointers)
        let outs = UnsafeBufferPointer(bench.outputPointers)

        var allocations = 0, frees = 0
        var published = 0, publishedMidRamp = 0
        var framesSincePublish = 1 << 40
        for block in 0..<blocks {
            // Control side, outside the window.
            if block % 8 == 3 || rng.chance(0.02) {
                var next = mixer.mixer
                for _ in 0..<(1 + rng.index(3)) { try randomChange(&next, &rng) }
                if rng.chance(0.05) && inputs * outputs > 64 {
                    // Back to a sparse routing now and then, to keep the big ones quick.
                    try next.apply(ChannelMap((0..<outputs).map { $0 % inputs }))
                }
                if rng.chance(0.5) {
                    let change = next
                    try mixer.update { $0 = change }
                } else {
                    mixer.replace(with: next)
                }
                let rampFrames = Int((next.rampMilliseconds / 1000 * renderer.sampleRate).rounded())
                if framesSincePublish < rampFrames { publishedMidRamp += 1 }
                framesSincePublish = 0
                published += 1
            }
            if rng.chance(0.1) { bench.connectInput(rng.index(inputs), rng.chance(0.7)) }
            if rng.chance(0.1) { bench.connectOutput(rng.index(outputs), rng.chance(0.7)) }
            if rng.chance(0.005) { renderer.sampleRate = [44100, 48000, 96000][rng.index(3)] }
            let frames = rng.chance(0.01) ? maximumFrameCount / (inputs * outputs > 64 ? 64 : 1) : 1 + rng.index(maxFrames)

            let (a, f) = countedRender(&renderer, frames: frames, ins, outs)
            allocations += a
            frees += f
            framesSincePublish += frames
        }
        #expect(allocations == 0, "\(allocations) allocations in \(blocks) renders")
        #expect(frees == 0, "\(frees) frees in \(blocks) renders")
        #expect(published >= blocks / 10)
        #expect(publishedMidRamp >= published / 4, "changes must arrive while ramps are in flight")

        // It really mixed: once the ramps settle, it plays the model's reference.
        for i in 0..<inputs { bench.connectInput(i, true) }
        for j in 0..<outputs { bench.connectOutput(j, true) }
        for _ in 0..<6 { renderer.render(frameCount: 512, inputs: ins, outputs: outs) }
        bench.fillInputs(&rng, frames: 32)
        bench.poisonOutputs()
        let (a, f) = countedRender(&renderer, frames: 32, ins, outs)
        #expect(a == 0 && f == 0)
        let (error, checked) = referenceError(
            bench, ReferenceMixer(mixer.mixer), frames: 32, inputsHanded: inputs, outputsHanded: outputs)
        #expect(checked == outputs)
        #expect(error <= 1e-6)
    }

    @Test("A render thread running beside a publishing control thread allocates nothing and ends on the latest model")
    func concurrentRenderThread() throws {
        try warmUpRenderPaths()
        var rng = SplitMix64(seed: 0x7EAD)
        let mixer = MatrixMixer(try Mixer(inputs: 8, outputs: 8))
        let bench = Bench(inputs: 8, outputs: 8, capacity: 64)
        bench.fillInputs(&rng, frames: 64)
        let render = RenderThread(mixer.renderer, bench: bench)
        guard render.start() else {
            Issue.record("pthread_create failed")
            return
        }
        // Publish as fast as the control side can: many plans are replaced before the
        // renderer sees them, others land mid-ramp.
        for _ in 0..<3000 {
            var next = mixer.mixer
            try randomChange(&next, &rng)
            mixer.replace(with: next)
        }
        let published = render.blocks.load(ordering: .acquiring)
        // Let the renderer take the last plan and finish its ramps (30 ms at most: 1440 frames).
        while render.blocks.load(ordering: .acquiring) < published + 100 { sched_yield() }
        render.stop.store(true, ordering: .releasing)
        render.join()
        mixer.collectRetired()
        #expect(render.allocations == 0)
        #expect(render.frees == 0)
        #expect(render.blocks.load(ordering: .acquiring) >= 100)

        // The render thread is gone; render here once more and compare.
        var renderer = mixer.renderer
        bench.poisonOutputs()
        bench.render(&renderer, frames: 64)
        let (error, checked) = referenceError(
            bench, ReferenceMixer(mixer.mixer), frames: 64, inputsHanded: 8, outputsHanded: 8)
        #expect(checked == 8)
        #expect(error <= 1e-6)
    }

    @Test("A shape change handed to the renderer allocates nothing on the render side")
    func shapeChangeAllocatesNothing() throws {
        try warmUpRenderPaths()
        var rng = SplitMix64(seed: 77)
        let mixer = MatrixMixer(try makeMixer(4, 4))
        var renderer = mixer.renderer
        let bench = Bench(inputs: 16, outputs: 16, capacity: 256)
        bench.fillInputs(&rng, frames: 256)
        var allocations = 0, frees = 0
        for round in 0..<200 {
            if round % 4 == 0 {
                mixer.replace(with: try randomMixer(1 + rng.index(16), 1 + rng.index(16), &rng, density: 0.5, ramp: 10))
            }
            let (a, f) = countedRender(
                &renderer, frames: 1 + rng.index(256), UnsafeBufferPointer(bench.inputPointers),
                UnsafeBufferPointer(bench.outputPointers))
            allocations += a
            frees += f
        }
        #expect(allocations == 0)
        #expect(frees == 0)
        #expect(renderer.inputCount == mixer.mixer.inputs)
    }
}

// MARK: - Metering

/// A render thread that also measures levels each block, as the node's data thread does while
/// someone watches; every render and measure inside a counting window.
final class MeteringRenderThread: @unchecked Sendable {
    var renderer: MatrixRenderer
    let tap: LevelTap
    let bench: Bench
    let stop = Atomic<Bool>(false)
    let blocks = Atomic<Int>(0)
    var allocations = 0
    var frees = 0
    private var thread = pthread_t()

    init(_ renderer: MatrixRenderer, tap: LevelTap, bench: Bench) {
        self.renderer = renderer
        self.tap = tap
        self.bench = bench
    }

    func start() -> Bool {
        let context = Unmanaged.passRetained(self).toOpaque()
        return pthread_create(&thread, nil, { raw in
            Unmanaged<MeteringRenderThread>.fromOpaque(raw!).takeRetainedValue().loop()
            return nil
        }, context) == 0
    }

    func join() { pthread_join(thread, nil) }

    private func loop() {
        let ins = UnsafeBufferPointer(bench.inputPointers), outs = UnsafeBufferPointer(bench.outputPointers)
        while !stop.load(ordering: .acquiring) {
            crosspoint_alloc_counting_begin()
            renderer.render(frameCount: 64, inputs: ins, outputs: outs)
            if tap.isWatched { tap.measure(frames: 64, inputs: ins, outputs: outs) }
            allocations += crosspoint_alloc_counting_end()
            frees += crosspoint_alloc_counting_frees()
            blocks.add(1, ordering: .releasing)
        }
    }
}

@Suite("Real-time safety of metering")
struct MeteringRealTimeSafetyTests {
    @Test("Measuring levels allocates and frees nothing, with readings taken, plans published and ports unlinked between blocks",
          arguments: [(8, 8, 5000), (64, 64, 5000), (256, 256, 100)])
    func meteringAllocatesNothing(inputs: Int, outputs: Int, blocks: Int) throws {
        try warmUpRenderPaths()
        var rng = SplitMix64(seed: UInt64(inputs * 31 + outputs))
        let mixer = MatrixMixer(try randomMixer(inputs, outputs, &rng, density: inputs > 64 ? 0.05 : 0.5, ramp: 5))
        var renderer = mixer.renderer
        let meter = LevelMeter()
        let tap = meter.tap
        let bench = Bench(inputs: inputs, outputs: outputs, capacity: maximumFrameCount)
        bench.fillInputs(&rng, frames: maximumFrameCount)
        let ins = UnsafeBufferPointer(bench.inputPointers), outs = UnsafeBufferPointer(bench.outputPointers)
        // Warm the measuring path (its SIMD metadata), outside any window.
        meter.start()
        tap.measure(frames: 37, inputs: ins, outputs: outs)
        meter.collect()

        var allocations = 0, frees = 0, readings = 0, measured = 0
        for block in 0..<blocks {
            // Control side, outside the window: readings, stops and starts, changes, links.
            if block % 6 == 5, meter.collect() {
                _ = meter.reading(inputs: inputs, outputs: outputs, sequence: readings, interval: 33)
                readings += 1
            }
            if block % 50 == 40 { meter.stop() } else if block % 50 == 45 { meter.start() }
            if rng.chance(0.05) {
                var next = mixer.mixer
                try randomChange(&next, &rng)
                mixer.replace(with: next)
            }
            if rng.chance(0.1) { bench.connectInput(rng.index(inputs), rng.chance(0.7)) }
            if rng.chance(0.1) { bench.connectOutput(rng.index(outputs), rng.chance(0.7)) }
            let frames = 1 + rng.index(inputs * outputs > 10_000 ? 64 : 512)

            crosspoint_alloc_counting_begin()
            renderer.render(frameCount: frames, inputs: ins, outputs: outs)
            if tap.isWatched {
                tap.measure(frames: frames, inputs: ins, outputs: outs)
                measured += 1
            }
            allocations += crosspoint_alloc_counting_end()
            frees += crosspoint_alloc_counting_frees()
        }
        #expect(allocations == 0, "\(allocations) allocations in \(blocks) blocks")
        #expect(frees == 0, "\(frees) frees in \(blocks) blocks")
        #expect(measured >= blocks / 3, "metering was on for a good part of the run")
        #expect(readings >= blocks / 30, "readings were taken")
    }

    @Test("A metering render thread beside a control thread taking readings allocates nothing, and every reading is whole")
    func concurrentMetering() throws {
        try warmUpRenderPaths()
        var rng = SplitMix64(seed: 0x1E7E1)
        let mixer = MatrixMixer(try Mixer(inputs: 4, outputs: 4))
        let bench = Bench(inputs: 4, outputs: 4, capacity: 64)
        // Constant levels: inputs at 0.5 (-6.0 dBFS), the identity matrix passes them.
        for i in 0..<4 { bench.fillInput(i, with: 0.5) }
        let meter = LevelMeter()
        meter.start()
        let render = MeteringRenderThread(mixer.renderer, tap: meter.tap, bench: bench)
        guard render.start() else {
            Issue.record("pthread_create failed")
            return
        }
        var readings: [LevelReading] = []
        while readings.count < 300 {
            if meter.collect() {
                readings.append(meter.reading(inputs: 4, outputs: 4, sequence: readings.count, interval: 33))
            } else {
                sched_yield()
            }
            if rng.chance(0.001) { meter.stop(); meter.start() }
        }
        render.stop.store(true, ordering: .releasing)
        render.join()
        #expect(render.allocations == 0)
        #expect(render.frees == 0)
        for reading in readings {
            #expect(reading.frames % 64 == 0, "a reading holds whole blocks")
            guard reading.frames > 0 else { continue }
            #expect(reading.inputs.allSatisfy { $0 == Level(peak: -6.0, rms: -6.0) }, "\(reading)")
            #expect(reading.outputs.allSatisfy { $0 == Level(peak: -6.0, rms: -6.0) }, "\(reading)")
        }
    }
}
