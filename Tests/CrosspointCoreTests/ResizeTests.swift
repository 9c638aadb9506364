import CrosspointCore
import Testing

/// Live port-count changes at the model level.
struct ResizeTests {
    @Test func survivingChannelsKeepEverythingAndNewOnesStartFromTheDefault() throws {
        var mixer = try Mixer(inputs: 4, outputs: 4)
        try mixer.setCrosspoint(input: 1, output: 2, gain: 0.5)
        try mixer.setInputGain(3, 0.25)
        try mixer.setOutputMute(1, true)
        try mixer.resize(inputs: 4, outputs: 6)
        #expect(mixer.outputs == 6)
        #expect(mixer.outputChannels == ["AUX0", "AUX1", "AUX2", "AUX3", "AUX4", "AUX5"])
        #expect(mixer.crosspoint(input: 1, output: 2) == 0.5)
        #expect(mixer.crosspoint(input: 0, output: 0) == 1)
        #expect(mixer.inputGains[3] == 0.25 && mixer.outputMutes[1])
        #expect((0..<4).allSatisfy { mixer.crosspoint(input: $0, output: 4) == 0 && mixer.crosspoint(input: $0, output: 5) == 0 })
        #expect(mixer.outputGains[4] == 1 && !mixer.outputMutes[5])

        try mixer.resize(inputs: 2, outputs: 3)
        #expect(mixer.inputChannels == ["AUX0", "AUX1"] && mixer.outputChannels == ["AUX0", "AUX1", "AUX2"])
        #expect(mixer.crosspoint(input: 1, output: 2) == 0.5 && mixer.outputMutes[1])
        #expect(mixer.matrix.count == 6)
    }

    @Test func newChannelsAreNamedWithoutClashing() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        try mixer.resize(inputs: 3, outputs: 2)
        #expect(mixer.inputChannels == ["FL", "FR", "AUX2"])
    }

    @Test func badCountsAreRefusedAndChangeNothing() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        let before = mixer
        #expect(throws: CrosspointError.channelCount(what: "outputs", value: 0)) { try mixer.resize(inputs: 2, outputs: 0) }
        #expect(throws: CrosspointError.channelCount(what: "inputs", value: 257)) { try mixer.resize(inputs: 257, outputs: 2) }
        #expect(mixer == before)
    }
}

/// Channel names set live (`input.position`, `output.position`).
struct ChannelNamesTests {
    @Test func positionsRenameAndResize() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        try mixer.set(.outputPositions, to: .names(["FL", "FR", "RL", "RR"]))
        #expect(mixer.outputs == 4 && mixer.outputChannels == ["FL", "FR", "RL", "RR"])
        #expect(mixer.crosspoint(input: 0, output: 0) == 1, "surviving cross-points stay")
        try mixer.set(.inputPositions, to: .names(["MONO"]))
        #expect(mixer.inputs == 1 && mixer.inputChannels == ["MONO"])
        #expect(mixer.value(of: .outputPositions) == .names(["FL", "FR", "RL", "RR"]))
        #expect(try Parameter(key: "output.position", in: mixer) == .outputPositions)
    }

    @Test func badPositionsAreRefusedAndChangeNothing() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        let before = mixer
        #expect(throws: CrosspointError.self) { try mixer.set(.outputPositions, to: .names(["FL", "FL"])) }
        #expect(throws: CrosspointError.self) { try mixer.set(.outputPositions, to: .names(["F L"])) }
        #expect(throws: CrosspointError.channelCount(what: "outputs", value: 0)) { try mixer.set(.outputPositions, to: .names([])) }
        #expect(throws: CrosspointError.self) { try mixer.set(.inputPositions, to: .number(2)) }
        #expect(mixer == before)
    }
}
