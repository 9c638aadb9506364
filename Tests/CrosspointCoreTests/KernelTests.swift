// The steady mixing kernel's versions (CCrosspointKernel): each one this CPU runs against the
// Double reference, and the promise that lets tiles, ramps and block sizes come and go: an
// output's bits depend on its own gains and inputs only.

import CrosspointCore
import CrosspointTestSupport
import Glibc
import Testing

@Suite("Kernel versions, tiles and bit-identity")
struct KernelTests {
    static let versions = KernelVersion.available

    @Test("The version chosen at load is the best this CPU runs (CROSSPOINT_KERNEL unset)")
    func defaultIsTheBest() throws {
        try #require(!Self.versions.isEmpty)
        #expect(Self.versions.first?.name == "baseline" || Self.versions.first?.name == "generic")
        if getenv("CROSSPOINT_KERNEL") == nil {
            #expect(KernelVersion.default == Self.versions.last)
        }
        #expect(KernelVersion(named: "no-such-cpu") == nil)
        for version in Self.versions { #expect(KernelVersion(named: version.name) == version) }
    }

    @Test("Every version this CPU runs matches the Double reference", arguments: versions, [
        (2, 1), (8, 8), (13, 7), (37, 5), (64, 64),
    ])
    func versionMatchesReference(version: KernelVersion, shape: (Int, Int)) throws {
        let (inputs, outputs) = shape
        var rng = SplitMix64(seed: UInt64(inputs * 1000 + outputs) &+ 0x5EED)
        for density in [1.0, 0.5, 0.1] {
            let model = try randomMixer(inputs, outputs, &rng, density: density)
            let rig = Rig(model, capacity: 1500, kernel: version)
            let reference = ReferenceMixer(model)
            for frames in [1, 7, 13, 64, 100, 1024, 1500] {
                for i in 0..<inputs { rig.bench.connectInput(i, !rng.chance(0.1)) }
                for j in 0..<outputs { rig.bench.connectOutput(j, !rng.chance(0.1)) }
                rig.bench.fillInputs(&rng, frames: frames)
                rig.bench.poisonOutputs()
                rig.bench.render(&rig.renderer, frames: frames)
                let (error, _) = referenceError(
                    rig.bench, reference, frames: frames, inputsHanded: inputs, outputsHanded: outputs)
                #expect(error <= 1e-6, "\(version) density \(density), \(frames) frames: error \(error) of full scale")
            }
        }
    }

    /// A dense model whose outputs all take every input: the kernel renders them in tiles.
    func denseModel(_ inputs: Int, _ outputs: Int, _ rng: inout SplitMix64) throws -> Mixer {
        var model = try Mixer(inputs: inputs, outputs: outputs)
        try model.setRamp(milliseconds: 10)
        try model.setMatrix(rows: (0..<inputs).map { _ in (0..<outputs).map { _ in rng.double(in: 0.1...0.9) } })
        return model
    }

    @Test("An output sounds the same, bit for bit, in a tile, alone, beside a ramp and in any block size",
          arguments: versions)
    func tilesRampsAndBlocksLeaveOutputsAlone(version: KernelVersion) throws {
        var rng = SplitMix64(seed: 0x711E)
        let inputs = 24, outputs = 10, frames = 3000
        let model = try denseModel(inputs, outputs, &rng)
        // a: steady all along, in tiles of four, in blocks of 256.
        // b: output 5 ramps to other gains (and a sparser pattern, so it leaves its tile and
        //    the tiles regroup), rendered in blocks of 7 and 1000.
        let a = Rig(model, capacity: frames, kernel: version)
        let b = Rig(model, capacity: frames, kernel: version)
        a.bench.fillInputs(&rng, frames: frames)
        for i in 0..<inputs { b.bench.input(i).update(from: a.bench.input(i), count: frames) }
        a.run(frames: frames, block: 256)
        b.update {
            for i in 0..<inputs { try $0.setCrosspoint(input: i, output: 5, gain: i % 3 == 0 ? 0 : -0.25) }
        }
        b.run(frames: 700, block: 7)
        // The second stretch, in blocks of 1000: the ramp (480 frames) ended in the first.
        let tail = b.recorded
        b.recorded = Array(repeating: [], count: outputs)
        b.run(frames: frames, block: 1000)
        for j in 0..<outputs where j != 5 {
            #expect(firstDifference(tail[j][...], a.recorded[j][..<700]) == nil, "\(version): output \(j) in the ramp")
            #expect(firstDifference(b.recorded[j][...], a.recorded[j][...]) == nil, "\(version): output \(j) after it")
        }
        #expect(tail[5] != Array(a.recorded[5][..<700]), "output 5 itself changes")
    }

    @Test("The versions with a fused multiply-add agree bit for bit; the baseline within rounding")
    func versionsAgree() throws {
        var rng = SplitMix64(seed: 0xA9EE)
        let model = try denseModel(40, 12, &rng)
        let rigs = Self.versions.map { Rig(model, capacity: 777, kernel: $0) }
        rigs[0].bench.fillInputs(&rng, frames: 777)
        for rig in rigs.dropFirst() {
            for i in 0..<40 { rig.bench.input(i).update(from: rigs[0].bench.input(i), count: 777) }
        }
        for rig in rigs { rig.run(frames: 777, block: 777) }
        let fused = zip(Self.versions, rigs).filter { $0.0.name != "baseline" }.map(\.1)
        for rig in fused.dropFirst() {
            #expect(rig.recorded == fused[0].recorded, "\(rig.mixer.kernel) and \(fused[0].mixer.kernel)")
        }
        // And a program runs the version it names (xp_bind): a fused one rounds differently
        // from the baseline somewhere in 40-input sums.
        for rig in fused {
            #expect(rig.recorded != rigs[0].recorded, "\(rig.mixer.kernel) rendered exactly as the baseline")
        }
        for rig in rigs.dropFirst() {
            for j in 0..<12 {
                let worst = zip(rig.recorded[j], rigs[0].recorded[j]).map { abs($0 - $1) }.max() ?? 0
                #expect(worst <= 1e-5, "\(rig.mixer.kernel) output \(j): \(worst) from the baseline")
            }
        }
    }
}
