// Presets: the documented JSON keys, exact round trips, defaults for what a hand-written
// preset leaves out, and refusals that name the key and change nothing.

import CrosspointCore
import CrosspointTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Presets")
struct PresetTests {
    /// A mixer with every kind of state set, from a seeded generator.
    func randomMixer(_ inputs: Int, _ outputs: Int, seed: UInt64) throws -> Mixer {
        var random = SplitMix64(seed: seed)
        var mixer = try Mixer(inputs: inputs, outputs: outputs,
                              inputChannels: (0..<inputs).map { "IN\($0)" }, outputChannels: (0..<outputs).map { "OUT\($0)" })
        func gain() -> Double { random.chance(0.3) ? 0 : random.unit() * 4 - 2 }
        try mixer.setMasterGain(gain())
        mixer.setMasterMute(random.chance(0.5))
        for i in 0..<inputs {
            try mixer.setInputGain(i, gain())
            try mixer.setInputMute(i, random.chance(0.2))
            for j in 0..<outputs { try mixer.setCrosspoint(input: i, output: j, gain: gain()) }
        }
        for j in 0..<outputs {
            try mixer.setOutputGain(j, gain())
            try mixer.setOutputMute(j, random.chance(0.2))
        }
        try mixer.setRamp(milliseconds: 37.5)
        return mixer
    }

    func json(_ preset: Preset) throws -> Data { try JSONEncoder().encode(preset) }

    func decode(_ text: String) throws -> Preset { try JSONDecoder().decode(Preset.self, from: Data(text.utf8)) }

    @Test("A mixer survives preset -> JSON -> preset -> mixer bit for bit", arguments: [(1, 1), (2, 1), (4, 3), (64, 64), (3, 256)])
    func roundTripIsExact(inputs: Int, outputs: Int) throws {
        let mixer = try randomMixer(inputs, outputs, seed: UInt64(inputs * 1000 + outputs))
        let decoded = try JSONDecoder().decode(Preset.self, from: json(mixer.preset))
        #expect(decoded == mixer.preset)
        #expect(try Mixer(preset: decoded) == mixer)
    }

    @Test("Gains are written as the shortest decimal of their Float")
    func gainsAreShortDecimals() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        try mixer.setCrosspoint(input: 0, output: 1, gain: 0.3)
        try mixer.setInputGain(1, -0.1)
        let preset = mixer.preset
        #expect(preset.matrix == [[1, 0.3], [0, 1]])
        #expect(preset.inputGains == [1, -0.1])
        let text = String(decoding: try json(preset), as: UTF8.self)
        #expect(text.contains("0.3") && !text.contains("0.30000001"))
    }

    @Test("The JSON keys are the documented ones")
    func keysAreDocumented() throws {
        let object = try JSONDecoder().decode([String: AnyValue].self, from: json(try Mixer(inputs: 2, outputs: 1).preset))
        #expect(Set(object.keys) == [
            "format", "version", "inputs", "outputs", "input.position", "output.position", "gain.master", "mute.master",
            "gain.in", "mute.in", "gain.out", "mute.out", "matrix", "ramp.ms",
        ])
    }

    @Test("A hand-written preset may leave out names, gains, mutes and the ramp")
    func optionalKeysTakeDefaults() throws {
        let preset = try decode(#"{ "format": "crosspoint-preset", "version": 1, "inputs": 2, "outputs": 1, "matrix": [[0.25], [0.75]] }"#)
        let mixer = try Mixer(preset: preset)
        #expect(mixer.inputChannels == ["FL", "FR"] && mixer.outputChannels == ["MONO"])
        #expect(mixer.matrix == [0.25, 0.75])
        #expect(mixer.masterGain == 1 && !mixer.masterMute)
        #expect(mixer.inputGains == [1, 1] && mixer.outputGains == [1] && mixer.inputMutes == [false, false])
        #expect(mixer.rampMilliseconds == Mixer.defaultRampMilliseconds)
    }

    @Test("format, version, inputs, outputs and matrix are required")
    func requiredKeys() throws {
        let full = #"{ "format": "crosspoint-preset", "version": 1, "inputs": 1, "outputs": 1, "matrix": [[1]] }"#
        _ = try decode(full)
        for key in ["format", "version", "inputs", "outputs", "matrix"] {
            let text = full.replacing("\"\(key)\":", with: "\"x-\(key)\":")
            #expect(throws: DecodingError.self, "without \(key)") { try decode(text) }
        }
    }

    @Test("Applying a preset sets everything but the channel names")
    func applyKeepsChannelNames() throws {
        let source = try randomMixer(2, 2, seed: 7)
        var target = try Mixer(inputs: 2, outputs: 2)
        try target.apply(source.preset)
        #expect(target.inputChannels == ["FL", "FR"])
        #expect(target.matrix == source.matrix && target.inputGains == source.inputGains && target.outputMutes == source.outputMutes)
        #expect(target.masterGain == source.masterGain && target.masterMute == source.masterMute)
        #expect(target.rampMilliseconds == source.rampMilliseconds)
        let differences = try #require(source.preset.channelNameDifferences(from: target))
        #expect(differences.contains("[IN0 IN1] in the preset, [FL FR] on the node"))
        #expect(target.preset.channelNameDifferences(from: target) == nil)
    }

    @Test("A preset of another shape is refused and changes nothing")
    func shapeMismatchIsRefused() throws {
        let preset = try Mixer(inputs: 4, outputs: 3).preset
        var mixer = try randomMixer(2, 2, seed: 3)
        let before = mixer
        expectCrosspointError(mentioning: ["4 inputs x 3 outputs", "2 x 2"]) { try mixer.apply(preset) }
        #expect(mixer == before)
    }

    @Test("Bad values are refused by the mixer's setters, naming the key, and change nothing")
    func badValuesNameTheirKey() throws {
        let good = try randomMixer(3, 2, seed: 11).preset
        var cases: [(String, [String], (inout Preset) -> Void)] = [
            ("gain.in", ["gain.in.1", "outside"], { $0.inputGains[1] = 12 }),
            ("gain.out", ["gain.out.0", "not a finite"], { $0.outputGains[0] = .infinity }),
            ("gain.master", ["gain.master"], { $0.masterGain = -11 }),
            ("matrix cell", ["matrix.2.1"], { $0.matrix[2][1] = .nan }),
            ("matrix row", ["matrix row 1", "has 3 gains"], { $0.matrix[1].append(0) }),
            ("ramp", ["ramp.ms"], { $0.rampMilliseconds = -1 }),
            ("format", ["format", "crosspoint-preset"], { $0.format = "something-else" }),
            ("version", ["version", "2"], { $0.version = 2 }),
            ("list length", ["gain.out has 1 entries", "2 outputs"], { $0.outputGains = [1] }),
            ("mute list", ["mute.in has 4 entries"], { $0.inputMutes.append(true) }),
            ("names", ["input.position has 2 entries"], { $0.inputChannels.removeLast() }),
        ]
        cases.append(("shape", ["inputs must be between 1 and 256"], { $0.inputs = 0 }))
        for (what, mentions, spoil) in cases {
            var preset = good
            spoil(&preset)
            var mixer = try randomMixer(3, 2, seed: 5)
            let before = mixer
            expectCrosspointError(mentioning: mentions) { try mixer.apply(preset) }
            #expect(mixer == before, "\(what) changed the mixer")
        }
        var badNames = good
        badNames.outputChannels = ["L", "L"]
        expectCrosspointError(mentioning: ["output.position", "appears twice"]) { _ = try Mixer(preset: badNames) }
    }
}

/// Any JSON value, to read a preset's keys without knowing their types.
private struct AnyValue: Decodable {
    init(from decoder: any Decoder) throws {}
}
