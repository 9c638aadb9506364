// Channel maps: parsing, validation, map -> matrix, and matrix -> map for pure routings.

import CrosspointCore
import CrosspointTestSupport
import Testing

@Suite("Channel maps")
struct ChannelMapTests {
    @Test(
        "Parses integers separated by commas or spaces, optionally in brackets",
        arguments: [
            ("0,0", [0, 0]),
            ("[-1, -1, 0, 1]", [-1, -1, 0, 1]),
            ("1 0", [1, 0]),
            ("[1,0]", [1, 0]),
            ("  2  ", [2]),
            (" [ 0 , 1 ] ", [0, 1]),
            ("0\t1", [0, 1]),
            ("-1", [-1]),
        ])
    func parsesChannelMapText(text: String, sources: [Int]) throws {
        #expect(try ChannelMap(parsing: text) == ChannelMap(sources))
        #expect(try ChannelMap(parsing: text).sources == sources)
    }

    @Test(
        "Rejects text that is not a list of integers, naming channel-map and the bad field",
        arguments: [
            ("", "empty"), ("   ", "empty"), ("[]", "empty"), ("a,b", "'a'"), ("0,x", "'x'"),
            ("1.5", "'1.5'"), ("[0,1", "'[0'"), ("0;1", "'0;1'"), ("one two", "'one'"),
        ])
    func rejectsBadChannelMapText(text: String, mentioned: String) {
        let error = expectCrosspointError(mentioning: ["channel-map", mentioned]) {
            _ = try ChannelMap(parsing: text)
        }
        guard case .invalidValue(key: "channel-map", _)? = error else {
            Issue.record("'\(text)': expected invalidValue for channel-map, got \(String(describing: error))")
            return
        }
    }

    @Test("Describes itself as a bracketed list that parses back")
    func descriptionRoundTrips() throws {
        let map = ChannelMap([-1, -1, 0, 1])
        #expect(map.description == "[-1,-1,0,1]")
        #expect(try ChannelMap(parsing: map.description) == map)
    }

    @Test("A map becomes a matrix: unity where an output takes an input, zero elsewhere")
    func mapToMatrix() throws {
        // Row-major: matrix[input * outputs + output].
        #expect(try ChannelMap([0, 0]).matrix(inputs: 1) == [1, 1])
        #expect(try ChannelMap([1, 0]).matrix(inputs: 2) == [0, 1, 1, 0])
        #expect(try ChannelMap([-1, -1, 0, 1]).matrix(inputs: 2) == [0, 0, 1, 0, 0, 0, 0, 1])
        #expect(try ChannelMap([-1]).matrix(inputs: 3) == [0, 0, 0])
        #expect(try ChannelMap([2, 2, 0]).matrix(inputs: 3) == [0, 0, 1, 0, 0, 0, 1, 1, 0])
    }

    @Test("A pure routing matrix becomes its map")
    func routingMatrixToMap() {
        #expect(ChannelMap(matrix: [1, 1], inputs: 1, outputs: 2) == ChannelMap([0, 0]))
        #expect(ChannelMap(matrix: [0, 1, 1, 0], inputs: 2, outputs: 2) == ChannelMap([1, 0]))
        #expect(ChannelMap(matrix: [0, 0, 1, 0, 0, 0, 0, 1], inputs: 2, outputs: 4) == ChannelMap([-1, -1, 0, 1]))
        #expect(ChannelMap(matrix: [0, 0, 0, 0], inputs: 2, outputs: 2) == ChannelMap([-1, -1]))
        #expect(ChannelMap(matrix: [1, 0, 0, 1], inputs: 2, outputs: 2) == ChannelMap([0, 1]))
    }

    @Test("A matrix that is not a pure routing has no map", arguments: [
        [Float(0.5), 0, 0, 1],  // a 0.5 gain
        [1, 0, 1, 0],  // two inputs into output 0
        [-1, 0, 0, 1],  // a polarity flip
        [0.5, 0, 0.5, 0],  // stereo to mono at half
        [1.0000001, 0, 0, 1],  // nearly unity is not unity
    ])
    func nonRoutingMatrixHasNoMap(matrix: [Float]) {
        #expect(ChannelMap(matrix: matrix, inputs: 2, outputs: 2) == nil)
    }

    @Test("Random routings survive map -> matrix -> map")
    func randomRoutingsRoundTrip() throws {
        var rng = SplitMix64(seed: 0xC0FFEE)
        for _ in 0..<200 {
            let inputs = 1 + rng.index(12), outputs = 1 + rng.index(12)
            let map = ChannelMap((0..<outputs).map { _ in rng.index(inputs + 1) - 1 })
            let matrix = try map.matrix(inputs: inputs)
            #expect(matrix.count == inputs * outputs)
            #expect(matrix.filter { $0 != 0 }.count == map.sources.filter { $0 >= 0 }.count)
            #expect(ChannelMap(matrix: matrix, inputs: inputs, outputs: outputs) == map)
        }
    }

    @Test("Validation rejects the wrong length and entries outside -1...inputs-1")
    func validationRejectsBadMaps() {
        let long = expectCrosspointError(mentioning: ["channel-map", "3 entries", "2 outputs"]) {
            try ChannelMap([0, 1, 1]).validate(inputs: 2, outputs: 2)
        }
        guard case .shapeMismatch? = long else {
            Issue.record("expected shapeMismatch, got \(String(describing: long))")
            return
        }
        expectCrosspointError(mentioning: ["channel-map", "1 entries", "2 outputs"]) {
            try ChannelMap([0]).validate(inputs: 2, outputs: 2)
        }
        let tooHigh = expectCrosspointError(mentioning: ["channel-map", "entry 1", "is 2", "0 to 1"]) {
            try ChannelMap([0, 2]).validate(inputs: 2, outputs: 2)
        }
        #expect(tooHigh == .invalidValue(
            key: "channel-map", reason: "entry 1 is 2; it must be -1 (silence) or an input index 0 to 1"))
        expectCrosspointError(mentioning: ["channel-map", "entry 0", "-2"]) {
            try ChannelMap([-2, 0]).validate(inputs: 2, outputs: 2)
        }
        expectCrosspointError(mentioning: ["channel-map", "entry 0", "is 1"]) {
            _ = try ChannelMap([1, 0]).matrix(inputs: 1)
        }
        #expect(throws: Never.self) { try ChannelMap([-1, 1]).validate(inputs: 2, outputs: 2) }
    }

    @Test("Applying a map to a mixer replaces its matrix; a bad map changes nothing")
    func applyingMapsToMixers() throws {
        var mixer = try makeMixer(2, 4)
        try mixer.setInputGain(0, 0.5)
        try mixer.apply(ChannelMap([-1, -1, 0, 1]))
        #expect(mixer.matrix == [0, 0, 1, 0, 0, 0, 0, 1])
        #expect(mixer.inputGains == [0.5, 1], "a map replaces only the matrix")
        #expect(mixer.channelMap == ChannelMap([-1, -1, 0, 1]))
        let before = mixer
        for bad in [[0, 1], [0, 1, 0, 1, 0], [0, 1, 2, 0], [-2, 0, 0, 0]] {
            expectCrosspointError(mentioning: ["channel-map"]) { try mixer.apply(ChannelMap(bad)) }
            #expect(mixer == before, "\(bad) changed the model")
        }
    }

    @Test("Fresh mixers report their default routing as a map, or none")
    func defaultMatricesAsMaps() throws {
        #expect(try makeMixer(1, 2).channelMap == ChannelMap([0, 0]))
        #expect(try makeMixer(2, 2).channelMap == ChannelMap([0, 1]))
        #expect(try makeMixer(2, 4).channelMap == ChannelMap([0, 1, -1, -1]))
        #expect(try makeMixer(4, 2).channelMap == ChannelMap([0, 1]))
        #expect(try makeMixer(2, 1).channelMap == nil, "the 0.5/0.5 average is no routing")
        #expect(try makeMixer(1, 1).channelMap == ChannelMap([0]))
    }
}
