// The model: shapes, defaults, channel names, setters, and every way a request can be wrong.

import CrosspointCore
import Testing

@Suite("Mixer model")
struct MixerTests {
    // MARK: Defaults

    @Test("NxN defaults to the identity", arguments: [1, 2, 3, 8, 64, 256])
    func squareMixerDefaultsToIdentity(n: Int) throws {
        let mixer = try makeMixer(n, n)
        for i in 0..<n {
            for j in 0..<n {
                #expect(mixer.crosspoint(input: i, output: j) == (i == j ? 1 : 0))
            }
        }
    }

    @Test("Nx1 defaults to the average, 1/N from each input", arguments: [2, 3, 5, 8, 256])
    func manyToOneDefaultsToAverage(n: Int) throws {
        let mixer = try makeMixer(n, 1)
        for i in 0..<n { #expect(mixer.crosspoint(input: i, output: 0) == 1 / Float(n)) }
        let sum = (0..<n).reduce(0.0) { $0 + Double(mixer.crosspoint(input: $1, output: 0)) }
        #expect(abs(sum - 1) < 1e-5)
    }

    @Test("1xM defaults to the input on every output at unity", arguments: [2, 3, 4, 64, 256])
    func oneToManyDefaultsToUnityEverywhere(m: Int) throws {
        let mixer = try makeMixer(1, m)
        for j in 0..<m { #expect(mixer.crosspoint(input: 0, output: j) == 1) }
    }

    @Test(
        "Other shapes default to the identity on the first min(N, M) channels",
        arguments: [(2, 4), (4, 2), (3, 7), (7, 3), (2, 6), (64, 8), (5, 256)])
    func otherShapesDefaultToPartialIdentity(inputs: Int, outputs: Int) throws {
        let mixer = try makeMixer(inputs, outputs)
        for i in 0..<inputs {
            for j in 0..<outputs {
                let expected: Float = (i == j && i < min(inputs, outputs)) ? 1 : 0
                #expect(mixer.crosspoint(input: i, output: j) == expected, "matrix.\(i).\(j)")
            }
        }
        #expect(mixer.matrix == Mixer.defaultMatrix(inputs: inputs, outputs: outputs))
    }

    @Test("A fresh mixer has unity gains, no mutes and a 10 ms ramp")
    func freshMixerHasNeutralGainsAndDefaultRamp() throws {
        let mixer = try makeMixer(3, 5)
        #expect(mixer.inputs == 3 && mixer.outputs == 5)
        #expect(mixer.masterGain == 1)
        #expect(mixer.masterMute == false)
        #expect(mixer.inputGains == [1, 1, 1])
        #expect(mixer.outputGains == [1, 1, 1, 1, 1])
        #expect(mixer.inputMutes == [false, false, false])
        #expect(mixer.outputMutes == [false, false, false, false, false])
        #expect(mixer.rampMilliseconds == 10)
        #expect(mixer.matrix.count == 15)
    }

    @Test("Default channel names are MONO, FL FR, then AUX0...")
    func defaultChannelNames() throws {
        #expect(Mixer.defaultChannels(count: 1) == ["MONO"])
        #expect(Mixer.defaultChannels(count: 2) == ["FL", "FR"])
        #expect(Mixer.defaultChannels(count: 3) == ["AUX0", "AUX1", "AUX2"])
        #expect(Mixer.defaultChannels(count: 4) == ["AUX0", "AUX1", "AUX2", "AUX3"])
        #expect(Mixer.defaultChannels(count: 256).last == "AUX255")
        let mixer = try makeMixer(2, 1)
        #expect(mixer.inputChannels == ["FL", "FR"])
        #expect(mixer.outputChannels == ["MONO"])
        let wide = try makeMixer(1, 8)
        #expect(wide.inputChannels == ["MONO"])
        #expect(wide.outputChannels == (0..<8).map { "AUX\($0)" })
    }

    @Test("Custom channel names are kept and resolve")
    func customChannelNames() throws {
        let mixer = try Mixer(inputs: 3, outputs: 2, inputChannels: ["FL", "FR", "LFE"], outputChannels: ["L", "R"])
        #expect(mixer.inputChannels == ["FL", "FR", "LFE"])
        #expect(mixer.outputChannels == ["L", "R"])
        #expect(try mixer.inputIndex("LFE") == 2)
        #expect(try mixer.outputIndex("R") == 1)
    }

    @Test("The channel limit is 1 to 256 on each side")
    func channelLimitBounds() throws {
        #expect(Mixer.channelLimit == 1...256)
        let largest = try makeMixer(256, 256)
        #expect(largest.matrix.count == 65536)
        let smallest = try makeMixer(1, 1)
        #expect(smallest.matrix == [1])
    }

    // MARK: Reading

    @Test("Index resolution takes numbers and channel names, names case-insensitively")
    func indexResolution() throws {
        let mixer = try makeMixer(2, 4)
        #expect(try mixer.inputIndex("0") == 0)
        #expect(try mixer.inputIndex("1") == 1)
        #expect(try mixer.inputIndex("FL") == 0)
        #expect(try mixer.inputIndex("FR") == 1)
        #expect(try mixer.inputIndex("fr") == 1)
        #expect(try mixer.outputIndex("AUX3") == 3)
        #expect(try mixer.outputIndex("aux3") == 3)
        #expect(try mixer.outputIndex("2") == 2)
    }

    @Test("The effective gain multiplies master, output, input and cross-point gains; mutes zero it")
    func effectiveGainFoldsEverything() throws {
        var mixer = try makeMixer(2, 2)
        try mixer.setMasterGain(0.5)
        try mixer.setInputGain(1, -2)
        try mixer.setOutputGain(0, 3)
        try mixer.setCrosspoint(input: 1, output: 0, gain: 0.25)
        #expect(mixer.effectiveGain(input: 1, output: 0) == 0.5 * 3 * -2 * 0.25)
        #expect(mixer.effectiveGain(input: 0, output: 0) == 0.5 * 3)
        #expect(mixer.effectiveGain(input: 0, output: 1) == 0)
        try mixer.setInputMute(1, true)
        #expect(mixer.effectiveGain(input: 1, output: 0) == 0)
        try mixer.setInputMute(1, false)
        try mixer.setOutputMute(0, true)
        #expect(mixer.effectiveGain(input: 1, output: 0) == 0)
        try mixer.setOutputMute(0, false)
        mixer.setMasterMute(true)
        #expect(mixer.effectiveGain(input: 1, output: 0) == 0)
        #expect(mixer.effectiveGain(input: 0, output: 0) == 0)
        mixer.setMasterMute(false)
        #expect(mixer.effectiveGain(input: 1, output: 0) == -0.75)
    }

    @Test("Setters change exactly what they name")
    func settersChangeWhatTheyName() throws {
        var mixer = try makeMixer(3, 2)
        let fresh = mixer
        try mixer.setCrosspoint(input: 2, output: 1, gain: -0.5)
        #expect(mixer.crosspoint(input: 2, output: 1) == -0.5)
        #expect(mixer.matrix[2 * 2 + 1] == -0.5)
        try mixer.setInputGain(0, 10)
        try mixer.setOutputGain(1, -10)
        try mixer.setMasterGain(0)
        try mixer.setRamp(milliseconds: 1000)
        #expect(mixer.inputGains == [10, 1, 1])
        #expect(mixer.outputGains == [1, -10])
        #expect(mixer.masterGain == 0)
        #expect(mixer.rampMilliseconds == 1000)
        try mixer.setRamp(milliseconds: 0)
        #expect(mixer.rampMilliseconds == 0)
        try mixer.setMatrix(rows: [[1, 0], [0, 1], [0.5, 0.5]])
        #expect(mixer.matrix == [1, 0, 0, 1, 0.5, 0.5])
        #expect(mixer != fresh)
        var again = fresh
        #expect(again == fresh)
        try again.setCrosspoint(input: 0, output: 0, gain: 1)  // the value it had
        #expect(again == fresh)
    }

    @Test("Gains at the range's ends are accepted")
    func gainRangeEndsAreAccepted() throws {
        var mixer = try makeMixer(1, 1)
        try mixer.setMasterGain(10)
        try mixer.setMasterGain(-10)
        try mixer.setCrosspoint(input: 0, output: 0, gain: -10)
        #expect(mixer.masterGain == -10 && mixer.crosspoint(input: 0, output: 0) == -10)
        #expect(Mixer.gainRange == -10...10)
    }

    // MARK: Errors

    @Test("Channel counts 0 and 257 throw channelCount naming the side and the count")
    func channelCountsOutsideTheLimitThrow() {
        for (inputs, outputs, what, value) in [(0, 2, "inputs", 0), (257, 2, "inputs", 257),
                                               (2, 0, "outputs", 0), (2, 257, "outputs", 257),
                                               (-1, 1, "inputs", -1)] {
            let error = expectCrosspointError(mentioning: [what, "\(value)", "256"]) {
                _ = try Mixer(inputs: inputs, outputs: outputs)
            }
            #expect(error == .channelCount(what: what, value: value))
        }
    }

    @Test("Bad channel names throw: wrong count, not a name, twice")
    func badChannelNamesThrow() {
        let wrongCount = expectCrosspointError(mentioning: ["3", "2"]) {
            _ = try Mixer(inputs: 2, outputs: 2, inputChannels: ["A", "B", "C"])
        }
        guard case .shapeMismatch = wrongCount else {
            Issue.record("expected shapeMismatch, got \(String(describing: wrongCount))")
            return
        }
        let notAName = expectCrosspointError(mentioning: ["output.position", "F-L"]) {
            _ = try Mixer(inputs: 2, outputs: 2, outputChannels: ["F-L", "FR"])
        }
        #expect(notAName == .invalidValue(key: "output.position", reason: "'F-L' is not a channel name (1 to 63 ASCII letters, digits and _)"))
        expectCrosspointError(mentioning: ["input.position", "''"]) {
            _ = try Mixer(inputs: 2, outputs: 2, inputChannels: ["", "FR"])
        }
        let twice = expectCrosspointError(mentioning: ["input.position", "FL", "twice"]) {
            _ = try Mixer(inputs: 2, outputs: 2, inputChannels: ["FL", "FL"])
        }
        #expect(twice == .invalidValue(key: "input.position", reason: "'FL' appears twice"))
    }

    @Test("NaN and infinite gains throw notFinite naming the key; the model is unchanged")
    func nonFiniteGainsThrowAndChangeNothing() throws {
        var mixer = try makeMixer(2, 3)
        try mixer.setCrosspoint(input: 1, output: 2, gain: 0.25)
        let before = mixer
        for value in [Double.nan, .infinity, -.infinity, .signalingNaN] {
            let cases: [(String, (inout Mixer) throws(CrosspointError) -> Void)] = [
                ("matrix.1.2", { m throws(CrosspointError) in try m.setCrosspoint(input: 1, output: 2, gain: value) }),
                ("gain.in.1", { m throws(CrosspointError) in try m.setInputGain(1, value) }),
                ("gain.out.2", { m throws(CrosspointError) in try m.setOutputGain(2, value) }),
                ("gain.master", { m throws(CrosspointError) in try m.setMasterGain(value) }),
                ("ramp.ms", { m throws(CrosspointError) in try m.setRamp(milliseconds: value) }),
                ("matrix.1.0", { m throws(CrosspointError) in try m.setMatrix(rows: [[1, 0, 0], [value, 1, 0]]) }),
            ]
            for (key, change) in cases {
                let error = expectCrosspointError(mentioning: [key, value.isNaN ? "nan" : "inf"]) {
                    try change(&mixer)
                }
                guard case let .notFinite(k, v)? = error else {
                    Issue.record("\(key) = \(value): expected notFinite, got \(String(describing: error))")
                    continue
                }
                #expect(k == key)
                #expect(v.isNaN == value.isNaN && (v.isNaN || v == value))
                #expect(mixer == before, "\(key) = \(value) changed the model")
            }
        }
    }

    @Test("Gains outside -10...10 throw outOfRange naming key, value and range; the model is unchanged")
    func outOfRangeGainsThrowAndChangeNothing() throws {
        var mixer = try makeMixer(2, 2)
        let before = mixer
        for value in [10.5, -11, 10.000001, 1e9, -1e300] {
            let cases: [(String, (inout Mixer) throws(CrosspointError) -> Void)] = [
                ("matrix.0.1", { m throws(CrosspointError) in try m.setCrosspoint(input: 0, output: 1, gain: value) }),
                ("gain.in.0", { m throws(CrosspointError) in try m.setInputGain(0, value) }),
                ("gain.out.1", { m throws(CrosspointError) in try m.setOutputGain(1, value) }),
                ("gain.master", { m throws(CrosspointError) in try m.setMasterGain(value) }),
                ("matrix.1.1", { m throws(CrosspointError) in try m.setMatrix(rows: [[0.5, 0.5], [0.5, value]]) }),
            ]
            for (key, change) in cases {
                let error = expectCrosspointError(mentioning: [key, "\(value)", "-10", "10"]) { try change(&mixer) }
                #expect(error == .outOfRange(key: key, value: value, range: -10...10))
                #expect(mixer == before, "\(key) = \(value) changed the model")
            }
        }
    }

    @Test("Ramp times outside 0...1000 ms throw outOfRange; the model is unchanged")
    func outOfRangeRampThrows() throws {
        var mixer = try makeMixer(1, 1)
        let before = mixer
        for value in [-1.0, 1000.5, 1e6] {
            let error = expectCrosspointError(mentioning: ["ramp.ms", "\(value)"]) {
                try mixer.setRamp(milliseconds: value)
            }
            #expect(error == .outOfRange(key: "ramp.ms", value: value, range: 0...1000))
            #expect(mixer == before)
        }
    }

    @Test("Out-of-range indices throw indexOutOfRange naming the side, index and count; the model is unchanged")
    func outOfRangeIndicesThrowAndChangeNothing() throws {
        var mixer = try makeMixer(2, 3)
        let before = mixer
        let cases: [(CrosspointError, (inout Mixer) throws(CrosspointError) -> Void)] = [
            (.indexOutOfRange(what: "input", index: 2, count: 2),
             { m throws(CrosspointError) in try m.setCrosspoint(input: 2, output: 0, gain: 1) }),
            (.indexOutOfRange(what: "output", index: 3, count: 3),
             { m throws(CrosspointError) in try m.setCrosspoint(input: 0, output: 3, gain: 1) }),
            (.indexOutOfRange(what: "input", index: -1, count: 2),
             { m throws(CrosspointError) in try m.setCrosspoint(input: -1, output: 0, gain: 1) }),
            (.indexOutOfRange(what: "input", index: 5, count: 2), { m throws(CrosspointError) in try m.setInputGain(5, 1) }),
            (.indexOutOfRange(what: "output", index: 3, count: 3), { m throws(CrosspointError) in try m.setOutputGain(3, 1) }),
            (.indexOutOfRange(what: "input", index: 2, count: 2), { m throws(CrosspointError) in try m.setInputMute(2, true) }),
            (.indexOutOfRange(what: "output", index: 99, count: 3),
             { m throws(CrosspointError) in try m.setOutputMute(99, true) }),
            // The index is checked before the gain: a bad index with a bad gain names the index.
            (.indexOutOfRange(what: "input", index: 7, count: 2),
             { m throws(CrosspointError) in try m.setCrosspoint(input: 7, output: 0, gain: .nan) }),
        ]
        for (expected, change) in cases {
            guard case let .indexOutOfRange(what, index, count) = expected else { continue }
            let error = expectCrosspointError(mentioning: [what, "index \(index)", "\(count)"]) { try change(&mixer) }
            #expect(error == expected)
            #expect(mixer == before)
        }
        #expect(throws: CrosspointError.indexOutOfRange(what: "input", index: 2, count: 2)) {
            try mixer.inputIndex("2")
        }
        #expect(throws: CrosspointError.indexOutOfRange(what: "output", index: -1, count: 3)) {
            try mixer.outputIndex("-1")
        }
    }

    @Test("Unknown channel names throw unknownChannel naming the name")
    func unknownChannelNamesThrow() throws {
        let mixer = try makeMixer(2, 4)
        let input = expectCrosspointError(mentioning: ["input", "'LFE'"]) { _ = try mixer.inputIndex("LFE") }
        #expect(input == .unknownChannel(what: "input", name: "LFE"))
        let output = expectCrosspointError(mentioning: ["output", "'AUX4'"]) { _ = try mixer.outputIndex("AUX4") }
        #expect(output == .unknownChannel(what: "output", name: "AUX4"))
        let mono = expectCrosspointError(mentioning: ["output", "MONO"]) { _ = try mixer.outputIndex("MONO") }
        #expect(mono == .unknownChannel(what: "output", name: "MONO"))
    }

    @Test("A matrix with the wrong row count or row length throws shapeMismatch; the model is unchanged")
    func badMatrixShapesThrowAndChangeNothing() throws {
        var mixer = try makeMixer(2, 3)
        try mixer.setCrosspoint(input: 0, output: 2, gain: 0.5)
        let before = mixer
        let tooFewRows = expectCrosspointError(mentioning: ["1 rows", "2 inputs"]) {
            try mixer.setMatrix(rows: [[1, 0, 0]])
        }
        #expect(tooFewRows == .shapeMismatch("matrix has 1 rows but the node has 2 inputs (one row per input)"))
        #expect(mixer == before)
        expectCrosspointError(mentioning: ["3 rows", "2 inputs"]) {
            try mixer.setMatrix(rows: [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
        }
        #expect(mixer == before)
        let shortRow = expectCrosspointError(mentioning: ["row 1", "2 gains", "3 outputs"]) {
            try mixer.setMatrix(rows: [[1, 0, 0], [0, 1]])
        }
        #expect(shortRow == .shapeMismatch(
            "matrix row 1 has 2 gains but the node has 3 outputs (one gain per output)"))
        #expect(mixer == before)
        expectCrosspointError(mentioning: ["row 0", "4 gains"]) {
            try mixer.setMatrix(rows: [[1, 0, 0, 0], [0, 1, 0]])
        }
        #expect(mixer == before)
        expectCrosspointError(mentioning: ["0 rows"]) { try mixer.setMatrix(rows: []) }
        #expect(mixer == before)
    }

    @Test("A bad gain late in a matrix leaves the earlier rows unapplied")
    func badMatrixValueIsAllOrNothing() throws {
        var mixer = try makeMixer(3, 2)
        let before = mixer
        let error = expectCrosspointError(mentioning: ["matrix.2.1", "-11"]) {
            try mixer.setMatrix(rows: [[0.5, 0.5], [0.5, 0.5], [0.5, -11]])
        }
        #expect(error == .outOfRange(key: "matrix.2.1", value: -11, range: -10...10))
        #expect(mixer == before)
    }

    @Test("Every error's description names what to fix")
    func errorDescriptions() {
        #expect(CrosspointError.channelCount(what: "inputs", value: 0).description
            == "inputs must be between 1 and 256, got 0")
        #expect(CrosspointError.indexOutOfRange(what: "output", index: 4, count: 4).description
            == "output index 4 is out of range (the node has 4, numbered 0 to 3)")
        #expect(CrosspointError.unknownChannel(what: "input", name: "XX").description == "no input channel is named 'XX'")
        #expect(CrosspointError.notFinite(key: "gain.master", value: .infinity).description
            == "gain.master: inf is not a finite number")
        #expect(CrosspointError.outOfRange(key: "gain.in.0", value: 10.5, range: -10...10).description
            == "gain.in.0: 10.5 is outside -10.0...10.0")
        #expect(CrosspointError.unknownKey("volume").description == "unknown parameter 'volume'")
        #expect(CrosspointError.invalidValue(key: "mute.in.0", reason: "expects true or false, got 0.5").description
            == "mute.in.0: expects true or false, got 0.5")
        #expect(CrosspointError.shapeMismatch("matrix has 1 rows").description == "matrix has 1 rows")
    }
}
