import Foundation
import Testing

/// Real audio through the real module, loaded by the drop-ins into a private daemon.
@Suite(.serialized)
struct NodeAudioTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox.shared("test nodes") { try Sandbox.withTestNodes() } }

    @Test func monoToStereoDuplicatesTheInput() throws {
        try sandbox.expectAudio(node: "xp-mono-stereo", gains: [[1, 1]])
    }

    @Test func swapExchangesLeftAndRight() throws {
        try sandbox.expectAudio(node: "xp-swap", gains: [[0, 1], [1, 0]])
    }

    @Test func stereoPairGoesToOutputsThreeAndFourOfAFourChannelSink() throws {
        let signal = TestSignal(channels: 2)
        let expected = signal.expected(gains: [[0, 0, 1, 0], [0, 0, 0, 1]], linkedInputs: [0, 1])
        let comparison = try sandbox.compareJudgedByTheControl("xp-pair34", expected: expected) {
            try sandbox.playThrough(node: "xp-pair34", signal: signal, sinkPositions: ["FL", "FR", "RL", "RR"])
        }
        comparison.expectMatch()
        #expect(comparison.peak[0] == 0 && comparison.peak[1] == 0, "outputs 1-2 must be silent: \(comparison)")
    }

    @Test func stereoToMonoFromTheShippedDropIn() throws {
        try sandbox.expectAudio(node: "crosspoint", gains: [[0.5], [0.5]])
    }

    static let mixed: [[Double]] = [[1.0, 0.5, 0.0], [0.0, -0.75, 0.25], [0.3, 0.0, 1.0], [0.0, 0.2, -0.5]]

    @Test func fourByThreeMatrixWithMixedGains() throws {
        try sandbox.expectAudio(node: "xp-4x3", gains: NodeAudioTests.mixed)
    }

    @Test(arguments: 0..<4)
    func eachInputUnlinkedInTurn(input: Int) throws {
        try sandbox.expectAudio(node: "xp-4x3", gains: NodeAudioTests.mixed, linkedInputs: Set(0..<4).subtracting([input]))
    }

    @Test(arguments: 0..<3)
    func eachOutputUnlinkedInTurn(output: Int) throws {
        try sandbox.expectAudio(node: "xp-4x3", gains: NodeAudioTests.mixed, linkedOutputs: Set(0..<3).subtracting([output]))
    }
}
