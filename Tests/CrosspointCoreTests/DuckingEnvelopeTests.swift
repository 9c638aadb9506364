// A ducking rule's gain reduction block by block (issue 31): the knee, the attack that arrives
// within its time, the hold, the release along a straight line in dB, and nothing past the aim.

import CrosspointCore
import Testing

@Suite("Ducking envelope") struct DuckingEnvelopeTests {
    /// -15 dB under a trigger above -30 dBFS; attack 10 ms, hold 200 ms, release 500 ms.
    static let rule = DuckingEnvelope.Settings(depth: -15, threshold: -30, attack: 0.010, hold: 0.200, release: 0.500)
    /// A block of 64 frames at 48 kHz.
    static let block = 64.0 / 48_000

    @Test func theKneeGrowsTheDepthOverItsRange() {
        var soft = Self.rule
        soft.knee = 10
        let envelope = DuckingEnvelope(soft)
        #expect(envelope.aim(level: -31) == 0 && envelope.aim(level: -30) == 0)
        #expect(abs(envelope.aim(level: -25) + 7.5) < 1e-9)
        #expect(envelope.aim(level: -20) == -15 && envelope.aim(level: 0) == -15)
        #expect(DuckingEnvelope(Self.rule).aim(level: -29.9) == -15)
    }

    @Test func theAttackReachesTheDepthWithinItsTimeAndNotPast() {
        var envelope = DuckingEnvelope(Self.rule)
        var time = 0.0, reached: Double?
        var previous = 0.0
        while time < 0.1 {
            let r = envelope.process(level: -6, seconds: Self.block)
            time += Self.block
            #expect(r <= previous && r >= -15)
            previous = r
            if reached == nil && r == -15 { reached = time }
        }
        #expect(reached.map { $0 <= 0.010 + Self.block } == true, "reached the depth after \(reached.map { "\($0)" } ?? "never") s")
    }

    @Test func itHoldsThenReleasesInAStraightLineOfDecibels() {
        var envelope = DuckingEnvelope(Self.rule)
        for _ in 0..<100 { _ = envelope.process(level: -6, seconds: Self.block) }
        #expect(envelope.reduction == -15)
        // The trigger stops: held at the depth for 200 ms, then back over 500 ms.
        var time = 0.0, samples: [(Double, Double)] = []
        while time < 0.8 {
            let r = envelope.process(level: -.infinity, seconds: Self.block)
            time += Self.block
            samples.append((time, r))
        }
        for (t, r) in samples {
            let expected = t <= 0.200 ? -15 : min(0, -15 + 15 * (t - 0.200) / 0.500)
            #expect(abs(r - expected) < 1e-9, "at \(t) s: \(r) dB, expected \(expected)")
        }
        #expect(samples.last?.1 == 0)
    }

    @Test func aTriggerThatComesBackDuringTheHoldKeepsTheDepth() {
        var envelope = DuckingEnvelope(Self.rule)
        for _ in 0..<50 { _ = envelope.process(level: -6, seconds: Self.block) }
        for _ in 0..<100 { _ = envelope.process(level: -60, seconds: Self.block) }  // 133 ms: within the hold
        #expect(envelope.reduction == -15)
        _ = envelope.process(level: -6, seconds: Self.block)
        for _ in 0..<120 { _ = envelope.process(level: -60, seconds: Self.block) }  // 160 ms: the hold began again
        #expect(envelope.reduction == -15)
        // Silence in the trigger (no level at all) releases as a quiet one does.
        for _ in 0..<600 { _ = envelope.process(level: .nan, seconds: Self.block) }
        #expect(envelope.reduction == 0)
    }
}

import CAllocationCounter

extension DuckingEnvelopeTests {
    /// What the render thread will call, once per rule and block: no allocation, no free.
    @Test func aBlockAllocatesNothing() {
        var envelope = DuckingEnvelope(Self.rule)
        var levels: [Double] = []
        for k in 0..<2_000 { levels.append(k % 300 < 100 ? -6 : k % 300 < 200 ? -.infinity : .nan) }
        var sum = 0.0
        let block = Self.block  // its lazy first reading outside the window
        levels.withUnsafeBufferPointer { levels in
            func run() { for level in levels { sum += envelope.process(level: level, seconds: block) } }
            run()  // once outside the window: the runtime makes the loop's type metadata on first use
            crosspoint_alloc_counting_begin()
            run()
            let allocations = crosspoint_alloc_counting_end()
            #expect(allocations == 0 && crosspoint_alloc_counting_frees() == 0)
        }
        #expect(sum < 0)
    }
}
