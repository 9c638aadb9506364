// Scenes in the model (issue 31): what a scene holds (the table's scene role), a morph's ends
// exact, mutes that fade through their gain, delays half-way, recall safes, and a scene of
// another shape applied by channel name.

import CrosspointCore
import Foundation
import Testing

@Suite("Scenes") struct SceneTests {
    /// A 2x2 stereo mixer, straight through.
    static func stereo() throws -> Mixer {
        var m = try Mixer(inputs: 2, outputs: 2, inputChannels: ["FL", "FR"], outputChannels: ["FL", "FR"])
        try m.setMatrix(rows: [[1, 0], [0, 1]])
        return m
    }

    @Test func aSceneHoldsTheMixNotTheShapeTheDevicesOrTheRamp() throws {
        var m = try Self.stereo()
        try m.setRamp(milliseconds: 40)
        let scene = Scene(name: "a", of: m)
        let keys = scene.values.map(\.key)
        #expect(keys.contains("gain.master") && keys.contains("gain.in.FL") && keys.contains("mute.out.FR")
                && keys.contains("matrix.FR.FL") && keys.contains("delay.out.FL"), "\(keys)")
        #expect(!keys.contains { $0.hasPrefix("ramp") || $0.hasPrefix("inputs") || $0.hasPrefix("devices") || $0.hasPrefix("midi") }, "\(keys)")
        #expect(keys.count == 1 + 2 + 2 + 4 + 2 + 2 + 2)
    }

    @Test func aMorphEndsExactlyOnEachSceneAndMovesGainsAlongTheCurve() throws {
        let m = try Self.stereo()
        var other = m
        try other.setInputGain(0, 0.01)
        try other.setCrosspoint(input: 0, output: 1, gain: 0.5)  // fades in
        try other.setCrosspoint(input: 1, output: 1, gain: 0)    // fades out
        try other.setOutputDelay(1, milliseconds: 10)
        let a = Scene(name: "a", of: m), b = Scene(name: "b", of: other)
        let atB = try m.morphed(from: a, to: b, at: 1), atA = try other.morphed(from: a, to: b, at: 0)
        #expect(Scene(name: "b", of: atB) == b)
        #expect(Scene(name: "a", of: atA) == a)
        let half = try m.morphed(from: a, to: b, at: 0.5)
        #expect(abs(Double(half.inputGains[0]) - 0.1) < 1e-6)                      // -20 dB, half-way in dB
        #expect(abs(Double(half.crosspoint(input: 0, output: 1)) - 0.5 * 0.5.squareRoot()) < 1e-6)  // equal power in
        #expect(abs(Double(half.crosspoint(input: 1, output: 1)) - 0.5.squareRoot()) < 1e-6)        // and out
        let before = try m.morphed(from: a, to: b, at: 0.49)
        #expect(half.outputDelays[1] == 10 && before.outputDelays[1] == 0)
    }

    @Test func aMuteFadesThroughItsGainAndIsSetAtTheEnd() throws {
        let m = try Self.stereo()
        var muted = m
        try muted.setOutputMute(0, true)
        muted.setMasterMute(true)
        let open = Scene(name: "open", of: m), closed = Scene(name: "closed", of: muted)
        let quarter = try m.morphed(from: open, to: closed, at: 0.25)
        #expect(!quarter.outputMutes[0] && abs(Double(quarter.outputGains[0]) - cos(0.25 * .pi / 2)) < 1e-6)
        #expect(!quarter.masterMute && abs(Double(quarter.masterGain) - cos(0.25 * .pi / 2)) < 1e-6)
        let end = try m.morphed(from: open, to: closed, at: 1)
        #expect(end.outputMutes[0] && end.outputGains[0] == 1 && end.masterMute && end.masterGain == 1)
        // And back: unmuted at once, the gain rising from zero.
        let back = try muted.morphed(from: closed, to: open, at: 0.25)
        #expect(!back.outputMutes[0] && abs(Double(back.outputGains[0]) - sin(0.25 * .pi / 2)) < 1e-6)
        // Muted on both sides: it stays muted all the way.
        var quieter = muted
        try quieter.setOutputGain(0, 0.5)
        let both = try muted.morphed(from: closed, to: Scene(name: "q", of: quieter), at: 0.5)
        #expect(both.outputMutes[0])
    }

    @Test func recallSafesAreLeftAsTheNodeHasThem() throws {
        var m = try Self.stereo()
        let a = Scene(name: "a", of: m)
        var other = m
        try other.setInputGain(0, 0.25)
        try other.setMasterGain(0.5)
        let b = Scene(name: "b", of: other)
        try m.setInputGain(0, 0.8)  // the presenter's microphone, moved since
        let recalled = try m.morphed(from: a, to: b, at: 1, keeping: [.inputGain(0), .masterGain])
        #expect(recalled.inputGains[0] == 0.8 && recalled.masterGain == 1)
    }

    @Test func aSceneOfAnotherShapeAppliesWhereTheChannelNamesMatch() throws {
        var wide = try Mixer(inputs: 3, outputs: 2, inputChannels: ["FL", "FR", "MIC"], outputChannels: ["FL", "FR"])
        try wide.setInputGain(2, 0.5)
        try wide.setInputGain(1, 0.25)
        let scene = Scene(name: "wide", of: wide)
        let m = try Self.stereo()
        let resolved = scene.resolved(on: m)
        #expect(resolved.unmatched.contains("gain.in.MIC") && resolved.unmatched.contains("matrix.MIC.FL"), "\(resolved.unmatched)")
        let recalled = try m.morphed(from: Scene(name: "now", of: m), to: scene, at: 1)
        #expect(recalled.inputGains == [1, 0.25])
    }
}
