// Presets: the documented JSON keys, exact round trips, defaults for what a hand-written
// preset leaves out, and refusals that name the key and change nothing. Every key the
// parameter table carries goes through both serialisations (JSONValue, Codable) with no
// code of its own, and a file written before the table drove presets loads and is written
// back byte for byte.

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
        #expect(preset.numbers(.crosspoint) == [1, 0.3, 0, 1])
        #expect(preset.numbers(.inputGain) == [1, -0.1])
        let text = String(decoding: try json(preset), as: UTF8.self)
        #expect(text.contains("0.3") && !text.contains("0.30000001"))
    }

    @Test("The JSON keys are the documented ones, and those the table says a preset always writes")
    func keysAreDocumented() throws {
        let object = try JSONDecoder().decode([String: AnyValue].self, from: json(try Mixer(inputs: 2, outputs: 1).preset))
        #expect(Set(object.keys).isSuperset(of: [
            "format", "version", "inputs", "outputs", "input.position", "output.position", "gain.master", "mute.master",
            "gain.in", "mute.in", "gain.out", "mute.out", "matrix", "ramp.ms",
        ]))
        let always = ParameterKind.allCases.filter { [.shape, .required, .always].contains($0.family.carried) }.map(\.family.presetKey)
        #expect(Set(object.keys) == Set(["format", "version", Preset.masterMuteKey] + always))
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
        let full: [(String, JSONValue)] = [("format", .string("crosspoint-preset")), ("version", .number(1)), ("inputs", .number(1)),
                                           ("outputs", .number(1)), ("matrix", .array([.array([.number(1)])]))]
        _ = try decode(JSONValue.object(full).text)
        for key in full.map(\.0) {
            let without = JSONValue.object(full.filter { $0.0 != key })
            expectCrosspointError(mentioning: [key, "is missing from the preset"]) { _ = try Preset(json: without) }
            #expect(throws: CrosspointError.self, "Codable, without \(key)") { try decode(without.text) }
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
            ("gain.in", ["gain.in.1", "outside"], { $0.set(.inputGain, 1, to: .number(12)) }),
            ("gain.out", ["gain.out.0", "not a finite"], { $0.set(.outputGain, 0, to: .number(.infinity)) }),
            ("gain.master", ["gain.master"], { $0.set(.masterGain, to: .number(-11)) }),
            ("matrix cell", ["matrix.2.1"], { $0.set(.crosspoint, 2, 1, to: .number(.nan)) }),
            ("matrix row", ["matrix row 1 has 3 entries", "2 outputs"], {
                $0.values[.crosspoint] = .list([.numbers([1, 0]), .numbers([0, 1, 0]), .numbers([0, 0])])
            }),
            ("ramp", ["ramp.ms"], { $0.set(.ramp, to: .number(-1)) }),
            ("mute type", ["mute.in.0", "true or false"], { $0.set(.inputMute, 0, to: .names(["yes"])) }),
            ("format", ["format", "crosspoint-preset"], { $0.format = "something-else" }),
            ("version", ["version", "2"], { $0.version = 2 }),
            ("list length", ["gain.out has 1 entry but", "2 outputs"], { $0.values[.outputGain] = .numbers([1]) }),
            ("mute list", ["mute.in has 4 entries"], { $0.values[.inputMute] = .list(Array(repeating: .value(.bool(false)), count: 4)) }),
            ("one value", ["gain.master is a list"], { $0.values[.masterGain] = .numbers([1]) }),
            ("names", ["input.position has 2 entries"], { $0.inputChannels.removeLast() }),
            ("required", ["matrix", "missing"], { $0.values[.crosspoint] = nil }),
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

// MARK: - Every key of the table, with no code of its own

@Suite("Presets from the parameter table")
struct PresetTableTests {
    /// A mixer with every key the table carries away from its default: each number and bool
    /// of every concrete key set through the table (`Mixer.set`), from a seeded generator,
    /// within the key's range; the lists of text (MIDI mappings, devices, targets) set here,
    /// their texts being checked by their own parsers.
    /// (The ducking rules, too.)
    static func everyKeySet(seed: UInt64) throws -> Mixer {
        var random = SplitMix64(seed: seed)
        var mixer = try Mixer(inputs: 3, outputs: 4, inputChannels: ["A", "B", "C"], outputChannels: ["W", "X", "Y", "Z"])
        mixer.setMasterMute(true)
        try mixer.set(Parameter(.midiMap), to: .names(["cc 1 7 gain.in.0", "note 2 60 mute.out.X momentary"]))
        try mixer.set(Parameter(.devices), to: .names(["sink game position=FL,FR description=Game"]))
        try mixer.set(Parameter(.targets), to: .names(["default outputs=W,X"]))
        try mixer.set(Parameter(.ducking), to: .names(["A lowers=B,out:W depth=-15 release=1s"]))
        try mixer.set(Parameter(.scenes), to: .names(["show in=A,B out=W gain.in.A=0.5 matrix.B.W=0.25 mute.out.W=true",
                                                       "soundcheck in=A,B out=W mute delay.out.W=20"]))
        try mixer.set(Parameter(.sceneSafe), to: .names(["gain.in.C", "gain.master"]))
        try mixer.set(Parameter(.morphScenes), to: .names(["show", "soundcheck"]))
        for p in Parameter.all(for: mixer) where ![.no, .shape].contains(p.kind.family.carried) {
            let family = p.kind.family
            switch family.type {
            case .bool: try mixer.set(p, to: .bool(family.defaultValue == 0))
            case .float, .int:
                let (low, high) = (family.range.lowerBound, family.range.upperBound)
                var value = low + (high - low) * random.unit()
                if family.type == .int { value = value.rounded() }
                if value == family.defaultValue { value = low == value ? high : low }
                try mixer.set(p, to: .number(value))
            default: continue
            }
        }
        return mixer
    }

    @Test("Every key the table carries is written, and comes back the same through JSONValue and through Codable",
          arguments: [1, 2, 3] as [UInt64])
    func everyKeyRoundTrips(seed: UInt64) throws {
        let mixer = try PresetTableTests.everyKeySet(seed: seed)
        let preset = mixer.preset
        for kind in ParameterKind.allCases {
            let family = kind.family
            switch family.carried {
            case .no, .shape: #expect(preset.values[kind] == nil, "\(family.pattern) is not a preset's")
            default: #expect(preset.values[kind] != nil, "\(family.pattern) is in the preset")
            }
        }
        let json = preset.json
        guard case let .object(members) = json else { Issue.record("not an object"); return }
        #expect(members.map(\.0) == Preset.keys, "every key, in the documented order")

        // JSONValue: the node's state file.
        let read = try Preset(json: json)
        #expect(read == preset)
        #expect(try Mixer(preset: read) == mixer)
        // Codable: the command line's `save` and `load`.
        let decoded = try JSONDecoder().decode(Preset.self, from: JSONEncoder().encode(preset))
        #expect(decoded == preset)
        #expect(try Mixer(preset: decoded) == mixer)
        // Key by key, through the table.
        let back = try Mixer(preset: decoded)
        for p in Parameter.all(for: mixer) where p.kind.family.access == .readWrite {
            #expect(back.value(of: p) == mixer.value(of: p), "\(p.key)")
        }
    }

    @Test("A key a preset leaves out is its default, or left as it is when the table says so")
    func absentKeys() throws {
        let set = try PresetTableTests.everyKeySet(seed: 9)
        for kind in ParameterKind.allCases where ![.no, .shape, .required].contains(kind.family.carried) {
            var preset = set.preset
            preset.values[kind] = nil
            var mixer = set
            try mixer.apply(preset)
            for p in Parameter.all(of: kind, for: mixer) {
                if case .leftAlone = kind.family.carried {
                    #expect(mixer.value(of: p) == set.value(of: p), "\(p.key) is left as it was")
                } else {
                    #expect(mixer.value(of: p) == kind.family.defaultParameterValue, "\(p.key) is its default")
                }
            }
        }
    }

    @Test("A preset written before loads as it was, and is written back byte for byte")
    func earlierFilesLoad() throws {
        let preset = try JSONDecoder().decode(Preset.self, from: Data(EarlierFiles.preset.utf8))
        let mixer = try Mixer(preset: preset)
        #expect(mixer.inputChannels == ["FL", "FR", "game_FL", "game_FR"] && mixer.outputChannels == ["L", "R", "SUB"])
        #expect(mixer.masterGain == 0.8 && mixer.masterMute)
        #expect(mixer.inputGains == [0.3, -0.1, 1, 1] && mixer.inputMutes == [false, true, false, false])
        #expect(mixer.outputGains == [1, 1, 0.5011872] && mixer.outputMutes == [true, false, false])
        #expect(mixer.outputDelays == [0, 0, 12.345])
        #expect(mixer.crosspoint(input: 1, output: 2) == -0.70794576 && mixer.crosspoint(input: 0, output: 1) == 0.3)
        #expect(mixer.rampMilliseconds == 37.5)
        #expect(mixer.midi.ports && mixer.midi.texts == ["cc 1 7 gain.in.0", "note 1 60 mute.out.L momentary"])
        #expect(mixer.devices.map(\.text) == ["sink game position=FL,FR channels=game_FL,game_FR description=Game"])
        #expect(mixer.targets.map(\.text) == ["default outputs=L,R"])
        // Written back: the same bytes, but for the keys of the table added since (written too).
        var written = mixer.preset
        written.values = written.values.filter { kind, _ in EarlierFiles.preset.contains("\"\(kind.family.presetKey)\":") }
        #expect(written.json.text == EarlierFiles.preset)
    }
}

/// Any JSON value, to read a preset's keys without knowing their types.
private struct AnyValue: Decodable {
    init(from decoder: any Decoder) throws {}
}
