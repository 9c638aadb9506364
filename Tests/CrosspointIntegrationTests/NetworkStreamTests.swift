import Foundation
import Testing

/// Network streams (`send`, `receive`: NetworkStreams.swift, NetworkDevice.swift) between two
/// daemons on two machines of the test's own network (`NetworkLab`: namespaces joined by a
/// bridge), each with a Crosspoint node made by its drop-in: a tone played into one node's
/// virtual sink leaves through its sender (PipeWire's `module-rtp-sink`, multicast), arrives
/// through the other node's receiver (`module-rtp-source`: by the session its sender announces
/// on 0.3.65, by group and port on 1.x) and is recorded from that node's virtual source.
@Suite(.serialized) struct NetworkStreamTests {
    /// The drop-ins of one run: a sender node `desk` (a sink `game`, a sender `wire`) and a
    /// receiver node `desk` (a receiver `lan`, a source `heard`), the stream's group, port and
    /// session random (runs of other tests may share the machine).
    private struct Setup {
        let folder: String
        let group: String
        let port: Int
        let session: String

        init() throws {
            folder = NSTemporaryDirectory() + "crosspoint-net-\(UInt32.random(in: 0..<UInt32.max))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            group = "239.69.\(Int.random(in: 1...254)).\(Int.random(in: 1...254))"
            port = 46000 + 2 * Int.random(in: 0..<500)
            session = "xp-\(UInt32.random(in: 0..<UInt32.max))"
        }

        func dropIn(_ name: String, devices: String) throws -> String {
            let path = folder + "/\(name).conf"
            try """
            context.modules = [
                {   name = libpipewire-module-crosspoint
                    args = {
                        node.name = "desk"
                        state.persist = false
                        input.position = [ FL FR ]
                        output.position = [ FL FR ]
                        devices = [ \(devices) ]
                    }
                }
            ]
            """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        var senderDevices: String {
            "{ type = sink name = game } { type = send name = wire to = \"\(group):\(port)\" session = \(session) }"
        }

        var receiverDevices: String {
            let how = PipeWire.atLeast(1, 0, 0) ? "from = \"\(group):\(port)\"" : "session = \(session)"
            return "{ type = receive name = lan \(how) latency = 40 } { type = source name = heard }"
        }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// A tone a channel (TestSignal: 330 Hz left, 520 Hz right) played into `game` of `player`'s
    /// node and recorded from `heard` of `recorder`'s, `settle` µs after it ended; `whilePlaying`
    /// runs while it plays. The two channels recorded.
    private func playTone(seconds: Double, into player: Sandbox, recordFrom recorder: Sandbox, settle: useconds_t,
                          whilePlaying: () throws -> Void = {}) throws -> [[Float]] {
        let signal = TestSignal(channels: 2, seconds: seconds)
        let tag = "\(UInt32.random(in: 0..<UInt32.max))"
        let wav = Sandbox.audioFolder + "crosspoint-net-\(tag)-in.wav", recorded = Sandbox.audioFolder + "crosspoint-net-\(tag)-out.wav"
        defer {
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: recorded)
        }
        try Wave.write(signal.channels, to: wav)
        let recording = try recorder.start([
            "pw-record", "--target", "heard", "-P", "{ node.name = net-rec-\(tag) }", "--channels", "2",
            "--channel-map", PipeWire.channelMap(["FL", "FR"]), "--format", "f32", recorded,
        ])
        #expect(recorder.shell("pw_wait_ports net-rec-\(tag) 2 input").succeeded)
        let playing = try player.start(["pw-play", "--target", "game", "-P", "{ node.name = net-play-\(tag) }", wav])
        try whilePlaying()
        playing.wait(timeout: 30)
        usleep(settle)
        recording.stop()
        let heard = try Wave.read(recorded)
        try #require(heard.count == 2)
        return heard
    }

    /// The state the node says a device is in (`crosspoint.devices`).
    private func deviceState(_ graph: Graph, _ name: String) -> String {
        let text = graph.nodes(named: "desk").first.map { Graph.props($0)["crosspoint.devices"] as? String ?? "" } ?? ""
        return text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix(name + ": ") } ?? "(not listed: \(text))"
    }

    @Test func aToneSentFromOneNodesOutputsArrivesAtAnothersInputsInOrderAndLevel() throws {
        let lab = try NetworkLab(machines: 2)
        defer { lab.close() }
        let setup = try Setup()
        defer { setup.remove() }
        let sender = try Sandbox(dropIns: [try setup.dropIn("sender", devices: setup.senderDevices)], prefix: lab.machines[0].prefix)
        defer { sender.stop() }
        let receiver = try Sandbox(dropIns: [try setup.dropIn("receiver", devices: setup.receiverDevices)], prefix: lab.machines[1].prefix)
        defer { receiver.stop() }

        // The sender: its RTP sink made, named after the device, linked from the node's outputs.
        _ = try sender.waitFor("the sender wire, linked", describe: { "wire: \(self.deviceState($0, "wire")); links \($0.links(of: "wire"))" }) { graph in
            self.deviceState(graph, "wire").hasPrefix("wire: ready") && graph.links(of: "wire").map(\.peer) == ["desk", "desk"]
        }
        // The receiver: its stream made once it is announced (0.3.65: SAP, every few seconds).
        _ = try receiver.waitFor("the receiver lan, linked", timeout: 20, describe: { "lan: \(self.deviceState($0, "lan")); links \($0.links(of: "lan"))" }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: ready") && graph.links(of: "lan").map(\.peer) == ["desk", "desk"]
        }

        // A tone a channel (330 Hz left, 520 Hz right), played into game on the first machine,
        // recorded from heard on the second (after the receiver's latency and the network's,
        // with room).
        let heard = try playTone(seconds: 2, into: sender, recordFrom: receiver, settle: 600_000)

        // Each channel where it was sent, at its level: the tone's amplitude in the steady part
        // of the recording (S16BE on the wire, the receiver's resampler: not bit for bit).
        let amplitude = 0.2
        for (k, other) in [(0, 1), (1, 0)] {
            let frequencies = [330.0, 520.0]
            let reading = Tone.readings(of: heard[k], at: frequencies[k]), own = reading.median
            let leak = Tone.amplitude(of: heard[k], at: frequencies[other])
            print("channel \(k): \(String(format: "%.4f", own)) at \(Int(frequencies[k])) Hz (sent \(amplitude)), \(String(format: "%.5f", leak)) at \(Int(frequencies[other])) Hz"
                  + " (\(reading.low) of \(reading.count) windows of 100 ms read it low: a block lost or repeated there)")
            #expect(abs(20 * log10(own / amplitude)) < 0.5,
                    "channel \(k): the tone arrived at \(own), sent at \(amplitude); its RMS every 100 ms: \(Tone.envelope(heard[k]))")
            #expect(leak < 0.002, "channel \(k) carries the other channel's tone (\(leak))")
        }
        // Removed with the node's devices: the sender's module unloaded, its node gone.
        #expect(sender.crosspoint("net", "remove", "desk", "wire").succeeded)
        _ = try sender.waitFor("the sender to go") { $0.nodeID("wire") == nil }
        #expect(sender.crosspoint("net", "list", "desk").stdout.contains("no network streams"))
    }

    /// A sender whose address cannot be reached (no route: the network down) is waited for,
    /// said in its state and once in the log, while the node mixes on; given a route, it is made.
    @Test func aSenderWithNoRouteIsWaitedForWhileTheNodeMixesOn() throws {
        let lab = try NetworkLab(machines: 1)
        defer { lab.close() }
        let setup = try Setup()
        defer { setup.remove() }
        let far = "10.\(Int.random(in: 200...250)).\(Int.random(in: 1...254)).1"
        let sandbox = try Sandbox(dropIns: [try setup.dropIn("alone", devices: """
            { type = sink name = game } { type = source name = heard } { type = send name = wire to = "\(far):5004" }
            """)], prefix: lab.machines[0].prefix)
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("the node and its devices") { graph in
            self.deviceState(graph, "game").hasPrefix("game: ready") && self.deviceState(graph, "heard").hasPrefix("heard: ready")
        }
        // Played into game and recorded from heard, through the node, while the sender waits
        // (not made without a route, on either version).
        let heard = try playTone(seconds: 4, into: sandbox, recordFrom: sandbox, settle: 300_000) {
            _ = try sandbox.waitFor("the sender to be retried", describe: { self.deviceState($0, "wire") }) { graph in
                self.deviceState(graph, "wire").hasPrefix("wire: retrying (")
            }
        }
        let amplitudes = [Tone.amplitude(of: heard[0], at: 330), Tone.amplitude(of: heard[1], at: 520)]
        #expect(amplitudes.allSatisfy { abs(20 * log10($0 / 0.2)) < 0.1 }, "the node mixed \(amplitudes) while its sender waited (0.2 played)")
        let state = self.deviceState(try Graph(sandbox), "wire")
        print("no route: \(state)")
        let logged = sandbox.daemonLog.split(separator: "\n").filter { $0.contains("device 'wire'") }
        #expect(logged.count == 1, "logged \(logged.count) times: \(logged.prefix(3))")
        // The network comes: the sender is made within a retry or two.
        #expect(lab.run(on: 0, "ip route add \(far)/32 dev \(lab.machines[0].link)").succeeded)
        _ = try sandbox.waitFor("the sender, now routed", timeout: 8, describe: { self.deviceState($0, "wire") }) { graph in
            self.deviceState(graph, "wire").hasPrefix("wire: ready") && graph.links(of: "wire").count == 2
        }
    }
}

/// A tone's amplitude in a recording.
enum Tone {
    /// The RMS of every 100 ms of `samples`, for a message: where a tone dropped out.
    static func envelope(_ samples: [Float], rate: Int = 48000) -> String {
        stride(from: 0, to: samples.count, by: rate / 10).map { start in
            let block = samples[start..<min(samples.count, start + rate / 10)]
            return String(format: "%.3f", (block.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, block.count))).squareRoot())
        }.joined(separator: " ")
    }

    /// The amplitude of the component at `frequency` in the part of `samples` above a tenth of
    /// its peak: the median of its readings over every 100 ms window there (a DFT bin; 330 and
    /// 520 Hz, the tests' tones, fill a window with whole periods, so neither leaks into the
    /// other's bin), the first and last windows left out (the tone's start and end).
    ///
    /// A window that straddles a block the receiver lost or repeated (a resync: the tone's phase
    /// jumps) reads the tone low, one DFT over both sides several dB low (CI on 1.4: -3 dB with
    /// the RMS steady; CI on 0.3.65, both suites running at once: three such places in two
    /// seconds, four 250 ms windows read -0.9 dB). The level is the tone's where it plays on; the
    /// median of some fifteen windows is that while fewer than half straddle a resync.
    static func amplitude(of samples: [Float], at frequency: Double, rate: Double = 48000) -> Double {
        readings(of: samples, at: frequency, rate: rate).median
    }

    /// The readings `amplitude` takes the median of, in order, with how many windows read the
    /// tone more than 0.5 dB under their median (the places a receiver lost or repeated a block).
    static func readings(of samples: [Float], at frequency: Double, rate: Double = 48000) -> (median: Double, low: Int, count: Int) {
        let peak = samples.map { abs($0) }.max() ?? 0
        guard peak > 0, let first = samples.firstIndex(where: { abs($0) > peak / 10 }),
              let last = samples.lastIndex(where: { abs($0) > peak / 10 }) else { return (0, 0, 0) }
        let length = Int(rate / 10)
        let starts = Array(stride(from: first + length, to: last - 2 * length, by: length))
        guard starts.count >= 5 else { return (0, 0, 0) }
        let readings = starts.map { start -> Double in
            var re = 0.0, im = 0.0
            for n in start..<(start + length) {
                let phase = 2 * Double.pi * frequency * Double(n - start) / rate
                re += Double(samples[n]) * cos(phase)
                im += Double(samples[n]) * sin(phase)
            }
            return 2 * (re * re + im * im).squareRoot() / Double(length)
        }
        let sorted = readings.sorted()
        let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        return (median, readings.filter { $0 < median * 0.944 }.count, readings.count)
    }
}
