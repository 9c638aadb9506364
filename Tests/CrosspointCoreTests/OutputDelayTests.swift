// Output delays: the model's key, exact delays on the render path, changes that cross-fade
// instead of clicking, lines made and freed on the control side, and no allocation on the
// render path while delays change.

import CAllocationCounter
import CrosspointCore
import CrosspointTestSupport
import Foundation
import Testing

/// Plays `signal` into input 0 of `mixer` in blocks of the given sizes (cycled), calling
/// `between` before each block with the frame it starts at; returns every output's samples.
/// With `counting`, each render runs in an allocation-counting window, and the allocations and
/// frees are added to `counted`.
func play(
    _ mixer: MatrixMixer, _ signal: [Float], blocks: [Int], rate: Double = 48000, listening: [Bool]? = nil,
    counted: UnsafeMutablePointer<(Int, Int)>? = nil, between: (Int) throws -> Void = { _ in }
) rethrows -> [[Float]] {
    var renderer = mixer.renderer
    renderer.sampleRate = rate
    let m = mixer.mixer.outputs, n = mixer.mixer.inputs
    var outputs = [[Float]](repeating: [], count: m)
    let input = UnsafeMutablePointer<Float>.allocate(capacity: maximumFrameCount)
    let buffers = (0..<m).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: maximumFrameCount) }
    defer { input.deallocate(); buffers.forEach { $0.deallocate() } }
    var at = 0, k = 0
    while at < signal.count {
        let frames = min(blocks[k % blocks.count], signal.count - at)
        k += 1
        try between(at)
        for f in 0..<frames { input[f] = signal[at + f] }
        let ins: [UnsafePointer<Float>?] = [UnsafePointer(input)] + Array(repeating: nil, count: n - 1)
        let outs: [UnsafeMutablePointer<Float>?] = (0..<m).map { listening?[$0] == false ? nil : buffers[$0] }
        ins.withUnsafeBufferPointer { i in
            outs.withUnsafeBufferPointer { o in
                if let counted { crosspoint_alloc_counting_begin() }
                renderer.render(frameCount: frames, inputs: i, outputs: o)
                if let counted {
                    counted.pointee.0 += crosspoint_alloc_counting_end()
                    counted.pointee.1 += crosspoint_alloc_counting_frees()
                }
            }
        }
        for j in 0..<m { outputs[j] += UnsafeBufferPointer(start: buffers[j], count: frames) }
        at += frames
    }
    return outputs
}

/// A sine of `hertz` at 48 kHz, amplitude 0.5.
private func sine(_ hertz: Double, frames: Int) -> [Float] {
    (0..<frames).map { Float(0.5 * sin(2 * Double.pi * hertz * Double($0) / 48000)) }
}

/// The largest difference between neighbouring samples: what a click is.
private func largestStep(_ x: ArraySlice<Float>) -> Float {
    zip(x.dropFirst(), x).map { abs($0 - $1) }.max() ?? 0
}

@Suite("Output delays")
struct OutputDelayTests {
    @Test("delay.out is a key of the table: set in ms, read back, refused out of range or not finite, kept by presets")
    func theKey() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        let key = try Parameter(key: "delay.out.FR", in: mixer)
        #expect(key == .outputDelay(1))
        try mixer.set(key, to: .number(12.5))
        #expect(mixer.value(of: .outputDelay(1)) == .number(12.5))
        #expect(mixer.outputDelays == [0, 12.5])
        #expect(throws: CrosspointError.outOfRange(key: "delay.out.1", value: 1000.5, range: 0...1000)) {
            try mixer.set(key, to: .number(1000.5))
        }
        #expect(throws: CrosspointError.outOfRange(key: "delay.out.0", value: -1, range: 0...1000)) {
            try mixer.setOutputDelay(0, milliseconds: -1)
        }
        #expect(throws: CrosspointError.notFinite(key: "delay.out.0", value: .infinity)) {
            try mixer.setOutputDelay(0, milliseconds: .infinity)
        }
        #expect(mixer.outputDelays == [0, 12.5], "a refused value changes nothing")
        let preset = mixer.preset
        #expect(preset.numbers(.outputDelay) == [0, 12.5])
        let back = try Mixer(preset: Preset(json: preset.json))
        #expect(back.outputDelays == [0, 12.5])
        #expect(try Mixer(inputs: 2, outputs: 2).preset.values[.outputDelay] == nil, "a preset without delays does not write them")
        try mixer.resize(inputs: 2, outputs: 3)
        #expect(mixer.outputDelays == [0, 12.5, 0])
        try mixer.resize(inputs: 2, outputs: 1)
        #expect(mixer.outputDelays == [0])
        #expect(!mixer.hasDelays)
    }

    @Test("A delay is written in ms or samples; samples come back whole at the rate they were given at")
    func amounts() throws {
        #expect(try DelayAmount(parsing: "12", key: "d") == .milliseconds(12))
        #expect(try DelayAmount(parsing: " 12.5 ms", key: "d") == .milliseconds(12.5))
        #expect(try DelayAmount(parsing: "576 samples", key: "d") == .samples(576))
        #expect(try DelayAmount(parsing: "4801smp", key: "d") == .samples(4801))
        for bad in ["", "ms", "-3", "1e3", "12 s", "2.5 samples", "nan", "12ms ms"] {
            #expect(throws: CrosspointError.self, "\(bad)") { try DelayAmount(parsing: bad, key: "d") }
        }
        for rate in [44100.0, 48000, 96000] {
            for samples in [1, 441, 4801, Int(rate)] {
                let ms = try DelayAmount.samples(samples).milliseconds(atRate: rate, key: "d")
                #expect(DelayAmount.frames(milliseconds: ms, rate: rate) == samples)
                // What Props carries is a 32-bit float: still the same samples.
                #expect(DelayAmount.frames(milliseconds: Double(Float(ms)), rate: rate) == samples)
            }
        }
        #expect(throws: CrosspointError.self) { try DelayAmount.samples(48001).milliseconds(atRate: 48000, key: "d") }
    }

    @Test("A delayed output is its mix exactly that many samples late, from the first frame, whatever the block sizes",
          arguments: [1.0, 5.0, 20.8125, 1000.0])
    func exactDelay(milliseconds: Double) throws {
        var model = try Mixer(inputs: 1, outputs: 2)
        try model.setOutputGain(1, 0.5)
        try model.setOutputDelay(1, milliseconds: milliseconds)
        let mixer = MatrixMixer(model)
        var rng = SplitMix64(seed: 3)
        let frames = 48000 + 9000
        let signal = (0..<frames).map { _ in rng.sample() }
        let out = try play(mixer, signal, blocks: [256, 1024, 37, 8192, 64, 1])
        let d = DelayAmount.frames(milliseconds: milliseconds, rate: 48000)
        #expect(out[0] == signal, "the undelayed output is untouched")
        let expected = (0..<frames).map { $0 < d ? Float(0) : signal[$0 - d] * 0.5 }
        #expect(out[1] == expected, "output 1 is \(d) samples late, bit for bit")
    }

    @Test("Changing a delay cross-fades over ramp.ms: no step larger than the signal's own; a jump (ramp 0) clicks",
          arguments: [10.0, 0.0])
    func changeWithoutClick(ramp: Double) throws {
        var model = try Mixer(inputs: 1, outputs: 2)
        try model.setRamp(milliseconds: ramp)
        try model.setOutputDelay(1, milliseconds: 5)
        let mixer = MatrixMixer(model)
        // 1 kHz: a period of 48 samples; the change is half a period, the worst case for a jump.
        let signal = sine(1000, frames: 48000)
        let own = largestStep(signal[...])
        var changes: [(at: Int, ms: Double)] = [(12000, 5.5), (24000, 105.5), (24100, 0), (36000, 0.5)]
        let out = try play(mixer, signal, blocks: [512, 100]) { at in
            guard let next = changes.first, at >= next.at else { return }
            changes.removeFirst()
            try mixer.update { m throws(CrosspointError) in try m.setOutputDelay(1, milliseconds: next.ms) }
        }
        let step = largestStep(out[1][240...])
        if ramp > 0 {
            #expect(step <= own * 1.05, "largest step \(step) against the sine's own \(own)")
        } else {
            #expect(step > own * 4, "a jump of half a period steps \(step)")
        }
        // After the last change settles, output 1 is the signal 0.5 ms (24 samples) late.
        let tail = 46000..<48000
        #expect(tail.allSatisfy { out[1][$0] == signal[$0 - 24] })
    }

    @Test("A delay given to an output that plays waits until its line holds that much, then fades in: no sample it did not record")
    func firstDelayWaitsForItsPast() throws {
        let model = try Mixer(inputs: 1, outputs: 1)
        let mixer = MatrixMixer(model)
        let signal = [Float](repeating: 0.25, count: 30000)
        let out = try play(mixer, signal, blocks: [256]) { at in
            if at == 2560 { try mixer.update { m throws(CrosspointError) in try m.setOutputDelay(0, milliseconds: 200) } }
        }
        // A constant signal: a delay that read its ring before it was written would dip to 0.
        #expect(out[0].allSatisfy { $0 == 0.25 }, "min \(out[0].min()!)")
    }

    @Test("Lines are made for delayed outputs only, kept while the output exists, freed when it goes")
    func linesComeAndGo() throws {
        let mixer = MatrixMixer(try Mixer(inputs: 1, outputs: 4))
        #expect(mixer.delayLineCount == 0)
        try mixer.update { m throws(CrosspointError) in try m.setOutputDelay(2, milliseconds: 3) }
        #expect(mixer.delayLineCount == 1)
        _ = try play(mixer, [Float](repeating: 0, count: 4096), blocks: [1024])
        try mixer.update { m throws(CrosspointError) in try m.setOutputDelay(2, milliseconds: 0) }
        _ = try play(mixer, [Float](repeating: 0, count: 4096), blocks: [1024])
        #expect(mixer.delayLineCount == 1, "kept, so that the output can fade back")
        try mixer.update { m throws(CrosspointError) in try m.resize(inputs: 1, outputs: 2) }
        _ = try play(mixer, [Float](repeating: 0, count: 4096), blocks: [1024])
        try mixer.update { m throws(CrosspointError) in try m.setOutputGain(0, 0.5) }
        _ = try play(mixer, [Float](repeating: 0, count: 4096), blocks: [1024])
        mixer.collectRetired()
        #expect(mixer.delayLineCount == 0, "freed once no plan holds it")
    }

    @Test("A rate above what the lines were made for: new lines take the old ones over, the delay plays on exactly")
    func higherRateTakesOver() throws {
        var model = try Mixer(inputs: 1, outputs: 1)
        try model.setOutputDelay(0, milliseconds: 10)
        let mixer = MatrixMixer(model)
        var rng = SplitMix64(seed: 9)
        let signal = (0..<40000).map { _ in rng.sample() }
        var counted = (0, 0)
        let out = try withUnsafeMutablePointer(to: &counted) { c in
            try play(mixer, signal, blocks: [480], rate: 96000, counted: c) { at in
                // The rate is seen by the first render; the node's rate watch then asks for lines of its size.
                if at == 9600 {
                    #expect(mixer.renderRate == 96000)
                    mixer.refreshDelayLines()
                }
            }
        }
        #expect(counted == (0, 0))
        let d = 960  // 10 ms at 96 kHz
        #expect(out[0] == (0..<signal.count).map { $0 < d ? 0 : signal[$0 - d] })
        #expect(DelayLinePool.capacity(atRate: 96000) == 131072)
    }

    @Test("Rendering with delays changing, fading, idle and unheard allocates and frees nothing")
    func delaysAllocateNothing() throws {
        try warmUpRenderPaths()
        var rng = SplitMix64(seed: 21)
        var model = try Mixer(inputs: 2, outputs: 6)
        try model.setOutputDelay(0, milliseconds: 3)
        let mixer = MatrixMixer(model)
        let signal = (0..<96000).map { _ in rng.sample() }
        var counted = (0, 0), changes = 0
        _ = try withUnsafeMutablePointer(to: &counted) { c in
            try play(mixer, signal, blocks: [64, 256, 17, 1024], listening: [true, true, false, true, true, true], counted: c) { _ in
                guard rng.chance(0.2) else { return }
                let j = rng.index(6), ms = rng.chance(0.3) ? 0 : rng.double(in: 0...40)
                let ramp = [0.0, 1, 10][rng.index(3)]
                try mixer.update { m throws(CrosspointError) in
                    try m.setOutputDelay(j, milliseconds: ms)
                    try m.setRamp(milliseconds: ramp)
                    try m.setCrosspoint(input: rng.index(2), output: j, gain: rng.gain())
                }
                changes += 1
            }
        }
        #expect(changes > 50)
        #expect(counted == (0, 0), "\(counted.0) allocations, \(counted.1) frees")
    }
}

@Suite("Output delays at higher rates")
struct OutputDelayRateTests {
    @Test("A 1 s delay at 96 kHz: clamped to what the 48 kHz line holds until bigger lines come, then exactly 1 s")
    func oneSecondAtNinetySixKilohertz() throws {
        var model = try Mixer(inputs: 1, outputs: 1)
        try model.setRamp(milliseconds: 0)
        try model.setOutputDelay(0, milliseconds: 1000)
        let mixer = MatrixMixer(model)
        var rng = SplitMix64(seed: 12)
        let signal = (0..<400_000).map { _ in rng.sample() }
        var refreshed = false
        let out = try play(mixer, signal, blocks: [1024], rate: 96000) { at in
            if at >= 20480 && !refreshed {
                refreshed = true
                #expect(mixer.delayLineCount == 1)
                mixer.refreshDelayLines()
                mixer.refreshDelayLines()  // once is enough: the lines are big enough now
            }
        }
        let clamped = DelayLinePool.capacity(atRate: 48000) - maximumFrameCount  // 57,344 frames
        #expect((30000..<40000).allSatisfy { out[0][$0] == (($0 < clamped) ? 0 : signal[$0 - clamped]) })
        // Once the new line holds a second, the delay jumps (ramp 0) to it and stays.
        #expect((300_000..<400_000).allSatisfy { out[0][$0] == signal[$0 - 96000] })
    }
}
