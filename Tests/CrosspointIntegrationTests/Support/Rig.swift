import Foundation
import Testing

/// Plays real audio through a node and records what comes out, with the stock tools:
/// pw-cat plays a WAV into a null sink (the source) whose monitor feeds the node's inputs
/// (linked by name, as a person would in Helvum), the node's outputs go to another null sink,
/// and pw-record records that sink's monitor. The source's first channel also goes straight
/// to a channel of the sink of its own: the reference path, recorded in the same recording,
/// whose delay the node's outputs must match.
extension Sandbox {
    /// The node's audio ports of one direction, in port order (their `port.name`s; not the
    /// MIDI ports `midi_in` and `midi_out`).
    func portNames(of node: String, direction: String) throws -> [String] {
        let graph = try Graph(self)
        return graph.ports(of: node, direction: direction)
            .sorted { ($0["port.id"] as? Int ?? 0) < ($1["port.id"] as? Int ?? 0) }
            .compactMap { $0["port.name"] as? String }
            .filter { !$0.hasPrefix("midi_") }
    }

    /// Plays `signal` (channel i into input port i) through `node` into a new null sink and
    /// records the sink. Only `linkedInputs` / `linkedOutputs` are linked (all by default).
    /// The sink has a channel per output (only per linked output when the node has 64 or
    /// more: a sink has at most 64 channels) and one for the reference path.
    func playThrough(
        node: String, signal: TestSignal, linkedInputs: Set<Int>? = nil, linkedOutputs: Set<Int>? = nil,
        sinkPositions: [String]? = nil, during: (() throws -> Void)? = nil
    ) throws -> Recording {
        let outputs = try portNames(of: node, direction: "output")
        guard !outputs.isEmpty else { throw SandboxError("node \(node) has no ports") }
        let positions = sinkPositions ?? (0..<outputs.count).map { "AUX\($0)" }
        let recorded = outputs.indices.filter { $0 < positions.count && (outputs.count < 64 || linkedOutputs?.contains($0) ?? true) }
        let sink = "rec-\(node)-\(UInt32.random(in: 0..<UInt32.max))"
        let reference = referenceChannel(besides: recorded.map { positions[$0] })
        let made = shell("pw_null_sink \(sink) '\((recorded.map { positions[$0] } + [reference]).joined(separator: " "))'")
        guard made.succeeded else { throw SandboxError("null sink: \(made.stderr)") }
        let cli: PwCli
        do { cli = try PwCli(self) } catch { shell("pw_destroy_node \(sink) || true"); throw error }
        defer {
            // Through the pw-cli that knows it by now (by name: it has been connected since before
            // the recording), gone before pw-cli quits (a command still unread when a client hangs
            // up is dropped); else as before the batch, by the shell helper.
            cli.send(["destroy \(sink)"])
            if (try? waitFor("the recording sink \(sink) to go", timeout: 3) { $0.nodeID(sink) == nil }) == nil {
                shell("pw_destroy_node \(sink) || true")
            }
            cli.close()
        }
        let links = recorded.filter { linkedOutputs?.contains($0) ?? true }
            .map { (output: "\(node):\(outputs[$0])", input: "\(sink):playback_\(positions[$0])") }
        do { try link(links, through: cli) } catch { throw SandboxError("linking outputs: \(error)") }
        let recording = try recordSink(sink, positions: recorded.map { positions[$0] }, reference: reference, node: node,
                                       signal: signal, linkedInputs: linkedInputs, during: during, cli: cli)
        var all = [[Float]](repeating: [], count: outputs.count)
        for (k, j) in recorded.enumerated() { all[j] = recording.outputs[k] }
        return Recording(outputs: all, reference: recording.reference, referenceSignal: recording.referenceSignal)
    }

    /// A channel name for the reference path that is none of `positions`, and of their kind:
    /// an AUX channel beside AUX channels, a named one beside named ones (PipeWire 0.3.65's
    /// channel mixer drops an AUX channel among named ones).
    func referenceChannel(besides positions: [String]) -> String {
        let aux = (0..<64).map { "AUX\($0)" }
        let named = ["FC", "LFE", "SL", "SR", "RC", "FLC", "FRC", "TC"]
        let candidates = positions.allSatisfy { $0.hasPrefix("AUX") } ? aux : named + aux
        return candidates.first { !positions.contains($0) }!
    }

    /// Plays `signal` (channel i into input i; only `linkedInputs` if given) through `node`,
    /// whose outputs are linked to `sink`, and records the sink's monitor: its channels
    /// `positions` and `reference`, where the player's first channel goes straight (the
    /// reference path: what the node's outputs are measured against).
    func recordSink(
        _ sink: String, positions: [String], reference: String, node: String, signal: TestSignal,
        linkedInputs: Set<Int>? = nil, during: (() throws -> Void)? = nil, cli: PwCli? = nil
    ) throws -> Recording {
        let ownCLI = cli == nil ? try PwCli(self) : nil
        defer { ownCLI?.close() }
        guard let cli = cli ?? ownCLI else { throw SandboxError("no pw-cli") }
        let tag = "\(node)-\(UInt32.random(in: 0..<UInt32.max))"
        let recorder = "recorder-\(tag)", player = "player-\(tag)"
        let wav = Sandbox.audioFolder + "crosspoint-\(tag)-in.wav", recorded = Sandbox.audioFolder + "crosspoint-\(tag)-out.wav"
        defer {
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: recorded)
        }
        try Wave.write(signal.channels, to: wav)
        let inputs = try portNames(of: node, direction: "input")
        guard !inputs.isEmpty else { throw SandboxError("node \(node) has no input ports") }

        let channels = positions + [reference]
        let recording = try start([
            "pw-record", "--target", sink, "-P", "{ stream.capture.sink = true node.name = \(recorder) }",
            "--channels", "\(channels.count)", "--channel-map", PipeWire.channelMap(channels),
            "--format", "f32", recorded,
        ])
        // Recording once WirePlumber has linked it to the sink's monitor (all its channels).
        do {
            _ = try waitFor("the recorder \(recorder) linked to \(sink)'s monitor") { graph in
                graph.links(of: recorder).filter { $0.peer == sink }.count == channels.count
            }
        } catch { recording.stop(); throw SandboxError("recorder: \(error)") }

        // The signal enters the graph once, into a null sink of its own, whose monitor feeds the
        // node's inputs and the reference path in the same cycle, before either reads it. A
        // player fed both itself before: on PipeWire 1.x, pw-cat is an asynchronous node (a
        // pw_stream without RT_PROCESS), which writes its next block when its own thread gets to
        // it, so on a loaded machine the node, early in the cycle, and the sink, at its end, could
        // read different blocks of it: a node's path off with the reference exact, or the other
        // way round. The source's links are made before the player starts (it sleeps till then).
        let source = "source-\(tag)"
        let sourceChannels = (0..<signal.channels.count).map { "AUX\($0)" }
        let madeSource = shell("pw_null_sink \(source) '\(sourceChannels.joined(separator: " "))'")
        guard madeSource.succeeded else { recording.stop(); throw SandboxError("the source's null sink: \(madeSource.stderr)") }
        defer {
            cli.send(["destroy \(source)"])
            if (try? waitFor("the source \(source) to go", timeout: 3) { $0.nodeID(source) == nil }) == nil {
                shell("pw_destroy_node \(source) || true")
            }
        }
        var inputLinks: [(output: String, input: String)] = []
        for (i, port) in inputs.enumerated() where i < signal.channels.count && (linkedInputs?.contains(i) ?? true) {
            inputLinks.append((output: "\(source):monitor_AUX\(i)", input: "\(node):\(port)"))
        }
        do {
            try link([(output: "\(source):monitor_AUX0", input: "\(sink):playback_\(reference)")] + inputLinks, through: cli)
        } catch {
            recording.stop()
            throw SandboxError("linking the source: \(error)")
        }
        let playing = try start([
            "pw-cat", "--playback", "-P", "{ node.autoconnect = false node.name = \(player) }",
            "--channels", "\(signal.channels.count)",
            "--channel-map", PipeWire.channelMap(sourceChannels), wav,
        ])
        // The player plays from its first link on, so every link is made within the signal's
        // silent lead-in: all of them in one batch through a pw-cli that is already connected;
        // the daemon makes them within milliseconds. (Linked in two batches, a loaded machine
        // took 0.4 to 0.9 s between them, past the 0.5 s lead-in.)
        let playerReady = shell("pw_wait_ports \(player) \(signal.channels.count) output")
        guard playerReady.succeeded else { playing.stop(); recording.stop(); throw SandboxError("player: \(playerReady.stderr)") }
        let linking = Date()
        var linked = 0.0
        do {
            try link(sourceChannels.map { (output: "\(player):output_\($0)", input: "\(source):playback_\($0)") }, through: cli)
            linked = Date().timeIntervalSince(linking)
        } catch {
            playing.stop(); recording.stop()
            throw SandboxError("linking the player: \(error)")
        }
        try during?()
        playing.wait(timeout: 30)
        usleep(300_000)
        recording.stop()
        // CROSSPOINT_KEEP_RECORDINGS=DIR keeps each recording there, with how long the links
        // took to show on the graph (an upper bound: pw-dump on a loaded machine is slow).
        if let keep = ProcessInfo.processInfo.environment["CROSSPOINT_KEEP_RECORDINGS"] {
            try? FileManager.default.copyItem(atPath: recorded, toPath: keep + "/\(tag).wav")
            try? "links seen \(linked) s after they were sent\n"
                .write(toFile: keep + "/\(tag).txt", atomically: false, encoding: .utf8)
        }
        let read = try Wave.read(recorded)
        guard read.count == channels.count else { throw SandboxError("recorded \(read.count) channels, expected \(channels.count)") }
        return Recording(outputs: Array(read.prefix(positions.count)), reference: read[positions.count],
                         referenceSignal: signal.channels[0])
    }

    /// Plays through `node`, compares with `gains` (rows = inputs), and checks every output
    /// within `tolerance` of full scale.
    func expectAudio(
        node: String, gains: [[Double]], linkedInputs: Set<Int>? = nil, linkedOutputs: Set<Int>? = nil,
        tolerance: Float = 1e-4, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let signal = TestSignal(channels: gains.count)
        var effective = gains
        if let linkedOutputs {  // an unlinked output reaches the sink as silence
            for i in effective.indices { for j in effective[i].indices where !linkedOutputs.contains(j) { effective[i][j] = 0 } }
        }
        let expected = signal.expected(gains: effective, linkedInputs: linkedInputs ?? Set(gains.indices))
        try compareJudgedByTheControl(node, expected: expected) {
            try playThrough(node: node, signal: signal, linkedInputs: linkedInputs, linkedOutputs: linkedOutputs)
        }.expectMatch(tolerance: tolerance, node, sourceLocation: sourceLocation)
    }

    /// What `record` records, compared with `expected`: made again while the rig's control
    /// glitches (`playJudgedByTheControl`), the last as it is.
    func compareJudgedByTheControl(_ what: String, expected: [[Float]], _ record: () throws -> Recording) throws -> Comparison {
        try playJudgedByTheControl(what) { last in
            let comparison = try Comparison(recording: try record(), expected: expected)
            try comparison.requireTheControl(last)
            return comparison
        }
    }

    /// Plays (and records) with `play` until a playing is judged. The reference path (the
    /// source's first channel straight into the sink, no node on it) is the rig's control: when
    /// it is not the signal, the machine lost a cycle of the player or the recorder, and the
    /// recording says nothing of the node (seen in CI under load, on 1.4 and on 0.3.65: reference
    /// error 0.2, the node's outputs off alike at the same lag). `play` throws `MachineGlitch`
    /// for such a playing (`Comparison.requireTheControl` does), which is printed and made
    /// again, at most `recordingsWhenTheMachineGlitches` times in all; on the last (`last` is
    /// true) nothing is excused. A node's own error, with the control exact, fails at once.
    @discardableResult
    func playJudgedByTheControl<T>(_ what: String, _ play: (_ last: Bool) throws -> T) throws -> T {
        var attempt = 1
        while true {
            let last = attempt == Self.recordingsWhenTheMachineGlitches
            do { return try play(last) } catch let glitch as MachineGlitch where !last {
                print("\(what): playing \(attempt): \(glitch.reason); played again")
            }
            attempt += 1
        }
    }

    /// How many playings `playJudgedByTheControl` makes at most when the machine glitches.
    static let recordingsWhenTheMachineGlitches = 3
}

/// A playing that says nothing of the node: the machine lost a cycle of the rig's own tools.
struct MachineGlitch: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension Comparison {
    /// Throws `MachineGlitch` when the rig's control (the reference path) is not the signal,
    /// unless this is the `last` playing (which is then judged as it is).
    func requireTheControl(_ last: Bool) throws {
        if referenceError > 1e-4 && !last { throw MachineGlitch("the reference path glitched (\(self))") }
    }
}

/// The PipeWire installed here (the tools' library), and what differs between versions.
enum PipeWire {
    /// From `pw-record --version` ("Linked with libpipewire 1.4.2"), read once.
    static let version: [Int] = {
        let result = Sandbox.run(["pw-record", "--version"], environment: ProcessInfo.processInfo.environment)
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("Linked with libpipewire ") } ?? ""
        let numbers = line.dropFirst("Linked with libpipewire ".count).split(separator: ".").compactMap { Int($0) }
        precondition(numbers.count >= 3, "cannot read PipeWire's version from pw-record --version: \(result.stdout) \(result.stderr)")
        return numbers
    }()

    static func atLeast(_ major: Int, _ minor: Int, _ micro: Int) -> Bool {
        version.lexicographicallyPrecedes([major, minor, micro]) == false
    }

    /// pw-cat's and pw-record's `--channel-map` for `positions`: before 1.3.81 a comma list
    /// (`AUX0,AUX1,AUX2`; a bracketed list is refused); from 1.3.81 a JSON list
    /// (`[ AUX0 AUX1 AUX2 ]`; 1.4.2 refuses the comma list for 3 or more channels).
    static func channelMap(_ positions: [String]) -> String {
        atLeast(1, 3, 81) ? "[ " + positions.joined(separator: " ") + " ]" : positions.joined(separator: ",")
    }
}
