import Foundation
import Testing

/// Plays real audio through a node and records what comes out, with the stock tools:
/// pw-cat plays a WAV into the node's inputs (linked with pw-link, as a person would in
/// Helvum), the node's outputs go to a null sink, and pw-record records the sink's monitor.
extension Sandbox {
    /// The node's ports of one direction, in port order (their `port.name`s).
    func portNames(of node: String, direction: String) throws -> [String] {
        let graph = try Graph(self)
        return graph.ports(of: node, direction: direction)
            .sorted { ($0["port.id"] as? Int ?? 0) < ($1["port.id"] as? Int ?? 0) }
            .compactMap { $0["port.name"] as? String }
    }

    /// Plays `signal` (channel i into input port i) through `node` and returns one recorded
    /// channel per output port. Only `linkedInputs` / `linkedOutputs` are linked (all by default).
    func playThrough(
        node: String, signal: TestSignal, linkedInputs: Set<Int>? = nil, linkedOutputs: Set<Int>? = nil,
        sinkPositions: [String]? = nil, sinkOffset: Int = 0, during: (() throws -> Void)? = nil
    ) throws -> [[Float]] {
        let tag = "\(node)-\(UInt32.random(in: 0..<UInt32.max))"
        let inputs = try portNames(of: node, direction: "input")
        let outputs = try portNames(of: node, direction: "output")
        guard !inputs.isEmpty, !outputs.isEmpty else { throw SandboxError("node \(node) has no ports") }
        let positions = sinkPositions ?? (0..<outputs.count).map { "AUX\($0)" }
        let sink = "rec-\(tag)", recorder = "recorder-\(tag)", player = "player-\(tag)"
        let wav = NSTemporaryDirectory() + "\(tag)-in.wav", recorded = NSTemporaryDirectory() + "\(tag)-out.wav"
        defer {
            shell("pw_destroy_node \(sink) || true")
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: recorded)
        }
        try Wave.write(signal.channels, to: wav)

        let made = shell("pw_null_sink \(sink) '\(positions.joined(separator: " "))'")
        guard made.succeeded else { throw SandboxError("null sink: \(made.stderr)") }
        var links: [String] = []
        for (j, port) in outputs.enumerated() where linkedOutputs?.contains(j) ?? true {
            links.append("pw-link '\(node):\(port)' '\(sink):playback_\(positions[j + sinkOffset])'")
        }
        if !links.isEmpty {
            let linked = shell(links.joined(separator: " && "))
            guard linked.succeeded else { throw SandboxError("linking outputs: \(linked.stderr)") }
        }

        let recording = try start([
            "pw-record", "--target", sink, "-P", "{ stream.capture.sink = true node.name = \(recorder) }",
            "--channels", "\(positions.count)", "--channel-map", positions.joined(separator: ","),
            "--format", "f32", recorded,
        ])
        let ready = shell("pw_wait_ports \(recorder) \(positions.count) input")
        guard ready.succeeded else { throw SandboxError("recorder: \(ready.stderr)") }
        usleep(300_000)

        let channelMap = (0..<signal.channels.count).map { "AUX\($0)" }
        let playing = try start([
            "pw-cat", "--playback", "-P", "{ node.autoconnect = false node.name = \(player) }",
            "--channels", "\(signal.channels.count)", "--channel-map", channelMap.joined(separator: ","), wav,
        ])
        var inputLinks = ["pw_wait_ports \(player) \(signal.channels.count) output"]
        for (i, port) in inputs.enumerated() where i < signal.channels.count && (linkedInputs?.contains(i) ?? true) {
            inputLinks.append("pw-link '\(player):output_AUX\(i)' '\(node):\(port)'")
        }
        let linked = shell(inputLinks.joined(separator: " && "))
        guard linked.succeeded else { playing.stop(); recording.stop(); throw SandboxError("linking inputs: \(linked.stderr)") }
        try during?()
        playing.wait(timeout: 30)
        usleep(300_000)
        recording.stop()
        let channels = try Wave.read(recorded)
        return Array(channels[sinkOffset..<min(channels.count, sinkOffset + outputs.count)])
    }

    /// Plays through `node`, compares with `gains` (rows = inputs), and checks every output
    /// within `tolerance` of full scale.
    func expectAudio(
        node: String, gains: [[Double]], linkedInputs: Set<Int>? = nil, linkedOutputs: Set<Int>? = nil,
        tolerance: Float = 1e-4, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let signal = TestSignal(channels: gains.count)
        let recorded = try playThrough(node: node, signal: signal, linkedInputs: linkedInputs, linkedOutputs: linkedOutputs)
        var effective = gains
        if let linkedOutputs {  // an unlinked output reaches the sink as silence
            for i in effective.indices { for j in effective[i].indices where !linkedOutputs.contains(j) { effective[i][j] = 0 } }
        }
        let expected = signal.expected(gains: effective, linkedInputs: linkedInputs ?? Set(gains.indices))
        let comparison = try Comparison(recorded: recorded, expected: expected)
        for j in expected.indices {
            #expect(comparison.maxError[j] <= tolerance,
                    "output \(j) of \(node): \(comparison)", sourceLocation: sourceLocation)
        }
    }
}
