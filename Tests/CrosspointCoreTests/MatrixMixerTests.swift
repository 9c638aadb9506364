// The render side: MatrixRenderer against the Double reference, the seed's routings on
// rendered audio, the handover of changes, and ramps.

import CrosspointCore
import CrosspointTestSupport
import Testing

// MARK: - Random models

/// A random model of `inputs` x `outputs`: a matrix of the given density with gains of every
/// kind (unity, polarity flips, up to ±10), random input, output and master gains, mutes.
func randomMixer(_ inputs: Int, _ outputs: Int, _ rng: inout SplitMix64, density: Double, ramp: Double = 0) throws
    -> Mixer
{
    var mixer = try Mixer(inputs: inputs, outputs: outputs)
    try mixer.setRamp(milliseconds: ramp)
    var rows = [[Double]](repeating: [Double](repeating: 0, count: outputs), count: inputs)
    for i in 0..<inputs {
        for j in 0..<outputs where rng.chance(density) {
            rows[i][j] = rng.gain()
        }
    }
    try mixer.setMatrix(rows: rows)
    for i in 0..<inputs {
        if rng.chance(0.4) { try mixer.setInputGain(i, rng.gain()) }
        if rng.chance(0.1) { try mixer.setInputMute(i, true) }
    }
    for j in 0..<outputs {
        if rng.chance(0.4) { try mixer.setOutputGain(j, rng.gain()) }
        if rng.chance(0.1) { try mixer.setOutputMute(j, true) }
    }
    if rng.chance(0.5) { try mixer.setMasterGain(rng.double(in: -2...2)) }
    if rng.chance(0.03) { mixer.setMasterMute(true) }
    return mixer
}

/// The largest error of the rendered outputs against the reference, each measured as a
/// fraction of that output's full scale. Checks too that outputs past the mixer's count,
/// when handed over, are silent.
func referenceError(
    _ bench: Bench, _ reference: ReferenceMixer, frames: Int, inputsHanded: Int, outputsHanded: Int
) -> (error: Double, checked: Int) {
    let signals = Array(bench.signals(frames: frames).prefix(inputsHanded))
    let expected = reference.render(signals, frames: frames)
    var worst = 0.0
    var checked = 0
    for j in 0..<outputsHanded where bench.outputPointers[j] != nil {
        let out = bench.output(j)
        if j >= reference.outputs {
            for n in 0..<frames where out[n] != 0 { worst = .infinity }
            continue
        }
        let scale = reference.fullScale(output: j)
        for n in 0..<frames {
            let error = abs(Double(out[n]) - expected[j][n]) / scale
            if !(error <= worst) { worst = error.isNaN ? .infinity : error }
        }
        checked += 1
    }
    return (worst, checked)
}

@Suite("Matrix mixer: rendering, handover and ramps")
struct MatrixMixerTests {
    // MARK: Against the reference

    static let shapes: [(Int, Int)] = [
        (1, 1), (1, 64), (64, 1), (2, 1), (1, 2), (2, 2), (3, 5), (8, 8), (13, 7), (5, 17), (64, 64), (256, 256),
    ]

    @Test("MatrixRenderer matches the Double reference on random mixers", arguments: shapes)
    func rendererMatchesReference(inputs: Int, outputs: Int) throws {
        var rng = SplitMix64(seed: UInt64(inputs * 1000 + outputs))
        let size = inputs * outputs
        let cases = size >= 65536 ? 2 : size >= 4096 ? 3 : 6
        // Outputs one past the mixer's count, to see them silenced.
        let bench = Bench(inputs: inputs, outputs: outputs + 1, capacity: maximumFrameCount)
        var worst = 0.0
        var checkedOutputs = 0
        for c in 0..<cases {
            let density = [1.0, 0.3, 0.05][c % 3]
            var model = try randomMixer(inputs, outputs, &rng, density: density)
            let mixer = MatrixMixer(model)
            var renderer = mixer.renderer
            #expect(renderer.inputCount == inputs && renderer.outputCount == outputs)
            for round in 0..<2 {
                if round == 1 {
                    // A second model, handed over as a change (ramp 0: it takes effect at once).
                    model = try randomMixer(inputs, outputs, &rng, density: [0.05, 1.0, 0.3][c % 3])
                    if c % 2 == 0 {
                        let next = model
                        try mixer.update { $0 = next }
                    } else {
                        mixer.replace(with: model)
                    }
                    #expect(mixer.mixer == model)
                }
                let reference = ReferenceMixer(model)
                let work = Double(size) * max(density, 0.05)
                for frames in [1, 7, 13, 64, 1023, 8192] where frames <= 13 || work * Double(frames) <= 2_500_000 {
                    for i in 0..<inputs { bench.connectInput(i, !rng.chance(0.2)) }
                    for j in 0...outputs { bench.connectOutput(j, !rng.chance(0.2)) }
                    let inputsHanded = rng.chance(0.2) ? rng.index(inputs + 1) : inputs
                    let outputsHanded = rng.chance(0.2) ? outputs + 1 : outputs
                    bench.fillInputs(&rng, frames: frames)
                    bench.poisonOutputs()
                    bench.render(&renderer, frames: frames, inputs: inputsHanded, outputs: outputsHanded)
                    let (error, checked) = referenceError(
                        bench, reference, frames: frames, inputsHanded: inputsHanded, outputsHanded: outputsHanded)
                    #expect(error <= 1e-6, "case \(c) round \(round), \(frames) frames: error \(error) of full scale")
                    worst = max(worst, error)
                    checkedOutputs += checked
                }
            }
        }
        #expect(checkedOutputs > 0)
        #expect(worst <= 1e-6)
    }

    @Test("Unconnected inputs are silence and unconnected outputs are left alone")
    func nilInputsAreSilenceAndNilOutputsUntouched() throws {
        var model = try makeMixer(2, 2)
        try model.setMatrix(rows: [[1, 1], [1, 1]])
        let rig = Rig(model, capacity: 64)
        rig.bench.fillInput(0, with: 0.25)
        rig.bench.fillInput(1, with: 0.5)
        rig.bench.connectInput(1, false)
        rig.bench.poisonOutputs()
        rig.bench.connectOutput(1, false)
        rig.bench.render(&rig.renderer, frames: 64)
        #expect(rig.bench.samples(output: 0, frames: 64).allSatisfy { $0 == 0.25 })
        #expect(rig.bench.samples(output: 1, frames: 64).allSatisfy { $0.isNaN }, "a nil output is not written")
        rig.bench.connectInput(0, false)
        rig.bench.render(&rig.renderer, frames: 64)
        #expect(rig.bench.samples(output: 0, frames: 64).allSatisfy { $0 == 0 })
    }

    @Test("Only the frames asked for are written")
    func onlyTheRequestedFramesAreWritten() throws {
        let rig = Rig(try makeMixer(3, 3), capacity: 64)
        var rng = SplitMix64(seed: 7)
        rig.bench.fillInputs(&rng, frames: 64)
        rig.bench.poisonOutputs()
        rig.bench.render(&rig.renderer, frames: 13)
        for j in 0..<3 {
            let out = rig.bench.samples(output: j, frames: 64)
            #expect(out[..<13].allSatisfy { !$0.isNaN })
            #expect(out[13...].allSatisfy { $0.isNaN })
            #expect(Array(out[..<13]) == Array(UnsafeBufferPointer(start: rig.bench.input(j), count: 13)))
        }
    }

    // MARK: The seed's cases, on rendered audio

    /// Renders random audio through a model given as a channel-map text, returning the
    /// inputs and outputs.
    func routed(inputs: Int, outputs: Int, map text: String?, frames: Int = 37) throws -> ([[Float]], [[Float]]) {
        var model = try makeMixer(inputs, outputs)
        if let text { try model.apply(ChannelMap(parsing: text)) }
        let rig = Rig(model, capacity: frames)
        var rng = SplitMix64(seed: 99)
        rig.bench.fillInputs(&rng, frames: frames)
        rig.run(frames: frames, block: frames)
        let ins = (0..<inputs).map { Array(UnsafeBufferPointer(start: rig.bench.input($0), count: frames)) }
        return (ins, rig.recorded)
    }

    @Test("Seed [0,0]: a mono input on both sides of a stereo output")
    func seedMonoToStereo() throws {
        let (ins, outs) = try routed(inputs: 1, outputs: 2, map: "0,0")
        #expect(outs[0] == ins[0])
        #expect(outs[1] == ins[0])
        let (_, byDefault) = try routed(inputs: 1, outputs: 2, map: nil)
        #expect(byDefault == outs, "1x2 does this by default")
    }

    @Test("Seed [1,0]: a stereo pair swapped")
    func seedSwap() throws {
        let (ins, outs) = try routed(inputs: 2, outputs: 2, map: "[1, 0]")
        #expect(outs[0] == ins[1])
        #expect(outs[1] == ins[0])
        #expect(ins[0] != ins[1])
    }

    @Test("Seed [-1,-1,0,1]: a stereo pair to outputs 3 and 4 of four")
    func seedStereoToOutputsThreeAndFour() throws {
        let (ins, outs) = try routed(inputs: 2, outputs: 4, map: "[-1, -1, 0, 1]")
        #expect(outs[0].allSatisfy { $0 == 0 })
        #expect(outs[1].allSatisfy { $0 == 0 })
        #expect(outs[2] == ins[0])
        #expect(outs[3] == ins[1])
    }

    @Test("Seed stereo to mono: the default 2x1 is the average, 0.5 L + 0.5 R")
    func seedStereoToMono() throws {
        let (ins, outs) = try routed(inputs: 2, outputs: 1, map: nil)
        for n in 0..<ins[0].count {
            #expect(outs[0][n] == 0.5 * ins[0][n] + 0.5 * ins[1][n])
            #expect(abs(Double(outs[0][n]) - 0.5 * (Double(ins[0][n]) + Double(ins[1][n]))) <= 1e-7)
        }
        // Correlated full scale does not clip.
        let rig = Rig(try makeMixer(2, 1), capacity: 16)
        rig.bench.fillInput(0, with: 1)
        rig.bench.fillInput(1, with: 1)
        rig.run(frames: 16, block: 16)
        #expect(rig.recorded[0].allSatisfy { $0 == 1 })
    }

    @Test("Seed maps applied as changes reach exactly the routing after the ramp")
    func seedMapsAsChanges() throws {
        for (inputs, outputs, text, route) in [(1, 2, "0,0", [0, 0]), (2, 2, "1 0", [1, 0]),
                                               (2, 4, "[-1, -1, 0, 1]", [-1, -1, 0, 1])] {
            var start = try makeMixer(inputs, outputs)
            try start.setMatrix(rows: [[Double]](repeating: [Double](repeating: 0.3, count: outputs), count: inputs))
            let rig = Rig(start, capacity: 1024)
            var rng = SplitMix64(seed: 5)
            rig.bench.fillInputs(&rng, frames: 1024)
            let map = try ChannelMap(parsing: text)
            rig.update { try $0.apply(map) }
            #expect(rig.mixer.mixer.channelMap == map)
            rig.run(frames: 1024, block: 1024)
            for j in 0..<outputs {
                let tail = rig.recorded[j][480..<1024]
                let expected: [Float] = route[j] < 0
                    ? [Float](repeating: 0, count: 544)
                    : Array(UnsafeBufferPointer(start: rig.bench.input(route[j]) + 480, count: 544))
                #expect(firstDifference(tail, expected) == nil, "\(text) output \(j)")
            }
        }
    }

    // MARK: Handover

    @Test("A failed update changes neither the model nor the sound")
    func failedUpdateChangesNothing() throws {
        let rig = Rig(try makeMixer(2, 2), capacity: 512)
        rig.bench.fillInput(0, with: 1)
        rig.bench.fillInput(1, with: 1)
        let before = rig.mixer.mixer
        #expect(throws: CrosspointError.notFinite(key: "gain.in.1", value: .infinity)) {
            try rig.mixer.update { m throws(CrosspointError) in
                try m.setCrosspoint(input: 0, output: 1, gain: 1)
                try m.setInputGain(1, .infinity)
            }
        }
        #expect(rig.mixer.mixer == before)
        rig.run(frames: 512, block: 128)
        #expect(rig.recorded[0].allSatisfy { $0 == 1 })
        #expect(rig.recorded[1].allSatisfy { $0 == 1 }, "the half-made change must not be heard")
    }

    @Test("The latest of many unrendered changes wins")
    func latestChangeWins() throws {
        var model = try makeMixer(1, 1)
        try model.setRamp(milliseconds: 0)
        let rig = Rig(model, capacity: 64)
        rig.bench.fillInput(0, with: 1)
        for k in 1...50 { rig.update { try $0.setCrosspoint(input: 0, output: 0, gain: Double(k) / 100) } }
        rig.run(frames: 64, block: 64)
        #expect(rig.recorded[0].allSatisfy { $0 == Float(0.5) })
        #expect(rig.mixer.mixer.crosspoint(input: 0, output: 0) == 0.5)
    }

    @Test("Republishing the same model leaves every sample as it was, even mid-ramp")
    func republishingChangesNothing() throws {
        var rng = SplitMix64(seed: 11)
        let model = try randomMixer(4, 3, &rng, density: 0.6, ramp: 10)
        let target = try randomMixer(4, 3, &rng, density: 0.6, ramp: 10)
        let a = Rig(model, capacity: 64), b = Rig(model, capacity: 64)
        a.update { $0 = target }
        b.update { $0 = target }
        for block in 0..<20 {
            a.bench.fillInputs(&rng, frames: 64)
            for i in 0..<4 { b.bench.input(i).update(from: a.bench.input(i), count: 64) }
            if block % 3 == 1 { b.update { _ in } }
            if block == 4 { b.mixer.replace(with: target) }
            a.run(frames: 64, block: 64)
            b.run(frames: 64, block: 64)
        }
        let same = a.recorded == b.recorded
        #expect(same)
        #expect(a.recorded[0].count == 1280)
    }

    @Test("A new shape replaces the old one and renders its own reference")
    func shapeChange() throws {
        var rng = SplitMix64(seed: 12)
        let rig = Rig(try makeMixer(2, 2), capacity: 64)
        #expect(rig.renderer.inputCount == 2 && rig.renderer.outputCount == 2)
        let next = try randomMixer(3, 4, &rng, density: 0.7, ramp: 10)
        rig.mixer.replace(with: next)
        // The bench still has two inputs and two outputs; the renderer takes what it is given.
        for _ in 0..<10 {
            rig.bench.fillInputs(&rng, frames: 64)
            rig.bench.render(&rig.renderer, frames: 64)
        }
        #expect(rig.renderer.inputCount == 3 && rig.renderer.outputCount == 4)
        let bench = Bench(inputs: 3, outputs: 4, capacity: 64)
        bench.fillInputs(&rng, frames: 64)
        bench.poisonOutputs()
        bench.render(&rig.renderer, frames: 64)
        let (error, checked) = referenceError(bench, ReferenceMixer(next), frames: 64, inputsHanded: 3, outputsHanded: 4)
        #expect(checked == 4)
        #expect(error <= 1e-6)
    }

    @Test("The sample rate is the one given, settable by the host")
    func sampleRateIsSettable() throws {
        let mixer = MatrixMixer(try makeMixer(1, 1))
        #expect(mixer.renderer.sampleRate == 48000)
        mixer.renderer.sampleRate = 44100
        #expect(mixer.renderer.sampleRate == 44100)
        #expect(MatrixMixer(try makeMixer(1, 1), sampleRate: 96000).renderer.sampleRate == 96000)
    }

    // MARK: Ramps

    /// One kind of change, from a 2x2 identity with DC 1.0 on input 0 and 0.5 on input 1.
    enum Change: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case crosspoint, inputGain, outputGain, masterGain, channelMap, inputMute, outputMute, masterMute

        var testDescription: String { rawValue }

        func apply(_ mixer: inout Mixer) throws(CrosspointError) {
            switch self {
            case .crosspoint: try mixer.setCrosspoint(input: 0, output: 0, gain: -0.5)
            case .inputGain: try mixer.setInputGain(0, 0.25)
            case .outputGain: try mixer.setOutputGain(0, 3)
            case .masterGain: try mixer.setMasterGain(-2)
            case .channelMap: try mixer.apply(ChannelMap([1, 0]))
            case .inputMute: try mixer.setInputMute(0, true)
            case .outputMute: try mixer.setOutputMute(1, true)
            case .masterMute: mixer.setMasterMute(true)
            }
        }
    }

    static let levels: [Float] = [1, 0.5]

    /// A 2x2 identity rig, DC `levels` on its inputs, 64 frames rendered before the change.
    func glideRig(_ change: Change, block: Int, sampleRate: Double = 48000) throws -> (Rig, before: Mixer, after: Mixer) {
        let before = try makeMixer(2, 2)
        let rig = Rig(before, capacity: maximumFrameCount, sampleRate: sampleRate)
        for (i, level) in Self.levels.enumerated() { rig.bench.fillInput(i, with: level) }
        rig.run(frames: 64, block: block)
        rig.update { try change.apply(&$0) }
        return (rig, before, rig.mixer.mixer)
    }

    /// What output `j` of `mixer` plays with the DC levels, in Double.
    func level(_ mixer: Mixer, output j: Int) -> Double {
        let reference = ReferenceMixer(mixer)
        return (0..<2).reduce(0) { $0 + reference.gain(input: $1, output: j) * Double(Self.levels[$1]) }
    }

    @Test(
        "(a) A gain change glides: no step larger than |Δgain|/rampFrames, along a straight line",
        arguments: Change.allCases, [128, 1, 7, 100, 480, 1000])
    func gainChangeGlides(change: Change, block: Int) throws {
        let (rig, before, after) = try glideRig(change, block: block)
        rig.run(frames: 480 + 200, block: block)
        var changed = 0
        for j in 0..<2 {
            let from = level(before, output: j), to = level(after, output: j)
            // The largest step the glide may take: |Δgain| * amplitude over 480 frames, per source.
            let reference = (ReferenceMixer(before), ReferenceMixer(after))
            let bound = (0..<2).reduce(0.0) {
                $0 + abs(reference.1.gain(input: $1, output: j) - reference.0.gain(input: $1, output: j))
                    * Double(Self.levels[$1])
            } / 480 + 1e-6
            let out = rig.recorded[j]
            var largest = 0.0
            for n in 1..<out.count { largest = max(largest, abs(Double(out[n]) - Double(out[n - 1]))) }
            #expect(largest <= bound, "output \(j): step \(largest) > \(bound)")
            // Before the change: the old level; during: on the line; after: the new level.
            #expect(out[..<64].allSatisfy { Double($0) == from })
            var offLine = 0.0
            for k in 1...480 { offLine = max(offLine, abs(Double(out[63 + k]) - (from + (to - from) * Double(k) / 480))) }
            #expect(offLine <= 1e-6, "output \(j) strays \(offLine) from the line")
            #expect(out[(64 + 480)...].allSatisfy { abs(Double($0) - to) <= 1e-7 })
            if from != to {
                changed += 1
                // It really glides: halfway there at the middle of the ramp.
                #expect(abs(Double(out[63 + 240]) - (from + to) / 2) <= 1e-6)
            }
        }
        #expect(changed > 0, "the change must change something")
    }

    @Test("(b) The target is reached exactly: after the ramp, samples are bit-exact target * input",
          arguments: Change.allCases, [128, 7, 480, 1000])
    func targetReachedExactly(change: Change, block: Int) throws {
        let (rig, _, after) = try glideRig(change, block: block)
        rig.run(frames: 480 + 300, block: block)
        for j in 0..<2 {
            let sources = (0..<2).filter { after.effectiveGain(input: $0, output: j) != 0 }
            let tail = rig.recorded[j][(64 + 480)...]
            #expect(tail.count == 300)
            if sources.count == 1 {
                let i = sources[0]
                let exact = after.effectiveGain(input: i, output: j) * Self.levels[i]
                #expect(tail.allSatisfy { $0 == exact }, "output \(j): \(tail.first!) != \(exact)")
            } else if sources.isEmpty {
                #expect(tail.allSatisfy { $0 == 0 })
            }
        }
    }

    @Test("(b) After the ramp, a mixer sounds bit-identical to one that started at the target",
          arguments: [128, 7, 64, 1000])
    func afterTheRampItIsAsIfItStartedThere(block: Int) throws {
        var rng = SplitMix64(seed: UInt64(block))
        let start = try randomMixer(5, 4, &rng, density: 0.7, ramp: 10)
        let target = try randomMixer(5, 4, &rng, density: 0.7, ramp: 10)
        let ramped = Rig(start, capacity: 2048), settled = Rig(target, capacity: 2048)
        ramped.update { $0 = target }
        ramped.bench.fillInputs(&rng, frames: 2048)
        for i in 0..<5 { settled.bench.input(i).update(from: ramped.bench.input(i), count: 2048) }
        ramped.run(frames: 2048, block: block)
        settled.run(frames: 2048, block: block)
        for j in 0..<4 {
            #expect(firstDifference(ramped.recorded[j][480...], settled.recorded[j][480...]) == nil, "output \(j)")
        }
        let rampSoundsDifferent = ramped.recorded != settled.recorded
        #expect(rampSoundsDifferent, "the ramp itself sounds different")
    }

    @Test("(c) A change mid-ramp continues from the current value", arguments: [1, 100, 200, 479], [64, 7, 1000])
    func changeMidRampContinues(at position: Int, block: Int) throws {
        var model = try makeMixer(1, 1)
        try model.setCrosspoint(input: 0, output: 0, gain: 1)
        let rig = Rig(model, capacity: maximumFrameCount)
        rig.bench.fillInput(0, with: 1)
        rig.run(frames: 10, block: block)
        rig.update { try $0.setCrosspoint(input: 0, output: 0, gain: 0) }
        rig.run(frames: position, block: block)
        rig.update { try $0.setCrosspoint(input: 0, output: 0, gain: 0.5) }
        rig.run(frames: 480 + 100, block: block)
        let out = rig.recorded[0].map(Double.init)
        let changeAt = 10 + position
        let current = 1 - Double(position) / 480
        #expect(abs(out[changeAt - 1] - current) <= 1e-6, "on the first ramp until the change")
        // No jump at the change point: the step is no larger than either ramp's.
        let bound = max(1.0 / 480, abs(0.5 - current) / 480) + 1e-6
        for n in (changeAt - 5)..<(changeAt + 5) {
            #expect(abs(out[n] - out[n - 1]) <= bound, "step at \(n)")
        }
        // From there, a straight line to 0.5 over a full ramp.
        var offLine = 0.0
        for k in 1...480 { offLine = max(offLine, abs(out[changeAt - 1 + k] - (current + (0.5 - current) * Double(k) / 480))) }
        #expect(offLine <= 1e-6)
        #expect(out[(changeAt + 480)...].allSatisfy { $0 == 0.5 })
    }

    @Test("(c) A reversal mid-ramp turns around where the sound is")
    func reversalMidRamp() throws {
        let rig = Rig(try makeMixer(1, 1), capacity: 1024)
        rig.bench.fillInput(0, with: -1)
        rig.update { try $0.setMasterGain(0) }
        rig.run(frames: 240, block: 48)
        rig.update { try $0.setMasterGain(1) }
        rig.run(frames: 600, block: 48)
        let out = rig.recorded[0].map(Double.init)
        #expect(abs(out[239] + 0.5) <= 1e-6, "halfway down")
        #expect(out[240] < -0.5 && abs(out[240] - out[239]) <= 0.5 / 480 + 1e-6, "heads back up without a jump")
        #expect(abs(out[239 + 240] + 0.75) <= 1e-6, "glides back over a full ramp")
        #expect(out[(240 + 480)...].allSatisfy { $0 == -1 })
    }

    @Test(
        "(d) A change to one cross-point leaves every other output bit-identical",
        arguments: [128, 7, 1000])
    func oneCrosspointLeavesOtherOutputsAlone(block: Int) throws {
        var rng = SplitMix64(seed: 0xD00D + UInt64(block))
        let inputs = 6, outputs = 5
        let start = try randomMixer(inputs, outputs, &rng, density: 0.6, ramp: 10)
        let a = Rig(start), b = Rig(start)
        var shared1 = try randomMixer(inputs, outputs, &rng, density: 0.6, ramp: 10)
        let (i0, j0) = (1, 2)
        // The cross-points b changes must be heard: nothing mutes or zeroes their path.
        for i in [i0, 5] {
            try shared1.setInputMute(i, false)
            try shared1.setInputGain(i, 1)
        }
        try shared1.setOutputMute(j0, false)
        try shared1.setOutputGain(j0, 1)
        shared1.setMasterMute(false)
        try shared1.setMasterGain(1)
        var shared2 = shared1
        try shared2.setInputGain(2, 0.3)
        try shared2.setOutputGain(1, -0.7)
        try shared2.setCrosspoint(input: 4, output: 3, gain: 2)
        var total = 0
        // Changes land at these frames, ramps (480 frames) still in flight at the next.
        let schedule: [(frames: Int, action: Int)] = [(100, 1), (200, 2), (300, 3), (200, 4), (900, 0)]
        for (frames, action) in schedule {
            a.bench.fillInputs(&rng, frames: frames)
            for i in 0..<inputs { b.bench.input(i).update(from: a.bench.input(i), count: frames) }
            a.run(frames: frames, block: block)
            b.run(frames: frames, block: block)
            total += frames
            switch action {
            case 1:  // both: a change that ramps on many outputs
                a.update { $0 = shared1 }
                b.update { $0 = shared1 }
            case 2:  // b alone: one cross-point, while those ramps are in flight
                b.update { try $0.setCrosspoint(input: i0, output: j0, gain: -3) }
            case 3:  // both: another shared change; b's cross-point stays different
                a.update { $0 = shared2 }
                b.update { m in
                    let mine = m.crosspoint(input: i0, output: j0)
                    m = shared2
                    try m.setCrosspoint(input: i0, output: j0, gain: Double(mine))
                }
            case 4:  // b alone, in a change that also carries a shared one
                a.update { try $0.setInputGain(0, 0.5) }
                b.update {
                    try $0.setInputGain(0, 0.5)
                    try $0.setCrosspoint(input: 5, output: j0, gain: 0.125)
                }
            default: break
            }
        }
        for j in 0..<outputs where j != j0 {
            #expect(firstDifference(a.recorded[j], b.recorded[j]) == nil, "output \(j) differs")
        }
        let changed = a.recorded[j0] != b.recorded[j0]
        #expect(changed, "the changed output itself does change")
        #expect(a.recorded[0].count == total)
    }

    @Test("(e) A ramp of 0 ms jumps", arguments: [128, 7])
    func zeroRampJumps(block: Int) throws {
        let rig = Rig(try makeMixer(1, 1), capacity: 1024)
        rig.bench.fillInput(0, with: 1)
        rig.run(frames: 32, block: block)
        rig.update {
            try $0.setRamp(milliseconds: 0)
            try $0.setCrosspoint(input: 0, output: 0, gain: 0.25)
        }
        rig.run(frames: 32, block: block)
        rig.update { try $0.setInputGain(0, -2) }
        rig.run(frames: 32, block: block)
        let out = rig.recorded[0]
        #expect(out[..<32].allSatisfy { $0 == 1 })
        #expect(out[32..<64].allSatisfy { $0 == 0.25 }, "the first sample after the change is the target")
        #expect(out[64..<96].allSatisfy { $0 == -0.5 })
    }

    @Test("(e) A 0 ms change arriving mid-ramp jumps to its target")
    func zeroRampChangeMidRampJumps() throws {
        let rig = Rig(try makeMixer(1, 1), capacity: 1024)
        rig.bench.fillInput(0, with: 1)
        rig.update { try $0.setCrosspoint(input: 0, output: 0, gain: 0) }
        rig.run(frames: 100, block: 50)
        #expect(rig.recorded[0][99] > 0.5 && rig.recorded[0][99] < 1)
        rig.update {
            try $0.setRamp(milliseconds: 0)
            try $0.setCrosspoint(input: 0, output: 0, gain: 0.75)
        }
        rig.run(frames: 100, block: 50)
        #expect(rig.recorded[0][100...].allSatisfy { $0 == 0.75 })
    }

    @Test(
        "The ramp lasts ramp.ms at the renderer's sample rate",
        arguments: [(10.0, 48000.0, 480), (1, 48000, 48), (10, 44100, 441), (10, 96000, 960), (5, 48000, 240),
                    (0.5, 48000, 24), (100, 8000, 800)])
    func rampLengthFollowsTimeAndRate(milliseconds: Double, sampleRate: Double, frames: Int) throws {
        var model = try makeMixer(1, 1)
        try model.setRamp(milliseconds: milliseconds)
        let rig = Rig(model, capacity: 2048, sampleRate: 48000)
        rig.renderer.sampleRate = sampleRate
        rig.bench.fillInput(0, with: 1)
        rig.update { try $0.setCrosspoint(input: 0, output: 0, gain: 0) }
        rig.run(frames: frames + 64, block: 64)
        let out = rig.recorded[0]
        var offLine = 0.0
        for k in 1...frames { offLine = max(offLine, abs(Double(out[k - 1]) - (1 - Double(k) / Double(frames)))) }
        #expect(offLine <= 1e-6, "a straight line from 1 to 0 over \(frames) frames")
        #expect(out[frames - 2] > 0, "still gliding one frame before the end")
        #expect(abs(out[frames - 1]) <= 1e-6)
        #expect(out[frames...].allSatisfy { $0 == 0 }, "done after exactly \(frames) frames")
    }

    @Test("(f) Mutes ramp too, in and out", arguments: [Change.inputMute, .outputMute, .masterMute])
    func mutesRamp(change: Change) throws {
        let (rig, before, muted) = try glideRig(change, block: 128)
        rig.run(frames: 600, block: 128)
        rig.update { m in
            switch change {
            case .inputMute: try m.setInputMute(0, false)
            case .outputMute: try m.setOutputMute(1, false)
            default: m.setMasterMute(false)
            }
        }
        #expect(rig.mixer.mixer == before)
        rig.run(frames: 600, block: 128)
        var glided = 0
        for j in 0..<2 {
            let on = level(before, output: j), off = level(muted, output: j)
            let out = rig.recorded[j].map(Double.init)
            let step = abs(on - off) / 480 + 1e-6
            for n in 1..<out.count { #expect(abs(out[n] - out[n - 1]) <= step, "output \(j) steps at \(n)") }
            guard on != off else { continue }
            glided += 1
            #expect(abs(out[63 + 240] - (on + off) / 2) <= 1e-6, "halfway into the mute")
            #expect(out[(64 + 480)..<(64 + 600)].allSatisfy { $0 == off }, "muted")
            #expect(abs(out[664 + 239] - (on + off) / 2) <= 1e-6, "halfway out of the mute")
            #expect(out[(664 + 480)...].allSatisfy { $0 == on }, "back")
        }
        #expect(glided > 0)
    }

    @Test("Ramps run on while an output is disconnected")
    func rampsAdvanceOnDisconnectedOutputs() throws {
        let rig = Rig(try makeMixer(1, 2), capacity: 1024)
        rig.bench.fillInput(0, with: 1)
        rig.update {
            try $0.setCrosspoint(input: 0, output: 0, gain: 0)
            try $0.setCrosspoint(input: 0, output: 1, gain: 0)
        }
        rig.bench.connectOutput(1, false)
        rig.run(frames: 480, block: 128)
        rig.bench.connectOutput(1, true)
        rig.run(frames: 64, block: 64)
        #expect(rig.recorded[1].count == 64)
        #expect(rig.recorded[1].allSatisfy { $0 == 0 }, "the ramp finished while nobody listened")
        #expect(rig.recorded[0][479] == 0 || abs(rig.recorded[0][479]) < 1e-6)
        #expect(rig.recorded[0][480...].allSatisfy { $0 == 0 })
    }

    @Test("A ramp on random audio follows the reference gains frame by frame")
    func rampOnRandomAudioFollowsInterpolatedGains() throws {
        var rng = SplitMix64(seed: 31)
        let start = try randomMixer(3, 2, &rng, density: 1, ramp: 10)
        let target = try randomMixer(3, 2, &rng, density: 1, ramp: 10)
        let rig = Rig(start, capacity: 1024)
        rig.bench.fillInputs(&rng, frames: 1024)
        rig.update { $0 = target }
        rig.run(frames: 1024, block: 100)
        let from = ReferenceMixer(start), to = ReferenceMixer(target)
        let signals = rig.bench.signals(frames: 1024).map { $0! }
        var worst = 0.0
        for j in 0..<2 {
            let scale = max(from.fullScale(output: j), to.fullScale(output: j))
            for n in 0..<1024 {
                let t = min(Double(n + 1) / 480, 1)
                var expected = 0.0
                for i in 0..<3 {
                    let g = from.gain(input: i, output: j) + (to.gain(input: i, output: j) - from.gain(input: i, output: j)) * t
                    expected += g * Double(signals[i][n])
                }
                worst = max(worst, abs(Double(rig.recorded[j][n]) - expected) / scale)
            }
        }
        #expect(worst <= 1e-6)
    }
}
