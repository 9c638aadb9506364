import Foundation
import Testing

/// The test rig's own parts, on made-up data (no daemon): its measure of delay (a delay
/// added by the node must show, whatever delay the tools add), the channel-map form, and
/// its reading of pw-dump.
struct RigTests {
    let signal = TestSignal(channels: 2)

    /// `channels` delayed by `delay` samples (silence before), with 0.1 s of silence after.
    func delayed(_ channels: [[Float]], by delay: Int) -> [[Float]] {
        channels.map { [Float](repeating: 0, count: delay) + $0 + [Float](repeating: 0, count: 4800) }
    }

    @Test(arguments: [0, 1, 1024, 30_000])
    func crossCorrelationFindsTheLag(delay: Int) {
        let recorded = delayed(signal.channels, by: delay)
        #expect(CrossCorrelation.lag(recorded: recorded, expected: signal.channels) == delay)
        #expect(CrossCorrelation.lag(recorded: [recorded[1]], expected: [signal.channels[1]]) == delay)
        // A recording that leads (cut at its start, within the silent lead-in: without the
        // onset, a tone that repeats every 0.1 s would match at every 4,800 samples).
        let lead = min(delay, TestSignal.leadIn - 1000)
        let cut = signal.channels.map { Array($0.dropFirst(lead)) }
        #expect(CrossCorrelation.lag(recorded: cut, expected: signal.channels) == -lead)
        #expect(CrossCorrelation.lag(recorded: recorded, expected: [[Float](repeating: 0, count: 100)]) == nil)
    }

    @Test func theToolsDelayIsAllowedTheNodesIsNot() throws {
        let expected = signal.expected(gains: [[0, 1], [1, 0]], linkedInputs: [0, 1])
        // The tools delay everything by a quantum: a match.
        let same = delayed(expected, by: 1024)
        let reference = delayed([signal.channels[0]], by: 1024)[0]
        let good = try Comparison(recording: Recording(outputs: same, reference: reference, referenceSignal: signal.channels[0]),
                                  expected: expected)
        #expect(good.lag == 1024 && good.referenceLag == 1024 && good.addedDelay == 0, "\(good)")
        #expect(good.maxError.allSatisfy { $0 == 0 } && good.referenceError == 0, "\(good)")
        // pw-cat cut the end short (here by 1,728 samples): still the true lags.
        let cut = { (channel: [Float]) in Array(channel.prefix(1024 + channel.count - 4800 - 1728)) + [Float](repeating: 0, count: 9000) }
        let short = try Comparison(recording: Recording(outputs: same.map(cut), reference: cut(reference), referenceSignal: signal.channels[0]),
                                   expected: expected)
        #expect(short.lag == 1024 && short.referenceLag == 1024 && short.maxError.allSatisfy { $0 == 0 }, "\(short)")
        // The node adds one sample, or a quantum: its lag shows it.
        for added in [1, 1024] {
            let late = delayed(expected, by: 1024 + added)
            let bad = try Comparison(recording: Recording(outputs: late, reference: reference, referenceSignal: signal.channels[0]),
                                     expected: expected)
            #expect(bad.addedDelay == added, "\(bad)")
        }
        // Silent outputs are compared at the reference's lag.
        let silent = [[Float](repeating: 0, count: same[0].count), [Float](repeating: 0, count: same[0].count)]
        let quiet = try Comparison(recording: Recording(outputs: silent, reference: reference, referenceSignal: signal.channels[0]),
                                   expected: signal.expected(gains: [[0, 0], [0, 0]], linkedInputs: [0, 1]))
        #expect(quiet.lag == nil && quiet.referenceLag == 1024 && quiet.maxError == [0, 0], "\(quiet)")
    }

    @Test func channelMapsTakeTheFormOfTheInstalledPipeWire() {
        let map = PipeWire.channelMap(["AUX0", "AUX1", "AUX2"])
        #expect(map == (PipeWire.atLeast(1, 3, 81) ? "[ AUX0 AUX1 AUX2 ]" : "AUX0,AUX1,AUX2"), "PipeWire \(PipeWire.version)")
    }

    /// pw-dump 0.3.65 sometimes prints, before its list, a list of the objects that went
    /// while it started (seen in a test: `[ { "id": 41, "info": null } ]`).
    @Test func pwDumpOutputWithAListOfRemovedObjectsReadsAsOneGraph() throws {
        let dump = """
            [
              {
                "id": 41,
                "info": null
              }
            ]
            [
              { "id": 0, "type": "PipeWire:Interface:Core", "info": { "props": { } } },
              { "id": 41, "type": "PipeWire:Interface:Client", "info": { "props": { } } },
              { "id": 42, "type": "PipeWire:Interface:Node", "info": { "props": { "node.name": "xp" } } }
            ]
            [
              { "id": 41, "info": null }
            ]
            """
        let graph = try Graph(dump: dump)
        #expect(graph.objects.compactMap { $0["id"] as? Int } == [0, 42])
        #expect(graph.nodeID("xp") == 42)
        #expect(throws: SandboxError.self) { try Graph(dump: "[ { \"id\": 0,") }
    }
}
