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

        /// A receiver `lan` of the stream and a source `heard`: by the name its sender announces
        /// (`byName`, and on 0.3.65 always: its receiver takes nothing else), else by group and port.
        func receiverDevices(byName: Bool) -> String {
            let how = byName || !PipeWire.atLeast(1, 0, 0) ? "session = \(session)" : "from = \"\(group):\(port)\""
            return "{ type = receive name = lan \(how) latency = 40 } { type = source name = heard }"
        }

        /// A drop-in of PipeWire's own RTP modules, loaded by hand as its documentation shows
        /// (`context.modules`), no Crosspoint in it.
        func plainDropIn(_ name: String, modules: String) throws -> String {
            let path = folder + "/\(name).conf"
            try "context.modules = [\n\(modules)\n]\n".write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        /// A stock `module-rtp-sink` (`plain-tx`, an Audio/Sink) sending to `group`:`port`,
        /// announced as `session` (0.3.65 announces by SAP itself).
        func plainSender(group: String, port: Int, session: String) -> String {
            """
                {   name = libpipewire-module-rtp-sink
                    args = {
                        destination.ip = "\(group)" destination.port = \(port) sess.name = "\(session)"
                        stream.props = { node.name = plain-tx media.class = Audio/Sink }
                    }
                }
            """
        }

        /// A stock `module-rtp-source` (`plain-rx`, an Audio/Source) receiving `group`:`port`
        /// on 1.x, the session `session` announces on 0.3.65 (its SAP rule, as its documentation
        /// shows).
        func plainReceiver(group: String, port: Int, session: String) -> String {
            let how = PipeWire.atLeast(1, 0, 0)
                ? "source.ip = \"\(group)\" source.port = \(port)"
                : "stream.rules = [ { matches = [ { rtp.session = \"\(session)\" } ] actions = { create-stream = { node.name = plain-rx } } } ]"
            return """
                {   name = libpipewire-module-rtp-source
                    args = {
                        sess.latency.msec = 40 \(how)
                        stream.props = { node.name = plain-rx media.class = Audio/Source node.autoconnect = false }
                    }
                }
            """
        }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// A tone a channel (TestSignal: 330 Hz left, 520 Hz right) played into `game` of `player`'s
    /// node and recorded from `heard` of `recorder`'s, `settle` µs after it ended; `whilePlaying`
    /// runs while it plays. The two channels recorded.
    private func playTone(seconds: Double, into player: Sandbox, recordFrom recorder: Sandbox, settle: useconds_t,
                          sink: String = "game", source: String = "heard",
                          whilePlaying: () throws -> Void = {}) throws -> [[Float]] {
        try playAndRecord(TestSignal(channels: 2, seconds: seconds).channels, into: player, recordFrom: recorder, settle: settle,
                          sink: sink, source: source, whilePlaying: whilePlaying)
    }

    /// Two channels played into `sink` of `player`'s node and recorded from `source` of
    /// `recorder`'s, `settle` µs after they ended.
    private func playAndRecord(_ channels: [[Float]], into player: Sandbox, recordFrom recorder: Sandbox, settle: useconds_t,
                               sink: String = "game", source: String = "heard",
                               whilePlaying: () throws -> Void = {}) throws -> [[Float]] {
        let tag = "\(UInt32.random(in: 0..<UInt32.max))"
        let wav = Sandbox.audioFolder + "crosspoint-net-\(tag)-in.wav", recorded = Sandbox.audioFolder + "crosspoint-net-\(tag)-out.wav"
        defer {
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: recorded)
        }
        try Wave.write(channels, to: wav)
        let recording = try recorder.start([
            "pw-record", "--target", source, "-P", "{ node.name = net-rec-\(tag) }", "--channels", "2",
            "--channel-map", PipeWire.channelMap(["FL", "FR"]), "--format", "f32", recorded,
        ])
        #expect(recorder.shell("pw_wait_ports net-rec-\(tag) 2 input").succeeded)
        let playing = try player.start(["pw-play", "--target", sink, "-P", "{ node.name = net-play-\(tag) }", wav])
        try whilePlaying()
        playing.wait(timeout: 30)
        usleep(settle)
        recording.stop()
        let heard = try Wave.read(recorded)
        try #require(heard.count == 2)
        return heard
    }

    /// Each channel where it was sent, at its level: the tone's amplitude in the steady part of
    /// the recording (S16BE on the wire, the receiver's resampler: not bit for bit), and nothing
    /// of the other channel's tone.
    private func expectTone(_ heard: [[Float]], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        // The level from each 100 ms window's RMS (a receiver's adaptive resampler moves the
        // tone's pitch a little while it keeps its latency, which a DFT bin reads as a lower
        // level: CI-like load on 0.3.65, 0.5 dB and more), the DFT saying which tone it is.
        let amplitude = 0.2, frequencies = [330.0, 520.0]
        for (k, other) in [(0, 1), (1, 0)] {
            let reading = Tone.readings(of: heard[k], at: frequencies[k]), own = reading.median
            let level = Tone.level(of: heard[k])
            let leak = Tone.amplitude(of: heard[k], at: frequencies[other])
            print("\(what): channel \(k): level \(String(format: "%.4f", level)) (sent \(amplitude)), "
                  + "\(String(format: "%.4f", own)) at \(Int(frequencies[k])) Hz, \(String(format: "%.5f", leak)) at \(Int(frequencies[other])) Hz"
                  + " (\(reading.low) of \(reading.count) windows of 100 ms read it low: a block lost or repeated there)")
            #expect(level > 0 && abs(20 * log10(level / amplitude)) < 0.5,
                    "\(what): channel \(k): the tone arrived at \(level), sent at \(amplitude); its RMS every 100 ms: \(Tone.envelope(heard[k]))",
                    sourceLocation: sourceLocation)
            #expect(own > amplitude / 2, "\(what): channel \(k) does not carry its own tone (\(own) at \(frequencies[k]) Hz)", sourceLocation: sourceLocation)
            #expect(leak < 0.002, "\(what): channel \(k) carries the other channel's tone (\(leak))", sourceLocation: sourceLocation)
        }
    }

    /// A playing judged only where no graph of `sandboxes` missed a cycle (a late player,
    /// recorder or receiver under load loses or repeats a block that no network did): played
    /// again, at most three times in all, while one did; the last playing and whether it was
    /// clean.
    /// `before` runs ahead of each playing, before the counting starts; `settle` is waited
    /// inside it (a cycle missed while the receivers settle disturbs them too).
    private func judgedPlaying<T>(_ what: String, on sandboxes: [Sandbox], before: () throws -> Void = {}, settle: useconds_t = 0,
                                  _ play: () throws -> T) throws -> (T, clean: Bool) {
        var attempt = 1
        while true {
            try before()
            let counters = try sandboxes.map { try MissedCycles($0) }
            usleep(settle)
            let result = try play()
            let missed = counters.map { $0.stop() }
            if missed.allSatisfy({ $0 == 0 }) { return (result, true) }
            print("\(what): the graphs missed \(missed.map { $0.map(String.init) ?? "?" }.joined(separator: ", ")) cycles (attempt \(attempt) of 3)")
            if attempt == 3 { return (result, false) }
            attempt += 1
        }
    }

    /// A receiver of `setup`'s stream feeding `channels`: by its session on 0.3.65, by group
    /// and port on 1.x.
    /// `aes67`: an AES67 receiver (1.x only).
    private func receiveLine(_ name: String, _ setup: Setup, latency: Int, channels: String, aes67: Bool = false) -> String {
        let how = PipeWire.atLeast(1, 0, 0) ? "from = \"\(setup.group):\(setup.port)\"" : "session = \(setup.session)"
        return "{ type = receive name = \(name) \(how) latency = \(latency) channels = [ \(channels) ]\(aes67 ? " protocol = aes67" : "") }"
    }

    /// `receiveLine`'s receiver `name` of node `desk` removed and made again by the command
    /// line (a receiver once disturbed holds more latency for a long while).
    private func remakeReceiver(_ sandbox: Sandbox, _ name: String, _ setup: Setup, latency: Int, inputs: String, aes67: Bool = false) {
        #expect(sandbox.crosspoint("net", "remove", "desk", name).succeeded)
        let from = (PipeWire.atLeast(1, 0, 0) ? ["--from", "\(setup.group):\(setup.port)"] : ["--session", setup.session])
            + (aes67 ? ["--protocol", "aes67"] : [])
        let made = sandbox.run([crosspointExecutable, "net", "receive", "desk", name, "--latency", "\(latency)", "--inputs", inputs] + from, timeout: 30)
        #expect(made.succeeded, "\(name) made anew: \(made.stderr)")
    }

    /// A drop-in of a node `desk` of the same channels in and out (`positions`), a matrix and
    /// `devices`, in `setup`'s folder.
    private func matrixDropIn(_ setup: Setup, _ name: String, positions: String, matrix: String, devices: String) throws -> String {
        let path = setup.folder + "/\(name).conf"
        try """
        context.modules = [
            {   name = libpipewire-module-crosspoint
                args = {
                    node.name = "desk" state.persist = false ramp.ms = 0
                    input.position = [ \(positions) ] output.position = [ \(positions) ]
                    matrix = \(matrix)
                    devices = [ \(devices) ]
                }
            }
        ]
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Waits for each of `devices` (two channels each) to be ready and linked to the node.
    private func waitLinked(_ sandbox: Sandbox, _ devices: [String]) throws {
        _ = try sandbox.waitFor(devices.joined(separator: ", ") + ", linked", timeout: 20,
                                describe: { graph in devices.map { "\(self.deviceState(graph, $0)) (\(graph.links(of: $0).count) links)" }.joined(separator: "; ") }) { graph in
            devices.allSatisfy { self.deviceState(graph, $0).hasPrefix("\($0): ready") && graph.links(of: $0).count == 2 }
        }
    }

    /// A node of a sink `game` and a sender `name` (`sender`: its options) that the running
    /// PipeWire cannot make: the sender said failed, `because` first, and the sink made.
    private func expectRefused(_ setup: Setup, _ name: String, sender: String, because: String, dropIns: [String] = []) throws {
        let sandbox = try Sandbox(dropIns: dropIns + [try setup.dropIn(name, devices: "{ type = sink name = game } { type = send name = \(name) \(sender) }")])
        defer { sandbox.stop() }
        let graph = try sandbox.waitFor("the sender \(name) refused, the sink made", describe: { self.deviceState($0, name) }) { graph in
            self.deviceState(graph, name).hasPrefix("\(name): failed (\(because)") && self.deviceState(graph, "game").hasPrefix("game: ready")
        }
        print("refused: \(self.deviceState(graph, name))")
    }

    /// The state the node says a device is in (`crosspoint.devices`).
    private func deviceState(_ graph: Graph, _ name: String, node: String = "desk") -> String {
        let text = graph.nodes(named: node).first.map { Graph.props($0)["crosspoint.devices"] as? String ?? "" } ?? ""
        return text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix(name + ": ") } ?? "(not listed: \(text))"
    }

    @Test func aToneSentFromOneNodesOutputsArrivesAtAnothersInputsInOrderAndLevel() throws {
        let lab = try NetworkLab(machines: 2)
        defer { lab.close() }
        let setup = try Setup()
        defer { setup.remove() }
        let sender = try Sandbox(dropIns: [try setup.dropIn("sender", devices: setup.senderDevices)], prefix: lab.machines[0].prefix)
        defer { sender.stop() }
        let receiver = try Sandbox(dropIns: [try setup.dropIn("receiver", devices: setup.receiverDevices(byName: true))], prefix: lab.machines[1].prefix)
        defer { receiver.stop() }

        // The sender: its RTP sink made, named after the device, linked from the node's outputs.
        _ = try sender.waitFor("the sender wire, linked", describe: { "wire: \(self.deviceState($0, "wire")); links \($0.links(of: "wire"))" }) { graph in
            self.deviceState(graph, "wire").hasPrefix("wire: ready") && graph.links(of: "wire").map(\.peer) == ["desk", "desk"]
        }
        // The receiver: its stream made once it is announced (0.3.65: SAP, every few seconds).
        _ = try receiver.waitFor("the receiver lan, linked", timeout: 20, describe: { "lan: \(self.deviceState($0, "lan")); links \($0.links(of: "lan"))" }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: ready") && graph.links(of: "lan").map(\.peer) == ["desk", "desk"]
        }

        // The stream, announced (SAP: 0.3.65's sender by itself, 1.x's through the module-rtp-sap
        // the node loads beside it), is listed on the second machine with where it goes.
        let listed = lab.run(on: 1, "\(crosspointExecutable) net list --announced --listen 6")
        #expect(listed.succeeded && listed.stdout.contains("\(setup.session): \(setup.group):\(setup.port), L16/48000/2"),
                "crosspoint net list --announced: \(listed.stdout) \(listed.stderr)")
        print(listed.stdout)

        // A tone a channel (330 Hz left, 520 Hz right), played into game on the first machine,
        // recorded from heard on the second (after the receiver's latency and the network's,
        // with room).
        let heard = try playTone(seconds: 2, into: sender, recordFrom: receiver, settle: 600_000)

        expectTone(heard, "sent from node to node")

        // The sender's daemon restarts (its node and sender made again by the drop-in; 0.3.65's
        // sender says goodbye by SAP and announces again): the receiver hears the stream again
        // by itself, nothing done on its machine.
        try sender.restartDaemon()
        _ = try sender.waitFor("the sender wire, made again and linked", describe: { "wire: \(self.deviceState($0, "wire")); links \($0.links(of: "wire"))" }) { graph in
            self.deviceState(graph, "wire").hasPrefix("wire: ready") && graph.links(of: "wire").map(\.peer) == ["desk", "desk"]
        }
        _ = try receiver.waitFor("the receiver lan, linked again", timeout: 20, describe: { "lan: \(self.deviceState($0, "lan")); links \($0.links(of: "lan"))" }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: ready") && graph.links(of: "lan").map(\.peer) == ["desk", "desk"]
        }
        expectTone(try playTone(seconds: 2, into: sender, recordFrom: receiver, settle: 600_000), "after the sender's daemon restarted")

        // Removed with the node's devices: the sender's module unloaded, its node gone.
        #expect(sender.crosspoint("net", "remove", "desk", "wire").succeeded)
        _ = try sender.waitFor("the sender to go") { $0.nodeID("wire") == nil }
        #expect(sender.crosspoint("net", "list", "desk").stdout.contains("no network streams"))
    }

    /// AES67 (PipeWire 1.x): a node's AES67 sender on one machine, a node's AES67 receiver of
    /// it by name on another, each daemon with the PTP clock setup (conf/crosspoint-ptp-clock.conf)
    /// and ptp4l on both machines (the receiver's the grandmaster). The stream is announced on
    /// AES67's SAP group as L24 at 48 kHz in 1 ms packets, naming the grandmaster ptp4l follows
    /// (asked through the socket of `ptp=`); each node is driven by its machine's PTP clock
    /// (its streams in the clock's group); a tone arrives in order and level. On 0.3.65 an
    /// AES67 stream is refused, saying why, and the node's other devices are made.
    @Test func anAES67StreamNamesItsPTPGrandmasterAndIsDrivenByThePTPClock_OrIsRefusedBeforePipeWire1() throws {
        let setup = try Setup()
        defer { setup.remove() }
        let clock = repositoryRoot.appendingPathComponent("conf/crosspoint-ptp-clock.conf").path
        guard PipeWire.atLeast(1, 0, 0) else {
            try expectRefused(setup, "stage", sender: "to = \"\(setup.group):\(setup.port)\" protocol = aes67", because: "AES67 needs PipeWire 1.0",
                              dropIns: [clock])
            return
        }
        let lab = try NetworkLab(machines: 2)
        defer { lab.close() }
        let ptp = try PTP(lab, grandmaster: 1, folder: setup.folder)
        defer { ptp.stop() }
        try ptp.waitFollowing()
        let sender = try Sandbox(dropIns: [clock, try setup.dropIn("sender", devices: """
            { type = sink name = game }
            { type = send name = wire to = "\(setup.group):\(setup.port)" session = \(setup.session) protocol = aes67 ptp = "\(ptp.readOnlySocket(of: 0))" }
            """)], prefix: lab.machines[0].prefix)
        defer { sender.stop() }
        let receiver = try Sandbox(dropIns: [clock, try setup.dropIn("receiver", devices: """
            { type = receive name = lan session = \(setup.session) protocol = aes67 latency = 40 } { type = source name = heard }
            """)], prefix: lab.machines[1].prefix)
        defer { receiver.stop() }
        for sandbox in [sender, receiver] {
            #expect(sandbox.run(["pw-metadata", "-n", "settings", "0", "clock.force-quantum", "256"]).succeeded)
        }
        _ = try sender.waitFor("the AES67 sender wire, linked", describe: { "wire: \(self.deviceState($0, "wire")); links \($0.links(of: "wire"))" }) { graph in
            self.deviceState(graph, "wire").hasPrefix("wire: ready") && graph.links(of: "wire").map(\.peer) == ["desk", "desk"]
        }
        _ = try receiver.waitFor("the AES67 receiver lan, linked", timeout: 20, describe: { "lan: \(self.deviceState($0, "lan")); links \($0.links(of: "lan"))" }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: ready") && graph.links(of: "lan").map(\.peer) == ["desk", "desk"]
        }

        // Announced on AES67's group, naming the grandmaster once the sender's ptp4l follows
        // it (asked at each announcement, every 5 s).
        let grandmaster = try #require(ptp.grandmasterClock(), "the grandmaster's identity in its log: \(ptp.describe())")
        var listed = CommandResult(status: -1, stdout: "", stderr: "")
        for _ in 0..<4 {
            listed = lab.run(on: 1, "\(crosspointExecutable) net list --announced --listen 6")
            if listed.stdout.contains("clock \(grandmaster)") { break }
        }
        print(listed.stdout)
        #expect(listed.stdout.contains("\(setup.session): \(setup.group):\(setup.port), L24/48000/2"), "crosspoint net list --announced: \(listed.stdout) \(listed.stderr)")
        #expect(listed.stdout.contains("1 ms packets, clock \(grandmaster)"), "the announcement does not name the grandmaster \(grandmaster): \(listed.stdout)\n\(ptp.describe())")

        // Each node driven by its machine's PTP clock: its streams joined the clock's group.
        for (sandbox, stream) in [(sender, "wire"), (receiver, "lan")] {
            _ = try sandbox.waitFor("desk and \(stream) driven by PTP0-Driver", describe: { graph in
                ["desk", stream].map { "\($0): driver \(Graph.props(graph.nodes(named: $0).first ?? [:])["node.driver-id"] ?? "none")" }.joined(separator: ", ")
                    + ", PTP0-Driver \(graph.nodeID("PTP0-Driver").map(String.init) ?? "missing")"
            }) { graph in
                guard let driver = graph.nodeID("PTP0-Driver") else { return false }
                return ["desk", stream].allSatisfy { (Graph.props(graph.nodes(named: $0).first ?? [:])["node.driver-id"] as? Int) == driver }
            }
        }
        expectTone(try playTone(seconds: 2, into: sender, recordFrom: receiver, settle: 600_000), "AES67 from node to node, PTP-driven")
        let offsets = ptp.offsets(of: 0)
        print("ptp4l on the sender's machine: \(offsets.count) offsets from the grandmaster, up to \(offsets.map(abs).max() ?? 0) ns (running free: one kernel's clock)")
    }

    /// Nothing private on the wire: a node's stream is heard by PipeWire's own receiver loaded
    /// by hand, and PipeWire's own sender loaded by hand is heard by a node's receiver.
    @Test func plainRTPModulesLoadedByHandHearANodeAndAreHeardByOne() throws {
        let lab = try NetworkLab(machines: 2)
        defer { lab.close() }
        let there = try Setup(), back = try Setup()  // node to plain receiver; plain sender to node
        defer { there.remove(); back.remove() }
        let sender = try Sandbox(dropIns: [try there.dropIn("sender", devices: there.senderDevices),
                                           try there.plainDropIn("plain-sender", modules: back.plainSender(group: back.group, port: back.port, session: back.session))],
                                 prefix: lab.machines[0].prefix)
        defer { sender.stop() }
        let receiver = try Sandbox(dropIns: [try back.dropIn("receiver", devices: back.receiverDevices(byName: false)),
                                             try there.plainDropIn("plain-receiver", modules: there.plainReceiver(group: there.group, port: there.port, session: there.session))],
                                   prefix: lab.machines[1].prefix)
        defer { receiver.stop() }
        _ = try sender.waitFor("the sender wire, linked, and plain-tx", describe: { "wire: \(self.deviceState($0, "wire")); plain-tx \($0.nodeID("plain-tx").map(String.init) ?? "none")" }) { graph in
            self.deviceState(graph, "wire").hasPrefix("wire: ready") && graph.links(of: "wire").count == 2 && graph.nodeID("plain-tx") != nil
        }
        // 0.3.65: both receivers made once their sessions are announced (SAP, every few seconds).
        _ = try receiver.waitFor("the receiver lan, linked, and plain-rx", timeout: 20, describe: { "lan: \(self.deviceState($0, "lan")); plain-rx \($0.nodeID("plain-rx").map(String.init) ?? "none")" }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: ready") && graph.links(of: "lan").count == 2 && graph.nodeID("plain-rx") != nil
        }
        expectTone(try playTone(seconds: 2, into: sender, recordFrom: receiver, settle: 600_000, source: "plain-rx"),
                   "a node's sender to a plain module-rtp-source")
        expectTone(try playTone(seconds: 2, into: sender, recordFrom: receiver, settle: 600_000, sink: "plain-tx"),
                   "a plain module-rtp-sink to a node's receiver")
    }

    /// README, "A stream mix for another machine": the streaming desk (conf/crosspoint-desk.conf)
    /// sends its stream mix with one command, the other machine enables the ready-made receiver
    /// (conf/crosspoint-stream-in.conf), and what is played into the desk's Game device is
    /// recorded there from "Stream from the desk".
    @Test func theDesksStreamMixReachesAnotherMachineInThreeSteps() throws {
        let lab = try NetworkLab(machines: 2)
        defer { lab.close() }
        let setup = try Setup()
        defer { setup.remove() }
        let conf = { (name: String) in repositoryRoot.appendingPathComponent(name).path }
        let desk = try Sandbox(dropIns: [conf("Tests/CrosspointIntegrationTests/Fixtures/interface.conf"), conf("conf/crosspoint-desk.conf")],
                               prefix: lab.machines[0].prefix)
        defer { desk.stop() }
        _ = try desk.waitFor("the desk and its devices") { self.deviceState($0, "game").hasPrefix("game: ready") }
        // 1. On the desk's machine: the stream mix sent (the README's command, a group of this run).
        let sent = desk.crosspoint("net", "send", "desk", "stream-out", "--to", "\(setup.group):\(setup.port)", "--outputs", "stream_FL,stream_FR")
        #expect(sent.succeeded, "\(sent.stderr)")
        _ = try desk.waitFor("stream-out, linked", describe: { self.deviceState($0, "stream-out") }) { graph in
            self.deviceState(graph, "stream-out").hasPrefix("stream-out: ready") && graph.links(of: "stream-out").count == 2
        }
        // 2. On the other machine: the ready-made receiver enabled (PipeWire started with it).
        let other = try Sandbox(dropIns: [conf("conf/crosspoint-stream-in.conf")], prefix: lab.machines[1].prefix)
        defer { other.stop() }
        _ = try other.waitFor("the desk's stream, received and linked", timeout: 20,
                              describe: { "\(self.deviceState($0, "desk-stream", node: "stream-in")); \(self.deviceState($0, "stream-from-desk", node: "stream-in"))" }) { graph in
            self.deviceState(graph, "desk-stream", node: "stream-in").hasPrefix("desk-stream: ready") && graph.links(of: "desk-stream").count == 2
                && self.deviceState(graph, "stream-from-desk", node: "stream-in").hasPrefix("stream-from-desk: ready")
        }
        // 3. Recorded there from "Stream from the desk": the game's tone, each channel in its place.
        expectTone(try playTone(seconds: 2, into: desk, recordFrom: other, settle: 600_000, source: "stream-from-desk"),
                   "the desk's stream mix on the other machine")
    }

    /// VBAN (VB-Audio's protocol, Voicemeeter's): on PipeWire 1.x a node sends its outputs to
    /// another machine's address as a named VBAN stream (`module-vban-send`), and that machine's
    /// node receives the stream of that name (`module-vban-recv`, on VBAN's port); on 0.3.65,
    /// which has no VBAN, the device says so and the node runs on.
    @Test func aVBANStreamGoesFromNodeToNodeByItsName_OrIsRefusedWherePipeWireHasNoVBAN() throws {
        let setup = try Setup()
        defer { setup.remove() }
        guard PipeWire.atLeast(0, 3, 76) else {
            try expectRefused(setup, "vm", sender: "to = \"127.0.0.1:6980\" protocol = vban", because: "VBAN needs PipeWire 0.3.76")
            return
        }
        let lab = try NetworkLab(machines: 2)
        defer { lab.close() }
        let name = "xp\(UInt16.random(in: 0..<UInt16.max))"  // VBAN's stream names: at most 15 characters
        let sender = try Sandbox(dropIns: [try setup.dropIn("vban-sender", devices: """
            { type = sink name = game } { type = send name = vm to = "\(lab.machines[1].address):6980" protocol = vban session = \(name) }
            """)], prefix: lab.machines[0].prefix)
        defer { sender.stop() }
        let receiver = try Sandbox(dropIns: [try setup.dropIn("vban-receiver", devices: """
            { type = receive name = lan protocol = vban session = \(name) latency = 40 } { type = source name = heard }
            """)], prefix: lab.machines[1].prefix)
        defer { receiver.stop() }
        _ = try sender.waitFor("the VBAN sender, linked", describe: { "vm: \(self.deviceState($0, "vm")); links \($0.links(of: "vm"))" }) { graph in
            self.deviceState(graph, "vm").hasPrefix("vm: ready") && graph.links(of: "vm").map(\.peer) == ["desk", "desk"]
        }
        // The receiver's stream is made when the first packet of that name arrives: a second
        // of sound played first (the sender sends while its graph runs).
        let primer = Sandbox.audioFolder + "crosspoint-vban-\(name).wav"
        try Wave.write(TestSignal(channels: 2, seconds: 1).channels, to: primer)
        defer { try? FileManager.default.removeItem(atPath: primer) }
        let priming = try sender.start(["pw-play", "--target", "game", primer])
        _ = try receiver.waitFor("the VBAN receiver lan, linked", timeout: 20, describe: { "lan: \(self.deviceState($0, "lan")); links \($0.links(of: "lan"))" }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: ready") && graph.links(of: "lan").map(\.peer) == ["desk", "desk"]
        }
        _ = priming.wait(timeout: 10)
        expectTone(try playTone(seconds: 2, into: sender, recordFrom: receiver, settle: 600_000), "VBAN from node to node")
    }

    /// A hostile peer floods a receiver's group and port with junk (bounded: 3,000 datagrams in
    /// at most 4 s, from the other machine: random bytes, RTP headers that claim more than the
    /// datagram holds, RTP of another sender; on 1.x junk SAP announcements too). RTP has no
    /// authentication: what looks like RTP plays into the receiver while the flood lasts, as in
    /// any RTP receiver; the rest is dropped. Both daemons and nodes live on, and the stream
    /// plays right again once the flood is over, nothing done.
    @Test func junkOnAReceiversPortLeavesTheNodeAndThenTheStreamPlaying() throws {
        let lab = try NetworkLab(machines: 2)
        defer { lab.close() }
        let setup = try Setup()
        defer { setup.remove() }
        let sender = try Sandbox(dropIns: [try setup.dropIn("sender", devices: setup.senderDevices)], prefix: lab.machines[0].prefix)
        defer { sender.stop() }
        let receiver = try Sandbox(dropIns: [try setup.dropIn("receiver", devices: setup.receiverDevices(byName: false))], prefix: lab.machines[1].prefix)
        defer { receiver.stop() }
        _ = try receiver.waitFor("the receiver lan, linked", timeout: 20, describe: { "lan: \(self.deviceState($0, "lan"))" }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: ready") && graph.links(of: "lan").count == 2
        }
        let flood = """
        import os, random, socket, struct, sys, time
        group, port, sap = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "sap"
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        end, sent = time.monotonic() + 4, 0
        while sent < 3000 and time.monotonic() < end:
            kind = sent % 5
            if kind == 0: data = os.urandom(random.randint(0, 1400))
            elif kind == 1: data = bytes([0x8f, 127]) + os.urandom(10)                        # 15 CSRCs claimed, none there
            elif kind == 2: data = bytes([0x90, 127]) + os.urandom(10) + b"\\xff\\xff\\xff\\xff"  # an extension longer than the datagram
            elif kind == 3: data = bytes([0x80, 127]) + os.urandom(10) + os.urandom(random.randint(0, 1400))  # RTP of another sender
            else: data = bytes([0x80, 127, 0, 0]) + b"\\0" * 8 + b"\\1" * 7                    # a payload that is not whole frames
            s.sendto(data, (group, port)); sent += 1
            if sap and sent % 10 == 0:  # junk announcements: a header that lies, an SDP of nonsense
                s.sendto(bytes([0x20, 0, 0, 1]) + os.urandom(4) + b"application/sdp\\0v=0\\ns=" + os.urandom(64) + b"\\nm=audio x RTP/AVP y", ("224.0.0.56", 9875))
            time.sleep(0.001)
        print(sent)
        """
        let script = NSTemporaryDirectory() + "crosspoint-flood-\(UInt32.random(in: 0..<UInt32.max)).py"
        try flood.write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        var sent = ""
        _ = try playTone(seconds: 4, into: sender, recordFrom: receiver, settle: 300_000) {
            // Junk announcements too on 1.x (its module-rtp-sap listens beside each sender and
        // receiver); not on 0.3.65, whose RTP receiver a malformed announcement ends, and the
        // daemon with it (measured: a segfault in module-rtp-source; README).
        let result = lab.run(on: 0, "python3 \(script) \(setup.group) \(setup.port) \(PipeWire.atLeast(1, 0, 0) ? "sap" : "rtp")")
            sent = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(result.succeeded, "the flood: \(result.stderr)")
        }
        print("junk: \(sent) datagrams sent to \(setup.group):\(setup.port) in at most 4 s")
        #expect(Int(sent) ?? 0 > 500, "the flood sent \(sent) datagrams")
        // Both nodes there and their devices ready; the stream plays right again.
        for (sandbox, device) in [(sender, "wire"), (receiver, "lan")] {
            let graph = try Graph(sandbox)
            #expect(graph.nodeID("desk") != nil && self.deviceState(graph, device).hasPrefix("\(device): ready"), "\(device): \(self.deviceState(graph, device))")
        }
        expectTone(try playTone(seconds: 2, into: sender, recordFrom: receiver, settle: 600_000), "after the flood")
    }

    /// Delay, loss and jitter between two machines, measured there and back (each daemon runs
    /// its own clock; one recording on the first machine holds the sound as played and as it
    /// came back, so no clock is compared with another). The first machine's node `desk` (4 x 4)
    /// sends what is played into `game` (inputs FL, FR) to the second's through `wire` (outputs
    /// FL, FR), and receives it back through `ret` (inputs RL, RR); its source `heard` carries
    /// the sound as played (output RL = input FL) and as it came back (output RR = input RL).
    /// The second machine's node receives it (`lan`, latency 40 ms) and sends it straight back
    /// (`back`). Both graphs at quantum 256. What is compared with the network's effect is
    /// judged only where neither graph missed a cycle (MissedCycles; played again up to three
    /// times), as the virtual devices' delay is.
    ///
    /// 1. Delay: a click comes back two receivers' latencies later (one hop each way: the
    ///    sender's packet, the receiver's held latency); printed against the target, each hop
    ///    within 1 ms plus a quantum of the latency configured.
    /// 2. Loss: none, 1% and 5% of the packets to the second machine dropped on their way in
    ///    (nftables' random `numgen`, counted), then none again, a tone played meanwhile: the
    ///    places the returned tone jumps (a lost packet's block, or a resync) are counted beside
    ///    the packets dropped, the tone plays on (within 3 dB: a lost block is silence or older
    ///    sound), and with no loss it plays clean, at its level.
    /// 3. Jitter: the way to the second machine made to jitter by queueing (a token bucket on
    ///    the first machine's link and bursts of other traffic ahead of the stream; this kernel
    ///    has no `tc netem`), measured by probes sent the same way; a receiver within its
    ///    latency plays clean, and one below it is counted.
    @Test func aClickThereAndBackTakesTwoReceiversLatencies_AndLossAndJitterAreCounted() throws {
        let lab = try NetworkLab(machines: 2)
        defer { lab.close() }
        let there = try Setup(), back = try Setup()
        defer { there.remove(); back.remove() }
        let latency = 40, quantum = 256
        func receive(_ name: String, _ setup: Setup, channels: String) -> String { receiveLine(name, setup, latency: latency, channels: channels) }
        func dropIn(_ name: String, positions: String, matrix: String, devices: String) throws -> String {
            try matrixDropIn(there, name, positions: positions, matrix: matrix, devices: devices)
        }
        let first = try Sandbox(dropIns: [try dropIn("first", positions: "FL FR RL RR",
            matrix: "[ [ 1 0 1 0 ] [ 0 1 0 0 ] [ 0 0 0 1 ] [ 0 0 0 0 ] ]", devices: """
            { type = sink name = game channels = [ FL FR ] }
            { type = send name = wire to = "\(there.group):\(there.port)" session = \(there.session) channels = [ FL FR ] }
            \(receive("ret", back, channels: "RL RR"))
            { type = source name = heard channels = [ RL RR ] }
            """)], prefix: lab.machines[0].prefix)
        defer { first.stop() }
        let second = try Sandbox(dropIns: [try dropIn("second", positions: "FL FR", matrix: "[ [ 1 0 ] [ 0 1 ] ]", devices: """
            \(receive("lan", there, channels: "FL FR"))
            { type = send name = back to = "\(back.group):\(back.port)" session = \(back.session) channels = [ FL FR ] }
            """)], prefix: lab.machines[1].prefix)
        defer { second.stop() }
        for sandbox in [first, second] {
            #expect(sandbox.run(["pw-metadata", "-n", "settings", "0", "clock.force-quantum", "\(quantum)"]).succeeded)
        }
        try waitLinked(second, ["lan", "back"])
        try waitLinked(first, ["wire", "ret"])
        let rate = 48000
        let expected = 2 * latency * rate / 1000, allowed = 2 * (rate / 1000 + quantum)
        let ms = { (samples: Int) in String(format: "%.2f", Double(samples) * 1000 / Double(rate)) }
        func clean<T>(_ what: String, _ play: () throws -> T) throws -> (T, clean: Bool) { try judgedPlaying(what, on: [first, second], play) }
        func tone() throws -> [[Float]] {
            try playAndRecord(TestSignal(channels: 2, seconds: 4).channels, into: first, recordFrom: first, settle: 600_000)
        }

        // 1. Clicks on the left, played and recorded on the first machine, the receivers
        // made anew and settled (2 s); the peak of each burst as played and as it came back.
        // Made anew before each playing, and the cycles counted from there: a receiver whose
        // graph or sender missed cycles holds more for a long while, so a playing judged clean
        // after a disturbed one read a disturbed receiver (CI: 180 ms, still growing, on 0.3.65
        // and 121 ms, coming back by 0.7 ms a second, on 1.4.2, where 80 ms were due; after
        // loss 95-112 ms).
        func remakeReceivers() throws {
            remakeReceiver(first, "ret", back, latency: latency, inputs: "RL,RR")
            remakeReceiver(second, "lan", there, latency: latency, inputs: "FL,FR")
            try waitLinked(second, ["lan", "back"])
            try waitLinked(first, ["wire", "ret"])
        }
        let count = 8
        let left = Clicks.signal(count: count)
        func clicks() throws -> (played: [Int], delays: [Int]) {
            let heard = try playAndRecord([left, [Float](repeating: 0, count: left.count)], into: first, recordFrom: first, settle: 600_000)
            let played = Clicks.peaks(in: heard[0])
            return (played, played.compactMap { p in Clicks.peak(heard[1], from: p + 96, within: rate / 3).map { $0 - p } })
        }
        let ((played, delays), judged) = try judgedPlaying("the clicks", on: [first, second], before: remakeReceivers, settle: 2_000_000, clicks)
        // The target (each hop within 1 ms plus a quantum of its latency) is a figure, printed
        // met or not: a receiver disturbed (a late graph, lost packets) holds tens of ms more
        // for many seconds, which is PipeWire's receiver's rate control, not a fault of the
        // node. The test holds the round trip to a quarter of two latencies either way (10 ms
        // a hop), and its drift over the clicks to 20 ms.
        let met = !delays.isEmpty && delays.allSatisfy { abs($0 - expected) <= allowed }
        let spread = delays.max().map { $0 - delays.min()! } ?? 0
        print("there and back, a receiver's latency \(latency) ms each way, quantum \(quantum): \(played.count) clicks played, "
              + "\(delays.count) came back, after \(delays.map(ms).joined(separator: ", ")) ms (two latencies: \(2 * latency) ms; "
              + "the target, within \(ms(allowed)) ms: \(met ? "met" : "not met"))"
              + (judged ? "" : "; not judged: the graphs missed cycles in each of three playings"))
        // Every click played and back where no graph missed a cycle; half at least where they
        // did (a late graph loses a block as a network does: CI, its graphs missing 46 and 85
        // cycles in the last of three playings, got 7 of 8 back).
        #expect(played.count >= (judged ? count : count / 2), "\(played.count) of \(count) clicks recorded as played")
        #expect(delays.count >= (judged ? played.count : played.count / 2), "\(delays.count) of \(played.count) clicks came back\(judged ? "" : " (not judged: the graphs missed cycles)")")
        if judged {
            for delay in delays {
                #expect(abs(delay - expected) <= expected / 4, "a click came back after \(delay) samples, two latencies are \(expected)")
            }
            #expect(spread <= rate / 50, "the delay moved by \(spread) samples between clicks")
        }

        // 2. Loss on the way in to the second machine, a tone played meanwhile: none, 1%, 5%,
        // then none again once the receiver had 2 s to settle (1.4.2's receiver resynced
        // several times in the 4 s right after 5%).
        func lossRule(_ percent: Int) -> CommandResult {
            lab.run(on: 1, """
                nft delete table inet xploss 2>/dev/null
                nft add table inet xploss && nft add chain inet xploss in '{ type filter hook input priority 0; }' \\
                  && nft add rule inet xploss in udp dport \(there.port) numgen random mod 100 '<' \(percent) counter drop \\
                  && nft add chain inet xploss count '{ type filter hook input priority -1; }' && nft add rule inet xploss count udp dport \(there.port) counter
                """)
        }
        /// The packets of chain `chain` (`in`: dropped; `count`: all that reached the machine).
        func counted(_ chain: String) -> Int {
            let listed = lab.run(on: 1, "nft list chain inet xploss \(chain)").stdout
            guard let range = listed.range(of: "counter packets ") else { return -1 }
            return Int(listed[range.upperBound...].prefix { $0.isNumber }) ?? -1
        }
        var losses: [String] = []
        for (round, percent) in [0, 1, 5, 0].enumerated() {
            if round == 3 { usleep(2_000_000) }
            #expect(lossRule(percent).succeeded)
            let (heard, judged) = percent == 0 ? try clean("no loss", tone) : (try tone(), true)
            let jumps = Glitches.count(in: heard[1], frequency: 330)
            let (lost, total) = (counted("in"), counted("count"))
            let level = Tone.level(of: heard[1])
            losses.append("\(percent)%\(round == 3 ? " again" : ""): \(lost) of \(total) packets dropped, the returned tone jumped at \(jumps) places, "
                          + "level \(String(format: "%.4f", level))" + (judged ? "" : " (not judged: the graphs missed cycles)"))
            #expect(total > 500, "\(total) packets counted to the second machine in 4 s")
            // With loss the tone plays on, lower by what was lost (1.4.2's receiver fills a lost
            // block with silence: 5% loss read -1.7 dB); with none, at its level (held as loss
            // is where a graph missed cycles: a late graph loses blocks as a network does).
            let atItsLevel = percent == 0 && judged
            #expect(abs(20 * log10(max(level, 1e-9) / 0.2)) < (atItsLevel ? 0.5 : 3), "\(percent)% loss: the tone came back at \(level), played at 0.2")
            if percent == 0 {
                #expect(!judged || jumps <= 1, "with no loss and no cycle missed the returned tone jumped at \(jumps) places")
            } else {
                // Measured, not bounded: a lost block is a jump or two, and 1.4.2's receiver
                // also resyncs after a gap (1%: 11 jumps for 4 packets lost once). The counters
                // run from before the tone starts to after the receivers drained, so at 1% the
                // few packets dropped (2 to 14) may all miss the tone (1.4.2 in a full run: 2
                // dropped, no jump); at 5% (30 and more) some fall in it.
                #expect(lost > 0, "\(percent)% loss: no packet dropped")
                if percent >= 5 { #expect(jumps > 0, "\(percent)% loss: \(lost) packets dropped, no jump heard") }
            }
        }
        #expect(lab.run(on: 1, "nft delete table inet xploss").succeeded)
        print("packets lost on the way in (the returned tone's left channel, 4 s each): " + losses.joined(separator: "; "))

        // 3. Jitter on the way to the second machine, made as a network makes it (this kernel
        // has no netem): the first machine's link shaped to 4 Mbit/s (the stream takes about
        // 1.6) and bursts of up to eight datagrams of 1400 bytes queued ahead of the stream (up
        // to 22 ms to drain at that rate), measured by probes sent the same way
        // (Fixtures/jitter.py). The receiver `lan` made anew at 40 ms, then at 10 ms, a tone and
        // then the clicks played each time, the link jittering all along: within its latency
        // the jitter is absorbed (no jump where no graph missed a cycle, the delay what it is
        // without jitter); a receiver below it runs dry, and PipeWire's receiver then holds what
        // it waited for (it jumps where it ran dry, and the clicks may come back later than its
        // latency: 0 to 10 jumps, then the clicks 2 to 28 ms later, on both versions).
        let script = repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures/jitter.py").path
        let link = lab.machines[0].link, to = lab.machines[1].address
        let shaped = lab.run(on: 0, "tc qdisc add dev \(link) root tbf rate 4mbit burst 3000 latency 200ms")
        #expect(shaped.succeeded, "tbf on \(link): \(shaped.stderr)")
        let probes = NSTemporaryDirectory() + "crosspoint-probes-\(UInt32.random(in: 0..<UInt32.max))"
        defer { for path in [probes, probes + ".part"] { try? FileManager.default.removeItem(atPath: path) } }
        var jitters: [String] = []
        for held in [latency, 10] {
            let (heard, judged) = try judgedPlaying("jitter, \(held) ms", on: [first, second], before: {
                remakeReceiver(second, "lan", there, latency: held, inputs: "FL,FR")
                try waitLinked(second, ["lan", "back"])
            }, settle: 2_000_000) { () throws -> (tone: [[Float]], clicks: [Int], probes: [Double], fresh: [Int]) in
                // Below the jitter, the delay the receiver has before it: what it holds after is
                // compared with that (each version sits a few ms off its latency on its own).
                let fresh = held == latency ? [] : try clicks().delays
                try? FileManager.default.removeItem(atPath: probes)
                #expect(lab.run(on: 1, "python3 \(script) receive 14 > \(probes).part 2>&1 && mv \(probes).part \(probes) &").succeeded)
                #expect(lab.run(on: 0, "python3 \(script) cross \(to) 11 8 >/dev/null 2>&1 & python3 \(script) send \(to) 11 >/dev/null 2>&1 &").succeeded)
                let heard = try tone()
                let (_, delays) = try clicks()
                let probed = try Wait.forValue("the probes' delays", timeout: 15) { () -> [Double]? in
                    guard let text = try? String(contentsOfFile: probes, encoding: .utf8) else { return nil }
                    return text.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
                }
                return (heard, delays, probed, fresh)
            }
            let jumps = Glitches.count(in: heard.tone[1], frequency: 330), probed = heard.probes
            let configured = (latency + held) * rate / 1000
            let figures = probed.count == 5 ? String(format: "%.0f probes, one way %.2f to %.2f ms (median %.2f, 99%% within %.2f)",
                                                     probed[0], probed[1], probed[4], probed[2], probed[3]) : "probes: \(probed)"
            jitters.append("a receiver at \(held) ms: the returned tone jumped at \(jumps) places, level "
                           + String(format: "%.4f", Tone.level(of: heard.tone[1])) + ", the clicks came back after "
                           + heard.clicks.map(ms).joined(separator: ", ") + " ms (\(latency) + \(held) ms configured"
                           + (heard.fresh.isEmpty ? "" : "; before the jitter " + heard.fresh.map(ms).joined(separator: ", ") + " ms") + "); \(figures)"
                           + (judged ? "" : " (not judged: the graphs missed cycles)"))
            #expect(probed.count == 5 && probed[0] > 100, "the probes: \(probed)")
            // A receiver that runs dry plays silence until it has refilled: a click may fall there.
            #expect(heard.clicks.count >= count / 2, "\(heard.clicks.count) of \(count) clicks came back through a jittering link")
            guard probed.count == 5, judged else { continue }
            #expect(probed[4] - probed[1] > 10, "the link jittered by \(probed[4] - probed[1]) ms only")
            if held == latency {
                #expect(heard.clicks.count == count, "\(heard.clicks.count) of \(count) clicks came back through a jittering link")
                #expect(jumps <= 1, "jitter within a receiver's latency: the returned tone jumped at \(jumps) places")
                for delay in heard.clicks {
                    #expect(abs(delay - configured) <= configured / 4, "through a jittering link a click came back after \(delay) samples, \(configured) configured")
                }
            } else {
                // It ran dry somewhere: a jump heard, or more held than before the jitter.
                #expect(jumps > 0 || (heard.clicks.min() ?? 0) > (heard.fresh.max() ?? Int.max) + rate / 200,
                        "jitter beyond a receiver's latency: no jump, and the clicks came back after \(heard.clicks) samples, \(heard.fresh) before the jitter (\(configured) configured)")
            }
        }
        #expect(lab.run(on: 0, "tc qdisc del dev \(link) root").succeeded)
        print("jitter on the way in (a tone of 4 s, then clicks): " + jitters.joined(separator: "; "))
    }

    /// Two receivers of one multicast stream on two machines, heard side by side: the first
    /// machine sends clicks to a group that the second and third machines' nodes receive (each
    /// at 40 ms) and send straight back, each to a group of its own; the first machine's node
    /// receives both (at 40 ms each) into one recording, via the second machine on the left and
    /// via the third on the right. Every graph at quantum 256.
    ///
    /// On 1.x as AES67 gear does it: every stream AES67, each daemon with the PTP clock setup
    /// (conf/crosspoint-ptp-clock.conf) driving its node, ptp4l on every machine (the second
    /// the grandmaster; the slaves run free, the machines sharing one kernel's clock: PTP.swift).
    /// On 0.3.65 (no PTP-driven graph: its driver has no clock to follow) RTP, each graph on its
    /// own dummy driver, not aligned with the others.
    ///
    /// The two paths differ by the two receivers' misalignment plus the first machine's two
    /// return receivers': the figure printed bounds the sum. Each receiver holds its latency
    /// against its own graph's cycle, whose phase against the others' is anything up to a
    /// quantum (a PTP clock drives each graph at the same rate, not in phase: PipeWire 1.4's
    /// receivers do not play by the streams' timestamps, `sess.ts-direct`, until 1.5.82), so
    /// without PTP the paths are held to four quanta apart (two a path) either way. With PTP
    /// the graphs run at one rate and the receivers hold their latencies alike: measured on
    /// 1.4.2, the paths 2 to 101 samples apart (2.1 ms at most), moving 1 to 3 samples a click
    /// as the receivers' rate control settles; held to two quanta.
    @Test func twoReceiversOfOneMulticastStreamPlayItAlignedWithinTheirGraphsCycles() throws {
        let lab = try NetworkLab(machines: 3)
        defer { lab.close() }
        let there = try Setup()
        var returns = [try Setup(), try Setup()]
        while Set([there.port] + returns.map(\.port)).count < 3 {  // three ports on the first machine
            returns[1].remove()
            returns[1] = try Setup()
        }
        defer { there.remove(); for setup in returns { setup.remove() } }
        let latency = 40, quantum = 256, rate = 48000
        let aes67 = PipeWire.atLeast(1, 0, 0)
        let ptp = aes67 ? try PTP(lab, grandmaster: 1, folder: there.folder) : nil
        defer { ptp?.stop() }
        try ptp?.waitFollowing()
        let clock = aes67 ? [repositoryRoot.appendingPathComponent("conf/crosspoint-ptp-clock.conf").path] : []
        let sent = aes67 ? " protocol = aes67" : ""
        let first = try Sandbox(dropIns: clock + [try matrixDropIn(there, "first", positions: "FL FR RL RR SL SR",
            matrix: "[ [ 1 0 0 0 0 0 ] [ 0 1 0 0 0 0 ] [ 0 0 1 0 0 0 ] [ 0 0 0 0 0 0 ] [ 0 0 0 1 0 0 ] [ 0 0 0 0 0 0 ] ]", devices: """
            { type = sink name = game channels = [ FL FR ] }
            { type = send name = wire to = "\(there.group):\(there.port)" session = \(there.session) channels = [ FL FR ]\(sent) }
            \(receiveLine("via-b", returns[0], latency: latency, channels: "RL RR", aes67: aes67))
            \(receiveLine("via-c", returns[1], latency: latency, channels: "SL SR", aes67: aes67))
            { type = source name = heard channels = [ RL RR ] }
            """)], prefix: lab.machines[0].prefix)
        defer { first.stop() }
        var others: [Sandbox] = []
        defer { for sandbox in others { sandbox.stop() } }
        for (k, back) in returns.enumerated() {
            others.append(try Sandbox(dropIns: clock + [try matrixDropIn(there, "receiver-\(k)", positions: "FL FR", matrix: "[ [ 1 0 ] [ 0 1 ] ]", devices: """
                \(receiveLine("lan", there, latency: latency, channels: "FL FR", aes67: aes67))
                { type = send name = back to = "\(back.group):\(back.port)" session = \(back.session) channels = [ FL FR ]\(sent) }
                """)], prefix: lab.machines[k + 1].prefix))
        }
        for sandbox in [first] + others {
            #expect(sandbox.run(["pw-metadata", "-n", "settings", "0", "clock.force-quantum", "\(quantum)"]).succeeded)
        }
        for sandbox in others { try waitLinked(sandbox, ["lan", "back"]) }
        try waitLinked(first, ["wire", "via-b", "via-c"])
        if aes67 {
            // Each node driven by its machine's PTP clock.
            for sandbox in [first] + others {
                _ = try sandbox.waitFor("desk driven by PTP0-Driver", describe: { graph in
                    "desk: driver \(Graph.props(graph.nodes(named: "desk").first ?? [:])["node.driver-id"] ?? "none"), PTP0-Driver \(graph.nodeID("PTP0-Driver").map(String.init) ?? "missing")"
                }) { graph in
                    graph.nodeID("PTP0-Driver").map { (Graph.props(graph.nodes(named: "desk").first ?? [:])["node.driver-id"] as? Int) == $0 } ?? false
                }
            }
        }

        let left = Clicks.signal(count: 8)
        // Judged only where no graph missed a cycle since the receivers were made anew and
        // settled (2 s) (CI under load: a click lost and a resync of a quantum in a playing
        // whose graphs missed some; a receiver disturbed holds more for a long while).
        func remakeReceivers() throws {
            for sandbox in others { remakeReceiver(sandbox, "lan", there, latency: latency, inputs: "FL,FR", aes67: aes67) }
            remakeReceiver(first, "via-b", returns[0], latency: latency, inputs: "RL,RR", aes67: aes67)
            remakeReceiver(first, "via-c", returns[1], latency: latency, inputs: "SL,SR", aes67: aes67)
            for sandbox in others { try waitLinked(sandbox, ["lan", "back"]) }
            try waitLinked(first, ["wire", "via-b", "via-c"])
        }
        let (heard, clean) = try judgedPlaying("the clicks via two machines", on: [first] + others, before: remakeReceivers, settle: 2_000_000) {
            try playAndRecord([left, [Float](repeating: 0, count: left.count)], into: first, recordFrom: first, settle: 600_000)
        }
        let viaB = Clicks.peaks(in: heard[0]), viaC = Clicks.peaks(in: heard[1])
        let apart = viaB.compactMap { b in viaC.first { abs($0 - b) < rate / 10 }.map { $0 - b } }
        let ms = { (samples: Int) in String(format: "%.2f", Double(samples) * 1000 / Double(rate)) }
        let clocked = ptp.map { ptp in
            let offsets = [1, 2].filter { $0 != ptp.grandmaster }.map { ptp.offsets(of: $0) } + [ptp.offsets(of: 0)]
            return "AES67, PTP-driven graphs (ptp4l's slaves measured up to \(offsets.joined().map(abs).max() ?? 0) ns from the grandmaster)"
        } ?? "RTP, each graph on its own dummy driver"
        print("two receivers of one stream, via two machines and back (40 ms a hop, quantum \(quantum), \(clocked)): \(viaB.count) and \(viaC.count) clicks, "
              + "the right after the left by \(apart.map { "\($0)" }.joined(separator: ", ")) samples (\(apart.map(ms).joined(separator: ", ")) ms)"
              + (clean ? "" : "; not judged: the graphs missed cycles in each of three playings"))
        #expect(viaB.count >= 6 && viaC.count >= 6, "\(viaB.count) and \(viaC.count) of 8 clicks heard via the two machines")
        if clean {
            #expect(viaB.count == 8 && viaC.count == 8, "\(viaB.count) and \(viaC.count) of 8 clicks heard via the two machines")
            #expect(apart.count == min(viaB.count, viaC.count), "only \(apart.count) clicks heard on both paths within 100 ms of each other")
            let allowed = aes67 ? 2 * quantum : 4 * quantum
            for difference in apart {
                #expect(abs(difference) <= allowed, "the two paths apart by \(difference) samples (allowed \(allowed))")
            }
        }
    }

    /// A receiver whose port another program holds (bound without sharing it) is waited for,
    /// said in its state and once in the log, while the node mixes on, and made once the port is
    /// free; a stream of another format and channel count arriving on a receiver's port (a
    /// plain `module-rtp-sink` sending L24 mono where the node receives L16 stereo) is played
    /// as whatever it seems to be, as by any RTP receiver, and the node and daemon run on. On
    /// 0.3.65 a receiver takes no address (only announced sessions, in their own format): one
    /// given an address is refused, saying so, and the node runs.
    @Test func aReceiverWhosePortIsHeldWaitsForIt_AndAnotherFormatLeavesTheNodeMixing() throws {
        let lab = try NetworkLab(machines: 1)
        defer { lab.close() }
        let setup = try Setup()
        defer { setup.remove() }
        let devices = """
            { type = sink name = game } { type = source name = heard } { type = receive name = lan from = "0.0.0.0:\(setup.port)" latency = 40 }
            """
        guard PipeWire.atLeast(1, 0, 0) else {
            let sandbox = try Sandbox(dropIns: [try setup.dropIn("held", devices: devices)], prefix: lab.machines[0].prefix)
            defer { sandbox.stop() }
            _ = try sandbox.waitFor("the receiver refused, the node's devices made", describe: { self.deviceState($0, "lan") }) { graph in
                self.deviceState(graph, "lan").hasPrefix("lan: failed (PipeWire 0.3.65's RTP receiver takes no address")
                    && self.deviceState(graph, "heard").hasPrefix("heard: ready")
            }
            return
        }
        // The port held before the node is made (its receiver retried every 2 s) and until the
        // holder ends: bounded, 30 s at most.
        let holder = setup.folder + "/holder.txt"
        let holding = try Background(lab.machines[0].prefix + ["python3", "-c", """
            import signal, socket, sys, time
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("0.0.0.0", \(setup.port)))
            print("held", flush=True)
            signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
            time.sleep(30)
            """], environment: ProcessInfo.processInfo.environment, stdout: holder)
        defer { holding.stop() }
        try Wait.until("the port held", timeout: 10) { ((try? String(contentsOfFile: holder, encoding: .utf8)) ?? "").contains("held") }
        let sandbox = try Sandbox(dropIns: [try setup.dropIn("held", devices: devices)], prefix: lab.machines[0].prefix)
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("the receiver to wait for its port", timeout: 8, describe: { self.deviceState($0, "lan") }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: retrying (port \(setup.port) is held by another program")
        }
        let heard = try playTone(seconds: 3, into: sandbox, recordFrom: sandbox, settle: 300_000)
        let amplitudes = [Tone.amplitude(of: heard[0], at: 330), Tone.amplitude(of: heard[1], at: 520)]
        #expect(amplitudes.allSatisfy { abs(20 * log10($0 / 0.2)) < 0.1 }, "the node mixed \(amplitudes) while its receiver waited (0.2 played)")
        print("port held: \(self.deviceState(try Graph(sandbox), "lan"))")
        let logged = sandbox.daemonLog.split(separator: "\n").filter { $0.contains("device 'lan'") && $0.contains("held by another program") }
        #expect(logged.count == 1, "logged \(logged.count) times: \(logged.prefix(3))")
        holding.stop()
        _ = try sandbox.waitFor("the receiver, its port free", timeout: 8, describe: { self.deviceState($0, "lan") }) { graph in
            self.deviceState(graph, "lan").hasPrefix("lan: ready") && graph.links(of: "lan").count == 2
        }

        // Another format: a plain sender of L24 mono to the receiver's port, on the same machine.
        let odd = try setup.plainDropIn("odd-sender", modules: """
                {   name = libpipewire-module-rtp-sink
                    args = {
                        destination.ip = "\(lab.machines[0].address)" destination.port = \(setup.port) audio.format = S24BE audio.channels = 1 audio.position = [ MONO ]
                        stream.props = { node.name = odd-tx media.class = Audio/Sink }
                    }
                }
            """)
        let other = try Sandbox(dropIns: [odd], prefix: lab.machines[0].prefix)
        defer { other.stop() }
        _ = try other.waitFor("the odd sender") { $0.nodeID("odd-tx") != nil }
        let oddWave = Sandbox.audioFolder + "crosspoint-odd-\(setup.session).wav"
        try Wave.write([TestSignal(channels: 1, seconds: 6).channels[0]], to: oddWave)
        defer { try? FileManager.default.removeItem(atPath: oddWave) }
        let noise = try other.start(["pw-play", "--target", "odd-tx", oddWave])
        defer { noise.stop() }
        let during = try playTone(seconds: 3, into: sandbox, recordFrom: sandbox, settle: 300_000)
        let graph = try Graph(sandbox)
        #expect(graph.nodeID("desk") != nil && self.deviceState(graph, "lan").hasPrefix("lan: ready"), "lan: \(self.deviceState(graph, "lan"))")
        // The node's own path plays on (the receiver's input, with what it makes of L24 mono,
        // is mixed in too: the tone is read by frequency, the other channel's left alone).
        let levels = [Tone.amplitude(of: during[0], at: 330), Tone.amplitude(of: during[1], at: 520)]
        print("another format arriving: the node's tones at \(levels) (0.2 played)")
        #expect(levels.allSatisfy { $0 > 0.1 }, "the node's own tones while another format arrived: \(levels)")
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

    /// A tone's amplitude from its RMS (times the square root of 2): the median over the 100 ms
    /// windows of the part of `samples` above a tenth of its peak, the first and last left out.
    static func level(of samples: [Float], rate: Double = 48000) -> Double {
        let peak = samples.map { abs($0) }.max() ?? 0
        guard peak > 0, let first = samples.firstIndex(where: { abs($0) > peak / 10 }),
              let last = samples.lastIndex(where: { abs($0) > peak / 10 }) else { return 0 }
        let length = Int(rate / 10)
        let starts = Array(stride(from: first + length, to: last - 2 * length, by: length))
        guard starts.count >= 5 else { return 0 }
        let levels = starts.map { start in
            (samples[start..<(start + length)].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(length) * 2).squareRoot()
        }.sorted()
        return levels.count % 2 == 1 ? levels[levels.count / 2] : (levels[levels.count / 2 - 1] + levels[levels.count / 2]) / 2
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

/// Where a recorded tone jumps: a block a receiver lost (its place holds older audio) or
/// repeated, or a resync.
enum Glitches {
    /// The places in `samples` (at least 10 ms apart) where the tone at `frequency` breaks
    /// from its own course: a sine obeys x[n+1] = 2 cos(w) x[n] - x[n-1], and what departs
    /// from that by more than a tenth of the tone's level is a jump (S16 on the wire and a
    /// receiver's resampler depart from it by under a thousandth). Only where the tone plays
    /// (its level above a tenth of its peak, its first and last 100 ms left out).
    static func count(in samples: [Float], frequency: Double, rate: Double = 48000) -> Int {
        let peak = samples.map { abs($0) }.max() ?? 0
        guard peak > 0, let first = samples.firstIndex(where: { abs($0) > peak / 10 }),
              let last = samples.lastIndex(where: { abs($0) > peak / 10 }) else { return 0 }
        let c = 2 * cos(2 * Double.pi * frequency / rate), margin = Int(rate / 10), apart = Int(rate / 100)
        var places = 0, lastPlace = -Int(rate)
        let from = first + margin, to = last - margin
        guard from + 1 < to else { return 0 }
        for n in (from + 1)..<to {
            let residual = Double(samples[n + 1]) - c * Double(samples[n]) + Double(samples[n - 1])
            guard abs(residual) > Double(peak) / 10 else { continue }
            if n - lastPlace > apart { places += 1 }
            lastPlace = n
        }
        return places
    }
}

/// Clicks: 2 ms bursts at 3 kHz, found again by their peaks.
enum Clicks {
    /// `count` bursts of 0.5, `spacing` samples apart, after one spacing of silence, and one
    /// more at the end.
    static func signal(count: Int, spacing: Int = 48000 * 2 / 5, rate: Double = 48000) -> [Float] {
        var samples = [Float](repeating: 0, count: spacing * (count + 2))
        for k in 1...count {
            for n in 0..<96 {
                let window = 0.5 - 0.5 * cos(2 * Double.pi * Double(n) / 95)
                samples[k * spacing + n] = Float(0.5 * window * sin(2 * Double.pi * 3000 * Double(n) / rate))
            }
        }
        return samples
    }

    /// The index of the largest sample in `within` samples from `from`, if it is a click's
    /// (above 0.1).
    static func peak(_ samples: [Float], from: Int, within: Int) -> Int? {
        let start = max(0, from), end = min(samples.count, from + within)
        guard start < end, let best = (start..<end).max(by: { abs(samples[$0]) < abs(samples[$1]) }), abs(samples[best]) > 0.1 else { return nil }
        return best
    }

    /// Every click's peak in `samples`, in order (clicks at least `apart` samples apart).
    static func peaks(in samples: [Float], apart: Int = 48000 / 5) -> [Int] {
        var found: [Int] = []
        var n = 0
        while n < samples.count {
            if abs(samples[n]) > 0.1, let p = peak(samples, from: n, within: 96) {
                found.append(p)
                n = p + apart
            } else { n += 1 }
        }
        return found
    }
}
