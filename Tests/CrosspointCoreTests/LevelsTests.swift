// Levels: what the render side measures (against a plain Double reference), how a reading is
// rounded, the handshake of the two banks, the leases, and the write-only key that asks for
// them.

import CrosspointCore
import CrosspointTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Buffers for `n` inputs and `m` outputs of up to `capacity` frames, and the pointer arrays a
/// tap reads (nil = unlinked).
final class LevelBench {
    let inputs: [UnsafeMutablePointer<Float>]
    let outputs: [UnsafeMutablePointer<Float>]
    let inputPointers: UnsafeMutableBufferPointer<UnsafePointer<Float>?>
    let outputPointers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>

    init(inputs n: Int, outputs m: Int, capacity: Int) {
        inputs = (0..<n).map { _ in .allocate(capacity: capacity) }
        outputs = (0..<m).map { _ in .allocate(capacity: capacity) }
        for p in inputs + outputs { p.initialize(repeating: 0, count: capacity) }
        inputPointers = .allocate(capacity: n)
        outputPointers = .allocate(capacity: m)
        for i in 0..<n { inputPointers[i] = UnsafePointer(inputs[i]) }
        for j in 0..<m { outputPointers[j] = outputs[j] }
    }

    deinit {
        for p in inputs + outputs { p.deallocate() }
        inputPointers.deallocate()
        outputPointers.deallocate()
    }

    func measure(_ tap: LevelTap, frames: Int) {
        tap.measure(frames: frames, inputs: UnsafeBufferPointer(inputPointers), outputs: UnsafeBufferPointer(outputPointers))
    }
}

/// The level of samples as a plain reference computes it: the largest magnitude and the sum
/// of squares in Double, then `Level`'s rounding.
func referenceLevel(_ samples: [Float]) -> Level {
    let peak = samples.reduce(Float(0)) { max($0, abs($1)) }
    let squares = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    return Level(peak: peak, sumOfSquares: squares, frames: samples.count)
}

func sine(decibels: Double, frequency: Double, frames: Int, phase: Double = 0, rate: Double = 48000) -> [Float] {
    let amplitude = pow(10, decibels / 20)
    return (0..<frames).map { Float(amplitude * sin(2 * .pi * frequency * Double($0) / rate + phase)) }
}

@Suite("Levels")
struct LevelsTests {
    /// A meter that has started and dropped its first bank: what is measured from here on
    /// goes into a fresh bank.
    func startedMeter(_ bench: LevelBench) -> LevelMeter {
        let meter = LevelMeter()
        meter.start()
        bench.measure(meter.tap, frames: 0)  // the render side makes the switch start asked for
        #expect(meter.collect(), "the first bank after start is collected (and dropped)")
        #expect(meter.collectedFrames == 0)
        return meter
    }

    /// What was measured since the last `read` (or `startedMeter`): collects the bank before,
    /// lets the render side switch (a block of no frames), collects the blocks, reads.
    func read(_ meter: LevelMeter, _ bench: LevelBench, inputs: Int, outputs: Int) -> LevelReading {
        meter.collect()
        _ = meter.reading(inputs: 0, outputs: 0, sequence: 0, interval: 0)
        bench.measure(meter.tap, frames: 0)
        #expect(meter.collect())
        return meter.reading(inputs: inputs, outputs: outputs, sequence: 1, interval: 33)
    }

    @Test("Peaks and RMS match a Double reference to the reading's tenth of a dB, over blocks of every size and SIMD tail",
          arguments: [1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 256, 1000, 8192])
    func peaksAndRMSMatchTheReference(frames: Int) {
        var rng = SplitMix64(seed: UInt64(frames) &* 7919)
        let bench = LevelBench(inputs: 3, outputs: 2, capacity: 8192)
        let meter = startedMeter(bench)
        var all = [[Float]](repeating: [], count: 5)
        for block in 0..<3 {
            // Different signals per channel: full-range noise, a quiet one, a lone spike
            // somewhere (last sample of a block, or in a tail), a negative peak.
            for (k, p) in (bench.inputs + bench.outputs).enumerated() {
                for n in 0..<frames {
                    p[n] = switch k {
                    case 0: rng.sample()
                    case 1: rng.sample() * 0.001
                    case 2: n == (frames - 1 - block) % frames ? 0.75 : rng.sample() * 0.1
                    case 3: n == frames / 2 ? -0.9 : rng.sample() * 0.5
                    default: Float(rng.double(in: -2...2))
                    }
                }
                all[k] += Array(UnsafeBufferPointer(start: p, count: frames))
            }
            bench.measure(meter.tap, frames: frames)
        }
        let reading = read(meter, bench, inputs: 3, outputs: 2)
        #expect(reading.frames == 3 * frames)
        for (k, level) in (reading.inputs + reading.outputs).enumerated() {
            let expected = referenceLevel(all[k])
            // The render side takes the peak as the root of the largest square (within an ulp)
            // and adds the squares in Float lanes: within a tenth, the reading's rounding.
            let peak = level.peak ?? -.infinity, expectedPeak = expected.peak ?? -.infinity
            #expect(abs(peak - expectedPeak) <= 0.1 + 1e-9, "channel \(k): peak \(peak) vs \(expectedPeak)")
            let rms = level.rms ?? -.infinity, expectedRMS = expected.rms ?? -.infinity
            #expect(abs(rms - expectedRMS) <= 0.1 + 1e-9, "channel \(k): rms \(rms) vs \(expectedRMS)")
        }
    }

    @Test("A -12 dBFS sine reads -12.0 peak and -15.0 RMS; the output at 0.5 reads -18.0 and -21.0")
    func sineReadsItsLevel() {
        let bench = LevelBench(inputs: 1, outputs: 1, capacity: 256)
        let meter = startedMeter(bench)
        let signal = sine(decibels: -12, frequency: 997, frames: 4800)
        for start in stride(from: 0, to: 4800, by: 256) {
            let count = min(256, 4800 - start)
            for n in 0..<count {
                bench.inputs[0][n] = signal[start + n]
                bench.outputs[0][n] = 0.5 * signal[start + n]
            }
            bench.measure(meter.tap, frames: count)
        }
        let reading = read(meter, bench, inputs: 1, outputs: 1)
        #expect(reading.inputs == [Level(peak: -12.0, rms: -15.0)])
        #expect(reading.outputs == [Level(peak: -18.0, rms: -21.0)])
        #expect(reading.inputs.first?.clips == false)
    }

    @Test("Rounding: full scale reads 0.0 and clips, anything below never reads 0.0; silence and non-finite samples")
    func rounding() {
        #expect(Level(peak: 1, sumOfSquares: 10, frames: 10) == Level(peak: 0.0, rms: 0.0))
        #expect(Level(peak: 1, sumOfSquares: 10, frames: 10).clips)
        #expect(Level(peak: 2, sumOfSquares: 40, frames: 10) == Level(peak: 6.0, rms: 6.0))
        let justBelow = Level(peak: 0.9999, sumOfSquares: 0.9998 * 4, frames: 4)
        #expect(justBelow.peak == -0.1 && justBelow.rms == -0.1 && !justBelow.clips)
        #expect(Level(peak: 0.5, sumOfSquares: 0.25, frames: 1).peak == -6.0)
        #expect(Level(peak: 0, sumOfSquares: 0, frames: 100) == .silence)
        #expect(Level(peak: 0.5, sumOfSquares: 1, frames: 0) == .silence, "no frames: nothing measured")
        #expect(Level(peak: .infinity, sumOfSquares: 1, frames: 1) == Level(peak: 999.9, rms: 999.9))
        #expect(Level(peak: 0.5, sumOfSquares: .nan, frames: 1) == Level(peak: 999.9, rms: 999.9))
        #expect(Level(peak: 0.5, sumOfSquares: .nan, frames: 1).clips)
        // The smallest non-zero sample is a number, not silence.
        let tiny = Level(peak: .leastNonzeroMagnitude, sumOfSquares: 1e-90, frames: 1)
        #expect(tiny.peak.map { $0 < -800 } == true && tiny.rms.map { $0 < -800 } == true)
        #expect(Level.json(-12) == "-12.0" && Level.json(0) == "0.0" && Level.json(6.04) == "6.0")
        #expect(Level.json(-0.04) == "0.0" && Level.json(-0.1) == "-0.1" && Level.json(nil) == "null")
        #expect(Level.json(.nan) == "null" && Level.json(999.9) == "999.9")
        #expect(Level.json(1e300) == "999.9" && Level.json(-1e300) == "-999.9", "clamped, never a trap")
    }

    @Test("Through the meter, a sample at full scale clips and the largest float below it does not, in the loop and in the tail",
          arguments: [5, 8, 31, 32, 40, 256])
    func fullScaleThroughTheMeter(frames: Int) {
        let bench = LevelBench(inputs: 2, outputs: 0, capacity: 256)
        let meter = startedMeter(bench)
        bench.inputs[0].update(repeating: 0.25, count: frames)
        bench.inputs[1].update(repeating: 0.25, count: frames)
        bench.inputs[0][frames - 1] = -1
        bench.inputs[1][frames / 2] = -Float(1).nextDown
        bench.measure(meter.tap, frames: frames)
        let reading = read(meter, bench, inputs: 2, outputs: 0)
        #expect(reading.inputs[0].peak == 0.0 && reading.inputs[0].clips)
        #expect(reading.inputs[1].peak == -0.1 && !reading.inputs[1].clips)
    }

    @Test("NaN and infinite samples read beyond measure, and the next reading is clean again")
    func nonFiniteSamples() {
        let bench = LevelBench(inputs: 2, outputs: 0, capacity: 64)
        let meter = startedMeter(bench)
        for n in 0..<64 { bench.inputs[0][n] = 0.25; bench.inputs[1][n] = 0.25 }
        bench.inputs[0][3] = .nan
        bench.inputs[1][40] = -.infinity
        bench.measure(meter.tap, frames: 64)
        let bad = read(meter, bench, inputs: 2, outputs: 0)
        #expect(bad.inputs == [Level(peak: 999.9, rms: 999.9), Level(peak: 999.9, rms: 999.9)])
        bench.inputs[0][3] = 0.25
        bench.inputs[1][40] = 0.25
        bench.measure(meter.tap, frames: 64)
        let clean = read(meter, bench, inputs: 2, outputs: 0)
        #expect(clean.inputs == [Level(peak: -12.0, rms: -12.0), Level(peak: -12.0, rms: -12.0)])
    }

    @Test("Unlinked ports (no buffer) read silence; ports past the reading's counts are left out")
    func unlinkedPortsAreSilent() {
        let bench = LevelBench(inputs: 3, outputs: 3, capacity: 32)
        let meter = startedMeter(bench)
        for p in bench.inputs + bench.outputs { p.update(repeating: 0.5, count: 32) }
        bench.inputPointers[1] = nil
        bench.outputPointers[2] = nil
        bench.measure(meter.tap, frames: 32)
        let reading = read(meter, bench, inputs: 3, outputs: 2)
        #expect(reading.inputs.map(\.peak) == [-6.0, nil, -6.0])
        #expect(reading.outputs.map(\.peak) == [-6.0, -6.0])
    }

    @Test("Collecting takes what the render side measured up to its last switch; a reading empties the totals; a restart drops what came before")
    func collectionFollowsTheSwitches() {
        let bench = LevelBench(inputs: 1, outputs: 0, capacity: 16)
        let meter = LevelMeter()
        #expect(!meter.tap.isWatched && !meter.isWatching)
        #expect(!meter.collect(), "not watching: nothing to collect")
        meter.start()
        #expect(meter.tap.isWatched)
        #expect(meter.isWaiting, "start asks for a switch")
        #expect(!meter.collect(), "no switch before the render side runs")
        bench.inputs[0].update(repeating: 0.5, count: 16)
        bench.measure(meter.tap, frames: 16)  // switch 1, then this block
        #expect(!meter.isWaiting)
        #expect(meter.collect() && meter.collectedFrames == 0, "the bank before switch 1 is dropped")
        #expect(meter.isWaiting)
        bench.measure(meter.tap, frames: 16)  // switch 2 (leaving the first block), then this one
        #expect(meter.collect() && meter.collectedFrames == 16)
        #expect(!meter.collect(), "no block since: the switch asked for is pending")
        bench.measure(meter.tap, frames: 16)  // switch 3 (leaving the second block)
        bench.measure(meter.tap, frames: 16)
        #expect(meter.collect() && meter.collectedFrames == 32, "collections add up")
        let first = meter.reading(inputs: 1, outputs: 0, sequence: 1, interval: 50)
        #expect(first.frames == 32 && first.inputs == [Level(peak: -6.0, rms: -6.0)])
        #expect(first.sequence == 1 && first.interval == 50)
        #expect(meter.collectedFrames == 0, "a reading empties the totals")
        let empty = meter.reading(inputs: 1, outputs: 0, sequence: 2, interval: 50)
        #expect(empty.frames == 0 && empty.inputs == [.silence], "nothing collected reads silence, frames 0")

        bench.inputs[0].update(repeating: 0.25, count: 16)
        bench.measure(meter.tap, frames: 16)  // switch 4 (leaving the two louder blocks)
        #expect(meter.collect())
        _ = meter.reading(inputs: 1, outputs: 0, sequence: 3, interval: 50)
        bench.measure(meter.tap, frames: 0)
        #expect(meter.collect())
        #expect(meter.reading(inputs: 1, outputs: 0, sequence: 4, interval: 50).inputs.first?.peak == -12.0,
                "the louder blocks of the last reading are not in this one")

        // Stopped: the render side is told not to measure. Restarted: the bank holding blocks
        // from before the stop is dropped.
        bench.inputs[0].update(repeating: 1, count: 16)
        bench.measure(meter.tap, frames: 16)
        meter.stop()
        #expect(!meter.tap.isWatched && !meter.collect())
        meter.start()
        bench.measure(meter.tap, frames: 0)
        #expect(meter.collect() && meter.collectedFrames == 0, "the bank from before the stop is dropped")
        bench.inputs[0].update(repeating: 0.125, count: 16)
        bench.measure(meter.tap, frames: 16)
        let after = read(meter, bench, inputs: 1, outputs: 0)
        #expect(after.inputs.first?.peak == -18.1 && after.frames == 16)
    }

    @Test("Leases: renewed, released, ended after their time, at most 16; the interval is the shortest, at least 33 ms")
    func leases() throws {
        var leases = LevelLeases()
        #expect(leases.interval == nil && leases.count == 0)
        try leases.apply(LevelWatch(watcher: 7, interval: 100), now: 0)
        #expect(leases.interval == 100)
        try leases.apply(LevelWatch(watcher: 8, interval: 10), now: 500)
        #expect(leases.interval == 33, "10 ms is raised to the fastest the node publishes at")
        try leases.apply(LevelWatch(watcher: 8, interval: 50), now: 1000)
        #expect(leases.interval == 50 && leases.count == 2, "a renewal replaces the watcher's request")
        leases.expire(now: LevelLeases.duration - 1)
        #expect(leases.count == 2)
        leases.expire(now: LevelLeases.duration)
        #expect(leases.count == 1 && leases.interval == 50, "watcher 7 did not renew")
        try leases.apply(LevelWatch(watcher: 8, interval: 0), now: 1500)
        #expect(leases.interval == nil && leases.count == 0, "interval 0 releases")
        try leases.apply(LevelWatch(watcher: 9, interval: 0), now: 1500)
        #expect(leases.count == 0, "releasing what is not held does nothing")

        for w in 1...LevelLeases.capacity { try leases.apply(LevelWatch(watcher: w, interval: 1000 + w), now: Int64(w)) }
        #expect(leases.count == LevelLeases.capacity)
        try leases.apply(LevelWatch(watcher: 99, interval: 2000), now: 100)
        #expect(leases.count == LevelLeases.capacity, "the table is bounded")
        #expect(leases.interval == 1002, "the lease ending first (watcher 1) made room")
        leases.expire(now: 100 + LevelLeases.duration)
        #expect(leases.count == 0)
    }

    @Test("levels.watch: a write-only key in the table (PropInfo, not Props), checked, never changing the model")
    func watchKey() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        let before = mixer
        let parameter = try Parameter(key: "levels.watch", in: mixer)
        #expect(parameter == .levelsWatch)
        #expect(parameter.kind.family.access == .writeOnly && parameter.kind.family.type == .intArray)
        #expect(Parameter.all(for: mixer).contains(.levelsWatch))
        #expect(Parameter.markdownTable().contains("| `levels.watch` | Array of Int | none (write-only) | [ watcher interval ]"))
        try mixer.set(.levelsWatch, to: .ints([12, 50]))
        #expect(mixer == before)
        #expect(try LevelWatch(.ints([12, 50])) == LevelWatch(watcher: 12, interval: 50))
        #expect(try LevelWatch(watcher: Int(Int32.max), interval: 60000).value == .ints([Int(Int32.max), 60000]))
        let bad: [(ParameterValue, String)] = [
            (.ints([1]), "two whole numbers"), (.ints([1, 2, 3]), "two whole numbers"), (.number(5), "two whole numbers"),
            (.bool(true), "two whole numbers"), (.names(["a", "b"]), "two whole numbers"),
            (.ints([0, 50]), "watcher"), (.ints([-1, 50]), "watcher"), (.ints([Int(Int32.max) + 1, 50]), "watcher"),
            (.ints([Int.min, 50]), "watcher"), (.ints([1, -1]), "interval"), (.ints([1, 60001]), "interval"),
            (.ints([1, Int.max]), "interval"),
        ]
        for (value, mention) in bad {
            let error = expectCrosspointError(mentioning: ["levels.watch", mention]) { try mixer.set(.levelsWatch, to: value) }
            guard case .invalidValue(key: "levels.watch", _)? = error else {
                Issue.record("\(value): expected invalidValue naming levels.watch, got \(String(describing: error))")
                continue
            }
        }
        #expect(mixer == before)
    }
}
