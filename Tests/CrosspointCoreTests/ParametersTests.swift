// The parameter table: keys, parsing them (indices or channel names), setting and reading
// values of every family, and the Markdown table made from it.

import CrosspointCore
import Testing

@Suite("Parameters")
struct ParametersTests {
    @Test("Numeric keys parse to their parameters")
    func numericKeysParse() throws {
        let mixer = try makeMixer(3, 4)
        let cases: [(String, Parameter)] = [
            ("gain.master", .masterGain),
            ("gain.in.2", .inputGain(2)),
            ("gain.out.3", .outputGain(3)),
            ("matrix.2.3", .crosspoint(input: 2, output: 3)),
            ("matrix.0.0", .crosspoint(input: 0, output: 0)),
            ("mute.in.1", .inputMute(1)),
            ("mute.out.0", .outputMute(0)),
            ("channel-map", .channelMap),
            ("ramp.ms", .ramp),
        ]
        for (key, parameter) in cases {
            #expect(try Parameter(key: key, in: mixer) == parameter, "\(key)")
            #expect(parameter.key == key)
        }
    }

    @Test("Channel-name keys parse, case-insensitively")
    func channelNameKeysParse() throws {
        let stereoToMono = try makeMixer(2, 1)
        #expect(try Parameter(key: "matrix.FL.MONO", in: stereoToMono) == .crosspoint(input: 0, output: 0))
        #expect(try Parameter(key: "matrix.FR.MONO", in: stereoToMono) == .crosspoint(input: 1, output: 0))
        #expect(try Parameter(key: "matrix.fr.mono", in: stereoToMono) == .crosspoint(input: 1, output: 0))
        #expect(try Parameter(key: "matrix.Fl.Mono", in: stereoToMono) == .crosspoint(input: 0, output: 0))
        #expect(try Parameter(key: "matrix.FR.0", in: stereoToMono) == .crosspoint(input: 1, output: 0))
        #expect(try Parameter(key: "gain.in.FR", in: stereoToMono) == .inputGain(1))
        #expect(try Parameter(key: "mute.in.fl", in: stereoToMono) == .inputMute(0))
        #expect(try Parameter(key: "gain.out.MONO", in: stereoToMono) == .outputGain(0))
        #expect(try Parameter(key: "mute.out.mono", in: stereoToMono) == .outputMute(0))

        let wide = try makeMixer(2, 4)
        #expect(try Parameter(key: "gain.out.AUX3", in: wide) == .outputGain(3))
        #expect(try Parameter(key: "gain.out.aux3", in: wide) == .outputGain(3))
        #expect(try Parameter(key: "matrix.FR.AUX2", in: wide) == .crosspoint(input: 1, output: 2))
        #expect(try Parameter(key: "mute.out.Aux0", in: wide) == .outputMute(0))

        let named = try Mixer(inputs: 3, outputs: 2, inputChannels: ["FL", "FR", "LFE"], outputChannels: ["FL", "FR"])
        #expect(try Parameter(key: "matrix.LFE.FR", in: named) == .crosspoint(input: 2, output: 1))
        #expect(try Parameter(key: "matrix.lfe.fl", in: named) == .crosspoint(input: 2, output: 0))
    }

    @Test("Unknown keys throw unknownKey naming the key", arguments: [
        "", "gain", "gain.master.0", "gain.middle", "gain.in", "gain.in.0.1", "matrix", "matrix.0",
        "matrix.0.0.0", "mute", "mute.master", "mute.in", "volume", "ramp", "ramp.s", "ramp.ms.0",
        "channel-map.0", "channelmap", ".gain.master",
    ])
    func unknownKeysThrow(key: String) throws {
        let mixer = try makeMixer(2, 2)
        let error = expectCrosspointError(mentioning: ["'\(key)'"]) { _ = try Parameter(key: key, in: mixer) }
        #expect(error == .unknownKey(key))
    }

    @Test("Keys with a bad index or channel name throw invalidValue naming the key and the token")
    func keysWithBadIndicesThrow() throws {
        let mixer = try makeMixer(2, 4)
        let cases: [(String, [String])] = [
            ("matrix.2.0", ["matrix.2.0", "input index 2", "out of range"]),
            ("matrix.0.4", ["matrix.0.4", "output index 4"]),
            ("matrix.-1.0", ["matrix.-1.0", "input index -1"]),
            ("gain.in.9", ["gain.in.9", "input index 9"]),
            ("gain.out.AUX4", ["gain.out.AUX4", "'AUX4'"]),
            ("mute.in.LFE", ["mute.in.LFE", "'LFE'"]),
            ("mute.out.MONO", ["mute.out.MONO", "'MONO'"]),
            ("matrix.FL.FX", ["matrix.FL.FX", "output", "'FX'"]),
            ("gain.in.", ["gain.in.", "''"]),
            ("matrix..0", ["matrix..0", "input", "''"]),
        ]
        for (key, mentions) in cases {
            let error = expectCrosspointError(mentioning: mentions) { _ = try Parameter(key: key, in: mixer) }
            guard case let .invalidValue(k, _)? = error else {
                Issue.record("\(key): expected invalidValue, got \(String(describing: error))")
                continue
            }
            #expect(k == key)
        }
    }

    @Test("Every key of a mixer parses back to its parameter", arguments: [(1, 1), (2, 1), (1, 2), (2, 2), (3, 5), (16, 16)])
    func everyKeyRoundTrips(inputs: Int, outputs: Int) throws {
        let mixer = try makeMixer(inputs, outputs)
        let all = Parameter.all(for: mixer)
        #expect(all.count == 1 + 2 * inputs + 3 * outputs + inputs * outputs + 18)
        #expect(Set(all).count == all.count, "no key twice")
        #expect(Set(all.map(\.key)).count == all.count, "no key string twice")
        for parameter in all {
            #expect(try Parameter(key: parameter.key, in: mixer) == parameter, "\(parameter.key)")
        }
        // Also by channel name, where the key has indices.
        for i in 0..<inputs {
            #expect(try Parameter(key: "gain.in.\(mixer.inputChannels[i])", in: mixer) == .inputGain(i))
            for j in 0..<outputs {
                let key = "matrix.\(mixer.inputChannels[i]).\(mixer.outputChannels[j])"
                #expect(try Parameter(key: key, in: mixer) == .crosspoint(input: i, output: j))
            }
        }
    }

    @Test("Parameters come in table order, each key matching its family's pattern")
    func keysFollowTheTable() throws {
        var mixer = try makeMixer(2, 3)
        try mixer.setDucking(["0 lowers=1", "1 lowers=out:2"])
        let all = Parameter.all(for: mixer)
        var lastFamily = -1
        for parameter in all {
            guard let index = ParameterKind.allCases.firstIndex(of: parameter.kind) else {
                Issue.record("\(parameter.key): kind not in the table")
                continue
            }
            #expect(index >= lastFamily, "\(parameter.key) out of table order")
            lastFamily = index
            // The keys as the README spells them, written out here independently of the patterns.
            let (i, j, r) = (parameter.input, parameter.output, parameter.rule)
            let expected = switch parameter.kind {
            case .masterGain: "gain.master"
            case .inputGain: "gain.in.\(i)"
            case .outputGain: "gain.out.\(j)"
            case .crosspoint: "matrix.\(i).\(j)"
            case .inputMute: "mute.in.\(i)"
            case .outputMute: "mute.out.\(j)"
            case .outputDelay: "delay.out.\(j)"
            case .channelMap: "channel-map"
            case .ramp: "ramp.ms"
            case .inputCount: "inputs"
            case .outputCount: "outputs"
            case .inputPositions: "input.position"
            case .outputPositions: "output.position"
            case .midiPorts: "midi"
            case .midiMap: "midi.map"
            case .midiLearn: "midi.learn"
            case .devices: "devices"
            case .targets: "targets"
            case .ducking: "duck"
            case .duckDepth: "duck.depth.\(r)"
            case .duckOn: "duck.on.\(r)"
            case .scenes: "scenes"
            case .sceneSafe: "scene.safe"
            case .morphScenes: "scene.morph.between"
            case .morph: "scene.morph"
            case .sceneRecall: "scene.recall"
            case .levelsWatch: "levels.watch"
            }
            #expect(parameter.key == expected)
            #expect(try Parameter(key: expected, in: mixer) == parameter, "\(expected) parses back")
        }
        #expect(all.count == 1 + 2 + 3 + 2 * 3 + 2 + 3 + 3 + 18 + 2 * 2)
        #expect(lastFamily == Parameter.families.count - 1, "every family appears")
    }

    @Test("Each family has the right type, default and range")
    func familiesDescribeThemselves() {
        let byPattern = Dictionary(uniqueKeysWithValues: Parameter.families.map { ($0.pattern, $0) })
        #expect(Parameter.families.count == 27)
        #expect(byPattern["duck.depth.<rule>"]?.unit == .decibels && byPattern["duck.depth.<rule>"]?.carried == .no
                && byPattern["duck.depth.<rule>"]?.midiMappable == true && byPattern["duck.depth.<rule>"]?.scene == .no)
        #expect(byPattern["duck.on.<rule>"]?.type == .bool && byPattern["duck.on.<rule>"]?.defaultValue == 1)
        #expect(byPattern["scene.morph"]?.unit == .fraction && byPattern["scene.morph"]?.carried == .no && byPattern["scene.morph"]?.midiMappable == true)
        #expect(byPattern["scene.recall"]?.access == .writeOnly && byPattern["scenes"]?.midiMappable == false)
        #expect(byPattern["duck"]?.type == .names && byPattern["duck"]?.defaultNote == "none")
        #expect(byPattern["midi"]?.type == .bool && byPattern["midi"]?.defaultValue == 0)
        #expect(byPattern["midi.map"]?.type == .names && byPattern["midi.map"]?.defaultNote == "none")
        #expect(byPattern["inputs"]?.type == .int && byPattern["outputs"]?.range == 1...256)
        #expect(byPattern["input.position"]?.type == .names && byPattern["output.position"]?.type == .names)
        #expect(byPattern["gain.master"]?.type == .float)
        #expect(byPattern["gain.master"]?.defaultValue == 1)
        #expect(byPattern["gain.master"]?.range == -10...10)
        #expect(byPattern["gain.in.<in>"]?.defaultValue == 1)
        #expect(byPattern["gain.out.<out>"]?.defaultValue == 1)
        #expect(byPattern["matrix.<in>.<out>"]?.type == .float)
        #expect(byPattern["matrix.<in>.<out>"]?.range == Mixer.gainRange)
        #expect(byPattern["mute.in.<in>"]?.type == .bool)
        #expect(byPattern["mute.out.<out>"]?.type == .bool)
        #expect(byPattern["mute.out.<out>"]?.defaultValue == 0)
        #expect(byPattern["channel-map"]?.type == .intArray)
        #expect(byPattern["ramp.ms"]?.defaultValue == 10)
        #expect(byPattern["ramp.ms"]?.range == 0...1000)
    }

    @Test("Setting and reading every family through the table")
    func setAndReadEveryFamily() throws {
        var mixer = try makeMixer(2, 3)
        try mixer.set(.masterGain, to: .number(0.5))
        #expect(mixer.masterGain == 0.5)
        #expect(mixer.value(of: .masterGain) == .number(0.5))

        try mixer.set(.inputGain(1), to: .number(-2))
        #expect(mixer.inputGains == [1, -2])
        #expect(mixer.value(of: .inputGain(1)) == .number(-2))
        #expect(mixer.value(of: .inputGain(0)) == .number(1))

        try mixer.set(.outputGain(2), to: .number(0.25))
        #expect(mixer.outputGains == [1, 1, 0.25])
        #expect(mixer.value(of: .outputGain(2)) == .number(0.25))

        try mixer.set(.crosspoint(input: 1, output: 2), to: .number(-0.75))
        #expect(mixer.crosspoint(input: 1, output: 2) == -0.75)
        #expect(mixer.value(of: .crosspoint(input: 1, output: 2)) == .number(-0.75))
        #expect(mixer.value(of: .crosspoint(input: 0, output: 0)) == .number(1))

        try mixer.set(.inputMute(0), to: .bool(true))
        #expect(mixer.inputMutes == [true, false])
        #expect(mixer.value(of: .inputMute(0)) == .bool(true))
        try mixer.set(.inputMute(0), to: .number(0))
        #expect(mixer.value(of: .inputMute(0)) == .bool(false))
        try mixer.set(.inputMute(1), to: .number(1))
        #expect(mixer.value(of: .inputMute(1)) == .bool(true))

        try mixer.set(.outputMute(2), to: .number(1))
        #expect(mixer.outputMutes == [false, false, true])
        #expect(mixer.value(of: .outputMute(2)) == .bool(true))
        try mixer.set(.outputMute(2), to: .bool(false))
        #expect(mixer.value(of: .outputMute(2)) == .bool(false))

        // A matrix that is not a routing reads as an empty map.
        #expect(mixer.value(of: .channelMap) == .ints([]))
        try mixer.set(.channelMap, to: .ints([1, -1, 0]))
        #expect(mixer.matrix == [0, 0, 1, 1, 0, 0])
        #expect(mixer.value(of: .channelMap) == .ints([1, -1, 0]))

        try mixer.set(.ramp, to: .number(25))
        #expect(mixer.rampMilliseconds == 25)
        #expect(mixer.value(of: .ramp) == .number(25))

        // Every readable key reads back as what a set with that value leaves (a write-only
        // key, levels.watch, has no value to read back: LevelsTests covers it).
        for parameter in Parameter.all(for: mixer) where parameter.kind.family.access == .readWrite {
            var copy = mixer
            try copy.set(parameter, to: mixer.value(of: parameter))
            if parameter != .channelMap || mixer.channelMap != nil {
                #expect(copy == mixer, "\(parameter.key) did not round-trip")
            }
        }
    }

    @Test("Setting by key string drives the model")
    func setByKeyString() throws {
        var mixer = try makeMixer(2, 1)
        try mixer.set(Parameter(key: "matrix.FR.MONO", in: mixer), to: .number(1))
        try mixer.set(Parameter(key: "gain.in.fl", in: mixer), to: .number(0))
        #expect(mixer.matrix == [0.5, 1])
        #expect(mixer.inputGains == [0, 1])
    }

    @Test("Values of the wrong type throw invalidValue naming the key and the value; nothing changes")
    func wrongValueTypesThrow() throws {
        var mixer = try makeMixer(2, 2)
        let before = mixer
        let cases: [(Parameter, ParameterValue, [String])] = [
            (.masterGain, .bool(true), ["gain.master", "number", "true"]),
            (.inputGain(0), .ints([1]), ["gain.in.0", "number", "[1]"]),
            (.outputGain(1), .bool(false), ["gain.out.1", "number", "false"]),
            (.crosspoint(input: 1, output: 0), .ints([0, 1]), ["matrix.1.0", "number", "[0,1]"]),
            (.ramp, .bool(true), ["ramp.ms", "number"]),
            (.inputMute(0), .number(0.5), ["mute.in.0", "true or false", "0.5"]),
            (.outputMute(1), .number(2), ["mute.out.1", "true or false", "2.0"]),
            (.outputMute(0), .number(-1), ["mute.out.0", "-1.0"]),
            (.inputMute(1), .ints([1]), ["mute.in.1", "true or false", "[1]"]),
            (.channelMap, .number(1), ["channel-map", "array of integers", "1.0"]),
            (.channelMap, .bool(true), ["channel-map", "array of integers", "true"]),
        ]
        for (parameter, value, mentions) in cases {
            let error = expectCrosspointError(mentioning: mentions) { try mixer.set(parameter, to: value) }
            guard case let .invalidValue(key, _)? = error else {
                Issue.record("\(parameter.key) = \(value): expected invalidValue, got \(String(describing: error))")
                continue
            }
            #expect(key == parameter.key)
            #expect(mixer == before)
        }
    }

    @Test("Bad values through the table throw the setter's error; nothing changes")
    func badValuesThroughTheTableThrow() throws {
        var mixer = try makeMixer(2, 2)
        let before = mixer
        #expect(throws: CrosspointError.outOfRange(key: "matrix.0.1", value: 10.5, range: -10...10)) {
            try mixer.set(.crosspoint(input: 0, output: 1), to: .number(10.5))
        }
        #expect(throws: CrosspointError.outOfRange(key: "gain.in.1", value: -11, range: -10...10)) {
            try mixer.set(.inputGain(1), to: .number(-11))
        }
        #expect(throws: CrosspointError.notFinite(key: "gain.master", value: .infinity)) {
            try mixer.set(.masterGain, to: .number(.infinity))
        }
        let nan = expectCrosspointError(mentioning: ["gain.out.0", "nan"]) {
            try mixer.set(.outputGain(0), to: .number(.nan))
        }
        guard case .notFinite(key: "gain.out.0", _)? = nan else {
            Issue.record("expected notFinite, got \(String(describing: nan))")
            return
        }
        #expect(throws: CrosspointError.indexOutOfRange(what: "input", index: 2, count: 2)) {
            try mixer.set(.crosspoint(input: 2, output: 0), to: .number(1))
        }
        #expect(throws: CrosspointError.indexOutOfRange(what: "output", index: 5, count: 2)) {
            try mixer.set(.outputMute(5), to: .bool(true))
        }
        expectCrosspointError(mentioning: ["channel-map", "3 entries"]) {
            try mixer.set(.channelMap, to: .ints([0, 1, 0]))
        }
        expectCrosspointError(mentioning: ["channel-map", "entry 1", "is 2"]) {
            try mixer.set(.channelMap, to: .ints([0, 2]))
        }
        expectCrosspointError(mentioning: ["channel-map", "0 entries"]) {
            try mixer.set(.channelMap, to: .ints([]))
        }
        #expect(throws: CrosspointError.outOfRange(key: "ramp.ms", value: 1001, range: 0...1000)) {
            try mixer.set(.ramp, to: .number(1001))
        }
        #expect(mixer == before)
    }

    @Test("Value descriptions read as they were typed")
    func parameterValueDescriptions() {
        #expect(ParameterValue.number(0.5).description == "0.5")
        #expect(ParameterValue.bool(true).description == "true")
        #expect(ParameterValue.ints([-1, 0, 1]).description == "[-1,0,1]")
        #expect(ParameterValue.ints([]).description == "[]")
    }

    @Test("A key's summary names its channels")
    func summariesNameChannels() throws {
        let mixer = try makeMixer(2, 1)
        let crosspoint = Parameter.crosspoint(input: 1, output: 0).summary(in: mixer)
        #expect(crosspoint.contains("input 1 (FR)") && crosspoint.contains("output 0 (MONO)"))
        #expect(Parameter.inputGain(0).summary(in: mixer).contains("input 0 (FL)"))
        #expect(Parameter.outputMute(0).summary(in: mixer).contains("output 0 (MONO)"))
        #expect(Parameter.ramp.summary(in: mixer) == Parameter.ramp.kind.family.summary)
    }

    @Test("The Markdown table lists every family with its type, default and range")
    func markdownTableListsEveryFamily() {
        let table = Parameter.markdownTable()
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == Parameter.families.count + 2)
        #expect(lines.first == "| key | type | default | range | meaning |")
        #expect(lines.dropFirst().first == "|---|---|---|---|---|")
        for (family, line) in zip(Parameter.families, lines.dropFirst(2)) {
            #expect(line.hasPrefix("| `\(family.pattern)` | \(family.type.rawValue) |"), "\(line)")
            #expect(line.contains(family.summary))
            #expect(line.hasSuffix("|"))
            #expect(line.split(separator: "|", omittingEmptySubsequences: false).count == 7, "\(line)")
        }
        #expect(table.contains("| `gain.master` | Float | 1 | -10 to 10 |"))
        #expect(table.contains("| `matrix.<in>.<out>` | Float | 0 | -10 to 10 |"))
        #expect(table.contains("| `mute.in.<in>` | Bool | false | true, false |"))
        #expect(table.contains("| `channel-map` | Array of Int | identity | -1 or an input index, per output |"))
        #expect(table.contains("| `ramp.ms` | Float | 10 | 0 to 1000 |"))
    }
}
