// The curve a scene's recall or morph moves a gain along (issue 31): exact ends, monotonic,
// equal steps of dB between two non-zero gains, equal power where a gain fades in or out.

import CrosspointCore
import CrosspointTestSupport
import Foundation
import Testing

@Suite("Gain curve") struct GainCurveTests {
    @Test func theEndsAreExactlyTheTwoValues() {
        for (a, b) in [(Float(0.25), Float(1)), (1, 0), (0, 0.5), (0.7, -0.3), (-2, -0.001), (3.98, 3.98)] {
            #expect(GainCurve.gain(from: a, to: b, at: 0) == a)
            #expect(GainCurve.gain(from: a, to: b, at: -1) == a)
            #expect(GainCurve.gain(from: a, to: b, at: 1) == b)
            #expect(GainCurve.gain(from: a, to: b, at: 2) == b)
        }
    }

    @Test func betweenTwoGainsItMovesInEqualStepsOfDecibels() {
        // -40 dB to 0 dB: -30, -20, -10 dB at a quarter, a half, three quarters of the way.
        let a = Float(Gain.linear(decibels: -40)), b = Float(1)
        for (t, dB) in [(0.25, -30.0), (0.5, -20.0), (0.75, -10.0)] {
            let g = GainCurve.gain(from: a, to: b, at: t)
            #expect(abs(Gain.decibels(Double(g)) - dB) < 1e-3, "at \(t): \(Gain.decibels(Double(g))) dB")
        }
        // Downwards alike, and on the negative side (polarity kept).
        #expect(abs(GainCurve.gain(from: 1, to: 0.01, at: 0.5) - 0.1) < 1e-6)
        #expect(abs(GainCurve.gain(from: -1, to: -0.01, at: 0.5) + 0.1) < 1e-6)
    }

    @Test func aGainFadingInOrOutKeepsEqualPower() {
        // In and out at once (a cross-point of one scene, another of the other): their powers
        // add up to the full one all the way.
        for step in 0...100 {
            let t = Double(step) / 100
            let fadingIn = GainCurve.gain(from: 0, to: 0.8, at: t), fadingOut = GainCurve.gain(from: 0.8, to: 0, at: t)
            #expect(abs(fadingIn * fadingIn + fadingOut * fadingOut - 0.64) < 1e-5, "at \(t)")
        }
        #expect(abs(GainCurve.gain(from: 0, to: 1, at: 0.5) - Float(0.5).squareRoot()) < 1e-6)
    }

    @Test func aFlippedPolarityPassesThroughZeroHalfWay() {
        #expect(abs(GainCurve.gain(from: 0.5, to: -0.5, at: 0.5)) < 1e-7)
        #expect(GainCurve.gain(from: 0.5, to: -0.5, at: 0.25) > 0)
        #expect(GainCurve.gain(from: 0.5, to: -0.5, at: 0.75) < 0)
    }

    @Test func itIsMonotonicAndNeverPastEitherEnd() {
        var random = SplitMix64(seed: 31)
        let values: [Float] = [0, 1e-4, 0.001, 0.1, 0.5, 1, 2, 3.98, -0.5, -1, -3.98]
        for _ in 0..<300 {
            let a = values[Int(random.next() % UInt64(values.count))], b = values[Int(random.next() % UInt64(values.count))]
            var previous = a
            for step in 1...1000 {
                let g = GainCurve.gain(from: a, to: b, at: Double(step) / 1000)
                #expect(g >= min(a, b) && g <= max(a, b), "\(a) -> \(b) at step \(step): \(g)")
                #expect(b >= a ? g >= previous : g <= previous, "\(a) -> \(b) turned back at step \(step): \(previous) then \(g)")
                previous = g
            }
            #expect(previous == b)
        }
    }
}
