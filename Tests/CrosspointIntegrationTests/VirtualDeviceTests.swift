import CrosspointPipeWire
import Foundation
import Testing

/// Virtual devices through what applications and the desktop use: a private daemon with
/// WirePlumber and pipewire-pulse, a four-channel null sink standing in for a USB interface
/// (the default device, with the priority an ALSA device has), and a node whose drop-in
/// declares a sink `game` and a source `stream-mix`. Players choose the devices with
/// `pw-play --target` and `paplay --device`, recorders with `pw-record --target` and
/// `parecord --device`; volumes come from wpctl and pactl; the audio is recorded and compared
/// sample by sample with the model.
@Suite(.serialized)
struct VirtualDeviceTests {
    static let fixtures = repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures")

    /// The node `desk` (inputs FL FR, outputs FL FR; devices game and stream-mix, made by the
    /// drop-in) and the stand-in interface, the node's outputs linked to its FL and FR.
    private func makeSandbox(linkOutputs: Bool = true) throws -> Sandbox {
        let sandbox = try Sandbox(dropIns: [Self.fixtures.appendingPathComponent("interface.conf").path,
                                            Self.fixtures.appendingPathComponent("devices.conf").path], pulse: true)
        _ = try sandbox.waitFor("the devices and their links", describe: { "\($0.links(of: "desk"))" }) { graph in
            graph.nodeID("game") != nil && graph.nodeID("stream-mix") != nil && graph.nodeID("interface") != nil
                && graph.links(of: "desk").count == 4
        }
        if linkOutputs {
            let linked = sandbox.shell("pw-link desk:out_FL interface:playback_FL && pw-link desk:out_FR interface:playback_FR")
            guard linked.succeeded else { throw SandboxError("linking the outputs: \(linked.stderr)") }
        }
        return sandbox
    }

    @Test func devicesAreListedWhereApplicationsLookAndTheDefaultStaysTheUsers() throws {
        let sandbox = try makeSandbox(linkOutputs: false)
        defer { sandbox.stop() }
        let status = sandbox.run(["wpctl", "status"]).stdout
        let sinks = section(status, "Sinks:"), sources = section(status, "Sources:")
        #expect(sinks.contains("Game") && sinks.contains("USB interface"), "wpctl status: \(status)")
        #expect(sources.contains("Stream mix"), "wpctl status: \(status)")
        let pulseSinks = sandbox.run(["pactl", "list", "sinks", "short"]).stdout
        let pulseSources = sandbox.run(["pactl", "list", "sources", "short"]).stdout
        #expect(pulseSinks.contains("\tgame\t"), "pactl list sinks: \(pulseSinks)")
        #expect(pulseSources.contains("\tstream-mix\t"), "pactl list sources: \(pulseSources)")
        // What the settings panels show: the description.
        #expect(sandbox.run(["pactl", "list", "sinks"]).stdout.contains("Description: Game"))
        // Loading them did not take the user's default.
        #expect(sandbox.run(["pactl", "get-default-sink"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "interface")
        // The node reports them ready.
        let graph = try Graph(sandbox)
        let state = graph.nodes(named: "desk").first.map { Graph.props($0)["crosspoint.devices"] as? String } ?? nil
        #expect(state?.contains("game: ready") == true && state?.contains("stream-mix: ready") == true, "\(state ?? "no crosspoint.devices")")
    }

    @Test func applicationsPlayingIntoASinkAreHeardOnlyThroughTheNodeWithTheSinksVolume() throws {
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        let signal = TestSignal(channels: 2)
        let gameID = try #require(try Graph(sandbox).nodeID("game"))

        // pw-play: the session manager links it to game alone; the node adds no delay.
        let played = try playIntoDevice(sandbox, signal: signal) { wav, name in
            ["pw-play", "--target", "game", "-P", "{ node.name = \(name) }", wav]
        }
        expectSamples(Array(played.recorded.prefix(2)), signal.channels, "pw-play --target game")
        #expect(played.peers == ["game"], "the player is linked to \(played.peers), not to game alone")

        // paplay through pipewire-pulse, at the volume pactl gave the sink (50 % is 0.125).
        #expect(sandbox.run(["pactl", "set-sink-volume", "game", "50%"]).succeeded)
        let quiet = try playIntoDevice(sandbox, signal: signal) { wav, name in
            ["paplay", "--device=game", "--client-name=\(name)", wav]
        }
        expectSamples(Array(quiet.recorded.prefix(2)), signal.channels.map { $0.map { $0 * 0.125 } }, "paplay --device=game at 50 %")
        #expect(quiet.peers == ["game"], "paplay is linked to \(quiet.peers)")

        // wpctl's volume (cubic like pactl's: 0.8 is 0.512), then pactl's mute: silence.
        #expect(sandbox.run(["wpctl", "set-volume", "\(gameID)", "0.8"]).succeeded)
        let louder = try playIntoDevice(sandbox, signal: signal) { wav, name in
            ["pw-play", "--target", "game", "-P", "{ node.name = \(name) }", wav]
        }
        expectSamples(Array(louder.recorded.prefix(2)), signal.channels.map { $0.map { $0 * 0.512 } }, "wpctl set-volume 0.8")
        #expect(sandbox.run(["pactl", "set-sink-mute", "game", "1"]).succeeded)
        let muted = try playIntoDevice(sandbox, signal: signal) { wav, name in
            ["paplay", "--device=game", "--client-name=\(name)", wav]
        }
        #expect(muted.recorded.allSatisfy { $0.allSatisfy { $0 == 0 } }, "a muted sink is heard")
        #expect(muted.peers == ["game"], "paplay is linked to \(muted.peers)")

        // The default device, chosen as a person does: a player with no target plays into game.
        #expect(sandbox.run(["pactl", "set-sink-mute", "game", "0"]).succeeded)
        #expect(sandbox.run(["wpctl", "set-default", "\(gameID)"]).succeeded)
        let byDefault = try playIntoDevice(sandbox, signal: signal) { wav, name in
            ["paplay", "--client-name=\(name)", wav]
        }
        expectSamples(Array(byDefault.recorded.prefix(2)), signal.channels.map { $0.map { $0 * 0.512 } }, "paplay to the default device")
        #expect(byDefault.peers == ["game"], "paplay is linked to \(byDefault.peers)")
    }

    @Test func aSourceRecordsTheMixSampleExact() throws {
        let sandbox = try makeSandbox(linkOutputs: false)
        defer { sandbox.stop() }
        // The stream mix takes the inputs of its position: FL and game_FL into its FL.
        let signal = TestSignal(channels: 2)
        let folder = Sandbox.audioFolder + "crosspoint-devices-\(UInt32.random(in: 0..<UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Wave.write(signal.channels, to: folder + "/in.wav")
        // Played by the rig into the desk's FL and FR while both recorders record the stream
        // mix: the rig's reference path (the player straight into its own sink) is the control.
        // When it is not the signal, the machine lost a cycle of the player (CI on 1.4 under
        // load: both recorders off by 0.399 at the same place) and the playing is made again, as
        // the rig's `expectAudio` does. parecord's path has a hop the control has not: the
        // record stream pipewire-pulse runs in the graph for it (CI on 0.3.65: parecord off by
        // 0.399 with pw-record and the control exact). A recorder off while the graph missed a
        // deadline (MissedCycles) is the machine's too, and played again; with the control exact
        // and no cycle missed, both recorders must be exact.
        try sandbox.playJudgedByTheControl("stream-mix") { last in
            let recorders: [(String, [String])] = [
                ("pw-record", ["pw-record", "--target", "stream-mix", "--channels", "2", "--format", "f32", folder + "/pw.wav"]),
                ("parecord", ["parecord", "--device=stream-mix", "--channels=2", "--rate=48000", "--format=float32le", "--latency-msec=20", "--file-format=wav", folder + "/pa.wav"]),
            ]
            var running: [Background] = []
            for (name, command) in recorders {
                running.append(try sandbox.start(command, stderr: folder + "/\(name).err"))
            }
            _ = try sandbox.waitFor("the recorders to be linked to stream-mix") { graph in
                graph.links(of: "stream-mix").count >= 2 + 2 * recorders.count
            }
            usleep(300_000)
            let watch = try MissedCycles(sandbox)
            let recording = try sandbox.playThrough(node: "desk", signal: signal, linkedInputs: [0, 1], linkedOutputs: [0, 1])
            usleep(300_000)
            for recorder in running { recorder.stop() }
            let missed = watch.stop() ?? 0
            try Comparison(recording: recording.outputs([0]), expected: [signal.channels[0]]).requireTheControl(last)
            let recorded = try recorders.map { (name, _) in (name, try Wave.read(folder + (name == "pw-record" ? "/pw.wav" : "/pa.wav"))) }
            let off = recorded.filter { (_, channels) in (sampleError(channels, signal.channels)?.error ?? .infinity) > 1e-6 }.map(\.0)
            if !off.isEmpty && missed > 0 && !last {
                throw MachineGlitch("\(off.joined(separator: ", ")) off while the graph missed \(missed) cycle(s)")
            }
            for (name, channels) in recorded {
                #expect(channels.count == 2, "\(name) recorded \(channels.count) channels")
                guard channels.count == 2 else { continue }
                expectSamples(channels, signal.channels, name + (missed > 0 ? " (the graph missed \(missed) cycle(s))" : ""), tolerance: 1e-6)
            }
        }
    }

    @Test func devicesAreAddedRenamedAndRemovedLiveAndKeptInTheStateFile() throws {
        let conf = NSTemporaryDirectory() + "crosspoint-devices-state-\(UInt32.random(in: 0..<UInt32.max)).conf"
        let text = try String(contentsOf: Self.fixtures.appendingPathComponent("devices.conf"), encoding: .utf8)
        try text.replacingOccurrences(of: "state.persist = false", with: "state.persist = true").write(toFile: conf, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }
        let sandbox = try Sandbox(dropIns: [Self.fixtures.appendingPathComponent("interface.conf").path, conf], pulse: true)
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("the devices") { $0.nodeID("game") != nil && $0.nodeID("stream-mix") != nil }

        // Added: listed by wpctl and pactl, its new input linked from its monitor.
        let added = sandbox.crosspoint("virtual", "add", "desk", "sink", "chat", "--position", "MONO", "--description", "Voice chat")
        #expect(added.succeeded, "\(added.stderr)")
        var graph = try sandbox.waitFor("chat and its link", describe: { "\($0.links(of: "chat"))" }) { graph in
            graph.links(of: "chat").map(\.peer) == ["desk"]
        }
        #expect(graph.ports(of: "desk", direction: "input").contains { $0["port.name"] as? String == "in_chat_MONO" })
        #expect(sandbox.run(["pactl", "list", "sinks"]).stdout.contains("Description: Voice chat"))
        let listed = sandbox.crosspoint("virtual", "list", "desk")
        #expect(listed.stdout.contains("sink chat \"Voice chat\": MONO -> inputs chat_MONO"), "\(listed.stdout)")

        // Renamed: made again under the new name; the old one is gone, the input stays.
        let renamed = sandbox.crosspoint("virtual", "rename", "desk", "chat", "voice")
        #expect(renamed.succeeded, "\(renamed.stderr)")
        graph = try sandbox.waitFor("voice, and no chat") { $0.nodeID("chat") == nil && $0.links(of: "voice").count == 1 }
        #expect(sandbox.run(["pactl", "list", "sinks", "short"]).stdout.contains("\tvoice\t"))

        // Made the default on request.
        let made = sandbox.crosspoint("virtual", "add", "desk", "sink", "speakers", "--default")
        #expect(made.succeeded, "\(made.stderr)")
        _ = try sandbox.waitFor("speakers") { $0.nodeID("speakers") != nil }
        try wait("speakers to be the default sink") {
            sandbox.run(["pactl", "get-default-sink"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "speakers"
        }

        // Removed: gone from the graph; the rest are as they were.
        let removed = sandbox.crosspoint("virtual", "remove", "desk", "voice")
        #expect(removed.succeeded, "\(removed.stderr)")
        _ = try sandbox.waitFor("voice to go") { $0.nodeID("voice") == nil }

        // A daemon restart: the devices come back from the state file, linked; `default` was
        // asked once and is not asked again (the session manager keeps the person's choice).
        let interfaceID = try #require(try Graph(sandbox).nodeID("interface"))
        #expect(sandbox.run(["wpctl", "set-default", "\(interfaceID)"]).succeeded)
        // WirePlumber saves the person's choice a moment later, in its own state: restarted
        // before that, it would bring back the earlier choice by itself.
        try wait("WirePlumber to save the default") {
            let folder = sandbox.directory + "/state/wireplumber"
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return files.contains { name in
                ((try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "").contains("audio.sink=interface")
            }
        }
        try wait("the state file to have the devices") {
            let state = (try? String(contentsOfFile: sandbox.directory + "/state/crosspoint/desk/state.json", encoding: .utf8)) ?? ""
            return state.contains("sink speakers position=FL,FR channels=speakers_FL,speakers_FR description=speakers")
                && !state.contains("voice")
        }
        try sandbox.restartDaemon()
        graph = try sandbox.waitFor("the devices again", describe: { "\($0.links(of: "desk"))" }) { graph in
            ["game", "stream-mix", "speakers"].allSatisfy { graph.nodeID($0) != nil } && graph.links(of: "desk").count == 6
        }
        #expect(graph.nodeID("voice") == nil)
        let devices = sandbox.crosspoint("virtual", "list", "desk", "--json").stdout
        #expect(devices.contains("\"speakers\"") && !devices.contains("\"default\": true"), "\(devices)")
        usleep(500_000)
        #expect(sandbox.run(["pactl", "get-default-sink"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "interface")
    }

    @Test func badDevicesAreRefusedAndARemovedDeviceLosesNothing() throws {
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        // A bad line through set-param and through the command: refused by name, nothing changes.
        let before = sandbox.crosspoint("virtual", "list", "desk", "--json").stdout
        let badChannel = sandbox.crosspoint("virtual", "add", "desk", "sink", "bad", "--position", "FL,XX")
        #expect(!badChannel.succeeded && badChannel.stderr.contains("'XX' is not a channel position"), "\(badChannel.stderr)")
        let badName = sandbox.crosspoint("virtual", "add", "desk", "sink", "gäme")
        #expect(!badName.succeeded && badName.stderr.contains("is not a device name"), "\(badName.stderr)")
        let nodeID = try #require(try Graph(sandbox).nodeID("desk"))
        let set = sandbox.run(["pw-cli", "set-param", "\(nodeID)", "Props", "{ params = [ \"devices\" [ \"speaker game\" ] ] }"])
        #expect(set.succeeded, "\(set.stderr)")
        try wait("the daemon to log the refusal") { sandbox.daemonLog.contains("'speaker' in 'speaker game' is not sink, source, send or receive") }
        #expect(sandbox.crosspoint("virtual", "list", "desk", "--json").stdout == before)

        // A name another node has: waited for, said in the log and in crosspoint.devices; made
        // once that node goes.
        let clash = sandbox.crosspoint("virtual", "add", "desk", "sink", "interface")
        #expect(clash.succeeded, "\(clash.stderr)")
        try wait("the clash to be reported") {
            let graph = try? Graph(sandbox)
            let state = graph?.nodes(named: "desk").first.map { Graph.props($0)["crosspoint.devices"] as? String ?? "" } ?? ""
            return state.contains("interface: waiting (node ")
        }
        #expect(sandbox.daemonLog.contains("device 'interface' is not made: node "), "\(sandbox.daemonLog.suffix(2000))")
        #expect(try Graph(sandbox).nodes(named: "interface").count == 1)
        let standIn = try #require(try Graph(sandbox).nodeID("interface"))
        #expect(sandbox.run(["pw-cli", "destroy", "\(standIn)"]).succeeded)
        // The device is known by its owner, not by its id: PipeWire 0.3.65 gives a new object the
        // id freed last, and the stand-in's is freed last when pw-cli is slow to go.
        _ = try sandbox.waitFor("the device interface, made now", describe: {
            "interface: \($0.nodes(named: "interface").map(Graph.props)), its links: \($0.links(of: "interface"))"
        }) { graph in
            let interface = graph.nodes(named: "interface")
            return interface.count == 1 && Graph.props(interface[0])[CrosspointProperty.deviceOf] as? String == "desk"
                && graph.links(of: "interface").map(\.peer) == ["desk", "desk"]
        }

        // A device removed while an application plays into it: the player goes on (where the
        // session manager sends it), the node keeps its state, its other device stays.
        let folder = Sandbox.audioFolder + "crosspoint-devices-\(UInt32.random(in: 0..<UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Wave.write(TestSignal(channels: 2, seconds: 4).channels, to: folder + "/long.wav")
        let player = try sandbox.start(["pw-play", "--target", "game", "-P", "{ node.name = long-player }", folder + "/long.wav"],
                                       stderr: folder + "/player.err")
        _ = try sandbox.waitFor("the player in game") { $0.links(of: "long-player").map(\.peer).contains("game") }
        let gain = sandbox.crosspoint("param", "desk", "gain.in.game_FL", "0.5")
        #expect(gain.succeeded, "\(gain.stderr)")
        let removed = sandbox.crosspoint("virtual", "remove", "desk", "game")
        #expect(removed.succeeded, "\(removed.stderr)")
        let after = try sandbox.waitFor("game to go") { $0.nodeID("game") == nil }
        #expect(after.nodeID("desk") != nil && after.nodeID("stream-mix") != nil)
        player.wait(timeout: 15)
        #expect(!((try? String(contentsOfFile: folder + "/player.err", encoding: .utf8)) ?? "").contains("error"))
        let props = try sandbox.props("desk")
        #expect((props["gain.in.2"] as? Double).map { abs($0 - 0.5) < 1e-6 } == true, "\(props)")
        #expect(sandbox.run(["pactl", "info"]).succeeded)
    }

    @Test func outputGroupsFollowTheDefaultDeviceOrOneByNameAndAreNeverLinkedTwice() throws {
        let sandbox = try makeSandbox(linkOutputs: false)
        defer { sandbox.stop() }
        // Headphones beside the interface (a lower priority: the interface stays the default).
        let made = sandbox.shell("""
            pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=headphones media.class=Audio/Sink \
              object.linger=true audio.position=[ FL FR ] priority.session=900 session.suspend-timeout-seconds=0 }' >/dev/null
            pw_wait_ports headphones 2 input
            """)
        #expect(made.succeeded, "\(made.stderr)")
        /// The device each of the node's outputs FL and FR is linked to, and how many links each has.
        func outputLinks(_ graph: Graph) -> [String] {
            let ports = graph.ports(of: "desk", direction: "output")
            return ["out_FL", "out_FR"].map { name -> String in
                guard let port = ports.first(where: { $0["port.name"] as? String == name }), let id = port["object.id"] as? Int else { return "?" }
                return graph.linkedPorts(of: id).sorted().joined(separator: "+")
            }
        }

        // The default device: the interface, channel by channel.
        let set = sandbox.crosspoint("param", "desk", "targets", "default outputs=FL,FR")
        #expect(set.succeeded, "\(set.stderr)")
        // Linked, and followed as the default the session manager published (not the first sink
        // the node falls back on while none is published: WirePlumber 0.5 may publish it seconds
        // after it starts on a loaded machine).
        func targetsReport(_ graph: Graph) -> String {
            graph.nodes(named: "desk").first.map { Graph.props($0)["crosspoint.targets"] as? String ?? "" } ?? ""
        }
        var graph = try sandbox.waitFor("the outputs on the interface, the default", describe: { "\(outputLinks($0)); \(targetsReport($0))" }) {
            outputLinks($0) == ["interface:playback_FL", "interface:playback_FR"] && targetsReport($0).contains("linked to default (interface)")
        }

        // The person picks the headphones: the outputs move, within a moment, and only there.
        let headphones = try #require(graph.nodeID("headphones"))
        let started = Date()
        #expect(sandbox.run(["wpctl", "set-default", "\(headphones)"]).succeeded)
        // On a timeout, which side was wrong: the session manager's default (the metadata) or the
        // node following it (its crosspoint.targets says what it saw). CI on 1.4 once waited 10 s.
        graph = try sandbox.waitFor("the outputs on the headphones", describe: { graph in
            let defaults = sandbox.run(["pw-metadata", "0"]).stdout.split(separator: "\n").filter { $0.contains("audio.sink") }
            return "\(outputLinks(graph)); metadata: \(defaults.joined(separator: " | ")); desk's crosspoint.targets: \(targetsReport(graph))"
        }) {
            outputLinks($0) == ["headphones:playback_FL", "headphones:playback_FR"]
        }
        let moved = Date().timeIntervalSince(started)
        print("outputs re-linked \(Int(moved * 1000)) ms after wpctl set-default (pw-dump polled every 100 ms)")
        #expect(moved < 3, "the outputs took \(moved) s to follow the default")
        // Played through game (paplay), heard on the headphones.
        let signal = TestSignal(channels: 2)
        let heard = try playIntoDevice(sandbox, signal: signal, recordFrom: "headphones", channels: ["FL", "FR"]) { wav, name in
            ["paplay", "--device=game", "--client-name=\(name)", wav]
        }
        expectSamples(heard.recorded, signal.channels, "game through desk to the default device")

        // The headphones go: back to the interface; they come back: the default again, followed.
        let gone = sandbox.shell("pw_destroy_node headphones")
        #expect(gone.succeeded, "\(gone.stderr)")
        _ = try sandbox.waitFor("the outputs back on the interface", describe: { "\(outputLinks($0))" }) {
            outputLinks($0) == ["interface:playback_FL", "interface:playback_FR"]
        }
        #expect(sandbox.shell("""
            pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=headphones media.class=Audio/Sink \
              object.linger=true audio.position=[ FL FR ] priority.session=900 session.suspend-timeout-seconds=0 }' >/dev/null
            pw_wait_ports headphones 2 input
            """).succeeded)
        _ = try sandbox.waitFor("the outputs on the returned headphones", describe: { "\(outputLinks($0))" }) {
            outputLinks($0) == ["headphones:playback_FL", "headphones:playback_FR"]
        }

        // Seed 001: the stereo pair to outputs 3-4 of the interface, by name and offset.
        let pair = sandbox.crosspoint("follow", "desk", "interface", "--outputs", "FL,FR", "--offset", "2")
        #expect(pair.succeeded, "\(pair.stderr)")
        _ = try sandbox.waitFor("the outputs on the interface's RL and RR", describe: { "\(outputLinks($0))" }) {
            outputLinks($0) == ["interface:playback_RL", "interface:playback_RR"]
        }
        let pairHeard = try playIntoDevice(sandbox, signal: signal, recordFrom: "interface", channels: ["FL", "FR", "RL", "RR"]) { wav, name in
            ["pw-play", "--target", "game", "-P", "{ node.name = \(name) }", wav]
        }
        expectSamples(Array(pairHeard.recorded[2...3]), signal.channels, "game to the interface's outputs 3-4")
        #expect(pairHeard.recorded[0].allSatisfy { $0 == 0 } && pairHeard.recorded[1].allSatisfy { $0 == 0 }, "outputs 1-2 are not silent")

        // A person's link wins (qpwgraph, Helvum, pw-link, jack_connect): out_FL also to the
        // interface's FL, beside the follower's RL, stays; the follower's own link, removed by the
        // person, is not made again while the group goes to that device. (A second to see that
        // nothing happens: the follower undid such a link within 50 ms.)
        #expect(sandbox.run(["pw-link", "desk:out_FL", "interface:playback_FL"]).succeeded)
        usleep(1_000_000)
        #expect(outputLinks(try Graph(sandbox)) == ["interface:playback_FL+interface:playback_RL", "interface:playback_RR"])
        #expect(sandbox.run(["pw-link", "-d", "desk:out_FL", "interface:playback_RL"]).succeeded)
        usleep(1_000_000)
        #expect(outputLinks(try Graph(sandbox)) == ["interface:playback_FL", "interface:playback_RR"])
        #expect(sandbox.run(["pw-link", "-d", "desk:out_FL", "interface:playback_FL"]).succeeded)

        // A typo: taken (devices come and go) but said at once, with the sinks closest first;
        // the same "did you mean" for a sink, a node, a channel.
        let typo = sandbox.crosspoint("follow", "desk", "intrface", "--outputs", "FL,FR")
        #expect(typo.succeeded && typo.stderr.contains("warning: no sink is called 'intrface' now: the outputs will link to it when it appears; did you mean 'interface'? (the sinks are: interface (id "), "\(typo.stderr)")
        let sinkTypo = sandbox.crosspoint("delay", "dsk", "FL", "10ms")
        #expect(sinkTypo.stderr.contains("unknown node 'dsk'; did you mean 'desk'?"), "\(sinkTypo.stderr)")
        let channelTypo = sandbox.crosspoint("param", "desk", "gain.out.FLL", "0.5")
        #expect(channelTypo.stderr.contains("no output channel is named 'FLL'; did you mean 'FL'?"), "\(channelTypo.stderr)")
        // A device that does not exist: waited for, said in the log and the node's property.
        #expect(sandbox.crosspoint("param", "desk", "targets", "nothing-here").succeeded)
        try wait("the wait to be reported") {
            let graph = try? Graph(sandbox)
            return (graph?.nodes(named: "desk").first.map { Graph.props($0)["crosspoint.targets"] as? String ?? "" } ?? "")
                .contains("nothing-here: waiting for nothing-here")
        }
        #expect(sandbox.daemonLog.contains("outputs of target 'nothing-here' wait for their device"))
        let shown = sandbox.crosspoint("show", "desk").stdout
        #expect(shown.contains("following: nothing-here: waiting for nothing-here") && shown.contains("devices: game: ready (node "), "\(shown)")
        graph = try Graph(sandbox)
        #expect(outputLinks(graph) == ["", ""], "the outputs still play to \(outputLinks(graph))")
        let unfollowed = sandbox.crosspoint("unfollow", "desk")
        #expect(unfollowed.succeeded, "\(unfollowed.stderr)")
        #expect((try sandbox.props("desk"))["targets"] as? [String] == [])
    }

    /// PipeWire's metadata drops a change for the clients already bound while another client's
    /// bind waits on the session manager (module-metadata's `metadata_property`, 0.3.65 to 1.5;
    /// ARCHITECTURE.md, "OutputFollower"): CI saw a node never hear the default published, and
    /// once never follow `wpctl set-default`. Made to happen here every time: a client bound
    /// before (Fixtures/metadata-setter.c) sets the default sink while WirePlumber is stopped,
    /// another client binds the metadata, and WirePlumber goes on: its change reaches the
    /// server while that bind waits, and the clients bound before never hear it (PipeWire's own
    /// `pw-metadata -m` does not). The node reads the metadata again after clients come and go:
    /// its outputs follow all the same.
    @Test func theOutputsFollowADefaultThatPipeWiresMetadataDidNotTellThem() throws {
        let sandbox = try makeSandbox(linkOutputs: false)
        defer { sandbox.stop() }
        let folder = NSTemporaryDirectory() + "crosspoint-setter-\(UInt32.random(in: 0..<UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures/metadata-setter.c").path
        let built = sandbox.shell("cc=$(command -v clang || command -v cc) && \"$cc\" -O2 -o '\(folder)/setter' '\(source)' $(pkg-config --cflags --libs libpipewire-0.3)",
                                  timeout: 120)
        try #require(built.succeeded, "building the setter: \(built.stderr)")
        #expect(sandbox.shell("""
            pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=headphones media.class=Audio/Sink \
              object.linger=true audio.position=[ FL FR ] priority.session=900 session.suspend-timeout-seconds=0 }' >/dev/null
            pw_wait_ports headphones 2 input
            """).succeeded)
        #expect(sandbox.crosspoint("param", "desk", "targets", "default outputs=FL,FR").succeeded)
        func outputPeers(_ graph: Graph) -> [String] {
            let ports = graph.ports(of: "desk", direction: "output")
            return ["out_FL", "out_FR"].map { name in
                guard let port = ports.first(where: { $0["port.name"] as? String == name }), let id = port["object.id"] as? Int else { return "?" }
                return graph.linkedPorts(of: id).sorted().joined(separator: "+")
            }
        }
        _ = try sandbox.waitFor("the outputs on the interface") { outputPeers($0) == ["interface:playback_FL", "interface:playback_FR"] }
        func said(_ path: String, _ word: String) -> Bool { ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").contains(word) }
        // A monitor of PipeWire's own, bound before, beside the node.
        let monitored = folder + "/monitor.txt"
        let monitor = try sandbox.start(["pw-metadata", "-m", "0", "default.audio.sink"], stdout: monitored)
        defer { monitor.stop() }
        try Wait.until("the monitor bound", timeout: 10) { said(monitored, "interface") }
        let setterOutput = folder + "/setter.txt"
        let setter = try sandbox.start([folder + "/setter", "default.audio.sink", #"{ "name": "headphones" }"#], stdout: setterOutput)
        defer { setter.stop() }
        try Wait.until("the setter bound", timeout: 10) { said(setterOutput, "bound") }
        let sessionManager = try #require(sandbox.pid(of: "wireplumber"))
        kill(sessionManager, SIGSTOP)
        var resumed = false
        defer { if !resumed { kill(sessionManager, SIGCONT) } }
        kill(setter.pid, SIGUSR1)
        try Wait.until("the set sent", timeout: 10) { said(setterOutput, "set") }
        let binder = try sandbox.start(["pw-metadata", "0"])
        usleep(300_000)  // its bind waits on the stopped WirePlumber
        kill(sessionManager, SIGCONT)
        resumed = true
        binder.wait(timeout: 10)
        let started = Date()
        _ = try sandbox.waitFor("the outputs on the headphones", timeout: 5, describe: { graph in
            let defaults = sandbox.run(["pw-metadata", "0"]).stdout.split(separator: "\n").filter { $0.contains("audio.sink") }
            let report = graph.nodes(named: "desk").first.map { Graph.props($0)["crosspoint.targets"] as? String ?? "" } ?? ""
            return "\(outputPeers(graph)); metadata: \(defaults.joined(separator: " | ")); desk's crosspoint.targets: \(report)"
        }) { outputPeers($0) == ["headphones:playback_FL", "headphones:playback_FR"] }
        let monitorHeard = ((try? String(contentsOfFile: monitored, encoding: .utf8)) ?? "").contains("headphones")
        print("the default set while WirePlumber waited: followed \(Int(Date().timeIntervalSince(started) * 1000)) ms after WirePlumber went on; "
              + "PipeWire's own pw-metadata -m, bound before, "
              + (monitorHeard ? "heard it (the change was not lost this time: the node's re-reading was not put to the test)" : "never heard it"))
    }

    @Test func aVirtualDeviceAddsNoDelay() throws {
        // The signal enters the graph once, into a null sink of its own ("tone"), whose monitor
        // feeds both paths in the same cycle: the node's (game, its monitor, the node, the
        // interface's FL and FR) and the direct one (the interface's RL). A player fed both
        // itself before: on PipeWire 1.x, pw-cat is an asynchronous node (a pw_stream without
        // RT_PROCESS), which writes its next block when its own thread gets to it, so on a
        // loaded machine game, early in the cycle, and the interface, at its end, could read
        // different blocks of it (CI on 1.4: the node's path off by 0.2 mid-signal, the direct
        // one exact). tone runs in the cycle before both.
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        let madeTone = sandbox.shell("pw_null_sink tone 'FL FR'")
        try #require(madeTone.succeeded, "\(madeTone.stderr)")
        let cli = try PwCli(sandbox)
        defer { cli.close() }
        try sandbox.link([(output: "tone:monitor_FL", input: "game:playback_FL"), (output: "tone:monitor_FR", input: "game:playback_FR"),
                          (output: "tone:monitor_FL", input: "interface:playback_RL")], through: cli)
        let signal = TestSignal(channels: 2)
        let tag = "\(UInt32.random(in: 0..<UInt32.max))"
        let wav = Sandbox.audioFolder + "crosspoint-\(tag)-in.wav", recorded = Sandbox.audioFolder + "crosspoint-\(tag)-out.wav"
        defer {
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: recorded)
        }
        try Wave.write(signal.channels, to: wav)
        // At each quantum, up to four recordings until one is judged. A recording is judged when
        // its direct path is exact (the player and the recorder kept up) and either the node's
        // path is exact too (the claim holds, whatever the machine did) or the graph missed no
        // cycle meanwhile (then a difference is the node's). A deadline the graph missed can cost
        // the longer path (tone, game, the node, the interface) a block the direct one keeps
        // (MissedCycles: pw-top's ERR on 1.x, pw-profiler on 0.3.65): CI on 0.3.65 saw the
        // node's path off by 0.39 mid-signal at quantum 64 with the direct path exact, and at
        // quantum 256 a cycle or more missed in each of three recordings; at e239b0d, both
        // versions' suites at once, the direct path itself glitched in four of four at 256).
        // Quantum 1024 must be judged; 256 and 64, whose deadlines a loaded two-core machine
        // misses often, are judged when a recording can be (256 up to six times).
        for quantum in [1024, 256, 64] {
            #expect(sandbox.run(["pw-metadata", "-n", "settings", "0", "clock.force-quantum", "\(quantum)"]).succeeded)
            var judged: (comparison: Comparison, read: [[Float]])?
            for attempt in 1...(quantum == 256 ? 6 : 4) where judged == nil {
                let tag = "\(quantum)-\(attempt)"
                let watch = try MissedCycles(sandbox)
                let recorder = try sandbox.start([
                    "pw-record", "--target", "interface", "-P", "{ stream.capture.sink = true node.name = delay-rec-\(tag) }",
                    "--channels", "4", "--channel-map", PipeWire.channelMap(["FL", "FR", "RL", "RR"]), "--format", "f32", recorded,
                ])
                #expect(sandbox.shell("pw_wait_ports delay-rec-\(tag) 4 input").succeeded)
                usleep(300_000)
                let p = "delay-play-\(tag)"
                let player = try sandbox.start([
                    "pw-cat", "--playback", "-P", "{ node.autoconnect = false node.name = \(p) }", "--channels", "2",
                    "--channel-map", PipeWire.channelMap(["FL", "FR"]), wav,
                ])
                #expect(sandbox.shell("pw_wait_ports \(p) 2 output").succeeded)
                try sandbox.link([(output: "\(p):output_FL", input: "tone:playback_FL"), (output: "\(p):output_FR", input: "tone:playback_FR")],
                                 through: cli)
                player.wait(timeout: 30)
                usleep(300_000)
                recorder.stop()
                let xruns = watch.stop() ?? 0
                let read = try Wave.read(recorded)
                try #require(read.count == 4)
                let comparison = try Comparison(recording: Recording(outputs: Array(read.prefix(2)), reference: read[2],
                                                                     referenceSignal: signal.channels[0]), expected: signal.channels)
                let exact = comparison.addedDelay == 0 && comparison.difference(read[0], read[2]).largest == 0 && comparison.maxError.allSatisfy { $0 <= 1e-4 }
                print("quantum \(quantum), recording \(attempt): through game and the node \(comparison.lag.map(String.init) ?? "-") samples, "
                      + "direct \(comparison.referenceLag.map(String.init) ?? "-"): added \(comparison.addedDelay.map(String.init) ?? "-")"
                      + (exact ? ", the node's path exact" : ", the node's path differs")
                      + (comparison.referenceError <= 1e-4 ? "" : String(format: " (glitched: the direct path is off by %.2f)", comparison.referenceError))
                      + (xruns > 0 ? " (the graph missed \(xruns) cycle(s))" : ""))
                if comparison.referenceError <= 1e-4 && (exact || xruns <= 0) { judged = (comparison, read) }
            }
            guard let (comparison, read) = judged else {
                #expect(quantum != 1024, "quantum \(quantum): every recording glitched")
                print("quantum \(quantum): not judged: the graph missed cycles in every recording (the players on this machine)")
                continue
            }
            #expect(comparison.addedDelay == 0, "quantum \(quantum): \(comparison)")
            // The node's left channel is the direct one, sample for sample, over the steady window
            // the rig judges everything by: at the very start and end of a file, the graph that
            // pw-cat joins or leaves may run a path a cycle apart (PipeWire 0.3.65, a loaded machine).
            let difference = comparison.difference(read[0], read[2])
            let first = difference.first.map(String.init) ?? "-"
            #expect(difference.largest == 0,
                    "quantum \(quantum): the node's path differs from the direct one by up to \(difference.largest), first at sample \(first) of the signal")
            comparison.expectMatch(tolerance: 1e-4, "quantum \(quantum)")
        }
    }

    // MARK: The ready-made setups (conf/), each loaded as a user enables it, beside the interface

    private func setupSandbox(_ name: String, until what: String, _ ready: @escaping (Graph) -> Bool) throws -> Sandbox {
        let sandbox = try Sandbox(dropIns: [Self.fixtures.appendingPathComponent("interface.conf").path,
                                            repositoryRoot.appendingPathComponent("conf/\(name).conf").path], pulse: true)
        do { _ = try sandbox.waitFor(what, ready) } catch { sandbox.stop(); throw error }
        return sandbox
    }

    @Test func theDeskSetupMixesItsDevicesToTheDefaultDeviceAndPublishesTheStreamMix() throws {
        let sandbox = try setupSandbox("crosspoint-desk", until: "the desk, its devices and its monitor on the interface") { graph in
            ["game", "music", "chat", "stream-mix"].allSatisfy { graph.nodeID($0) != nil }
                && graph.links(of: "desk").filter { $0.peer == "interface" }.count == 2
        }
        defer { sandbox.stop() }
        let signal = TestSignal(channels: 2)
        let game = try playIntoDevice(sandbox, signal: signal) { wav, name in ["paplay", "--device=game", "--client-name=\(name)", wav] }
        expectSamples(Array(game.recorded.prefix(2)), signal.channels, "game on the monitor mix")
        let music = try playIntoDevice(sandbox, signal: signal) { wav, name in ["pw-play", "--target", "music", "-P", "{ node.name = \(name) }", wav] }
        expectSamples(Array(music.recorded.prefix(2)), signal.channels.map { $0.map { $0 * 0.5 } }, "music at -6 dB on the monitor mix")
        let sources = sandbox.run(["pactl", "list", "sources", "short"]).stdout
        #expect(sources.contains("\tstream-mix\t"), "\(sources)")
        #expect(try Graph(sandbox).links(of: "stream-mix").map(\.peer) == ["desk", "desk"])

        // The README's delay example, as written, on the desk it names.
        let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("crosspoint delay desk ") }
        #expect(lines.count == 3, "\(lines)")
        for line in lines {
            let words = line.split(separator: "#")[0].split(separator: " ").map(String.init)
            let ran = sandbox.run([crosspointExecutable] + Array(words.dropFirst()), timeout: 30)
            #expect(ran.succeeded, "\(line): \(ran.stderr)")
        }
        let delays = try Graph(sandbox).params(of: "desk")
        #expect(sandbox.float(delays["delay.out.0"]) == 180 && sandbox.float(delays["delay.out.2"]) == 0, "\(delays)")

        // `show` reads as a table piped and at 80 columns: the outputs' heads whole or split at
        // their "_", never a letter a line; no line of the table wider than asked.
        for arguments in [["show", "desk"], ["show", "desk", "--width", "80"], ["show", "desk", "--width", "40"]] {
            let shown = sandbox.run([crosspointExecutable] + arguments)
            #expect(shown.succeeded, "\(shown.stderr)")
            let lines = shown.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let table = lines.drop { !$0.contains("| ") }.prefix { !$0.isEmpty }
            let heads = table.prefix { !$0.hasPrefix("gain ") }.map { $0.components(separatedBy: "| ").last ?? "" }
            let words = heads.flatMap { $0.split(separator: " ").map(String.init) }
            #expect(!words.isEmpty && words.allSatisfy { $0.count > 1 }, "\(arguments): heads \(heads)")
            print("$ crosspoint \(arguments.joined(separator: " "))\n\(table.joined(separator: "\n"))")
            if arguments.count == 2 {
                #expect(words == ["mon_FL", "mon_FR", "stream_FL", "stream_FR"], "piped: \(heads)")
            } else if let width = Int(arguments[3]) {
                #expect(table.allSatisfy { $0.count <= width }, "\(arguments): \(shown.stdout)")
                #expect(["mon", "FL", "FR"].allSatisfy(words.contains) || words.contains("mon_FL"), "\(arguments): \(heads)")
            }
        }

        // What other tools show of the node. JACK's two aliases of a port are its object.path
        // and port.alias (pipewire-jack reads those two; `jack_lsp -A` printed an empty line for
        // the first); pw-top's FORMAT is the node's Format param.
        let graph = try Graph(sandbox)
        for (direction, prefix) in [("input", "Crosspoint desk:input_"), ("output", "Crosspoint desk:output_")] {
            let ports = graph.ports(of: "desk", direction: direction)
            #expect(ports.count == (direction == "input" ? 7 : 4))
            for port in ports {
                let name = port["port.name"] as? String ?? ""
                #expect((port["object.path"] as? String ?? "").hasPrefix(prefix), "\(name): \(port["object.path"] ?? "no object.path")")
                #expect(port["port.alias"] as? String == "Crosspoint desk:\(name)", "\(name)")
            }
        }
        let paths = graph.ports(of: "desk", direction: "input").compactMap { $0["object.path"] as? String }
        #expect(Set(paths) == Set((0..<7).map { "Crosspoint desk:input_\($0)" }), "\(paths)")
        // (PipeWire 0.3's pw_filter lists no node Format: there the column stays empty, as for
        // every pw_filter node.)
        if PipeWire.atLeast(1, 0, 0) {
            let format = sandbox.run(["pw-cli", "enum-params", "\(graph.nodeID("desk") ?? 0)", "Format"]).stdout
            #expect(format.contains("F32P") && format.contains("Int 48000") && format.contains("Int 7"), "\(format)")
            // pw-top shows a format while the node runs: a player keeps it running.
            let tone = Sandbox.audioFolder + "desk-top-\(UInt32.random(in: 0..<UInt32.max)).wav"
            defer { try? FileManager.default.removeItem(atPath: tone) }
            #expect(sandbox.run(["sox", "-n", "-r", "48000", "-c", "2", tone, "synth", "6", "sine", "440"]).succeeded)
            let player = try sandbox.start(["pw-play", "--target", "game", tone])
            defer { player.stop() }
            usleep(500_000)
            let top = sandbox.run(["pw-top", "-b", "-n", "3"], timeout: 20).stdout
            let line = top.split(separator: "\n").last { $0.hasSuffix(" desk") } ?? ""
            #expect(line.contains("F32P 7 48000"), "pw-top: \(line)\n\(top)")
        }
    }

    /// Idle devices sleep (issue 30): with nothing playing, the interface, the desk's virtual
    /// devices and the desk stop running within WirePlumber's 5 s; a player wakes them and its
    /// first sample arrives (recorded whole, from its first block, by a passive recorder that
    /// keeps nothing awake), as through a plain null sink; a device removed 2 s after its last
    /// sound, while WirePlumber 0.4.13's suspend timer runs, leaves the session manager running.
    @Test func idleDevicesSleepAndWakeWithTheirFirstBlock() throws {
        let sandbox = try Sandbox(dropIns: [Self.fixtures.appendingPathComponent("interface-sleeps.conf").path,
                                            repositoryRoot.appendingPathComponent("conf/crosspoint-desk.conf").path], pulse: true)
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("the desk, its devices and its monitor on the interface") { graph in
            ["game", "music", "chat", "stream-mix"].allSatisfy { graph.nodeID($0) != nil }
                && graph.links(of: "desk").filter { $0.peer == "interface" }.count == 2
        }
        #expect(sandbox.shell("""
            pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=plain media.class=Audio/Sink \
              object.linger=true audio.position=[ FL FR ] }' >/dev/null
            pw_wait_ports plain 2 input
            """).succeeded)
        func state(_ graph: Graph, _ name: String) -> String {
            (graph.nodes(named: name).first?["info"] as? [String: Any])?["state"] as? String ?? "gone"
        }
        var devices = ["interface", "game", "music", "chat", "stream-mix", "plain"]
        func asleep(_ graph: Graph) -> Bool { deskAsleep(graph) && state(graph, "plain") == "suspended" }
        func deskAsleep(_ graph: Graph) -> Bool {
            devices.allSatisfy { $0 == "plain" || state(graph, $0) == "suspended" } && state(graph, "desk") != "running"
        }
        let started = Date()
        _ = try sandbox.waitFor("every device asleep", timeout: 20, describe: { g in (devices + ["desk"]).map { "\($0) \(state(g, $0))" }.joined(separator: ", ") }, asleep)
        print("asleep \(String(format: "%.1f", Date().timeIntervalSince(started))) s after the desk's devices were made")

        // From asleep, a player's first block: through game, the desk and the interface, and
        // straight into the plain null sink. The signal starts at its first sample.
        let signal = (0..<2).map { c in (0..<24000).map { n in Float(0.25) * (((n / (40 + 20 * c)) % 2 == 0) ? 1 : -1) } }
        func firstBlock(into device: String, recording sink: String, channels: [String], gain: Float = 1,
                        fromSleep: Bool = true) throws -> (lost: Int, offset: Int) {
            let tag = "\(UInt32.random(in: 0..<UInt32.max))"
            let wav = Sandbox.audioFolder + "crosspoint-\(tag)-in.wav", recorded = Sandbox.audioFolder + "crosspoint-\(tag)-out.wav"
            defer { try? FileManager.default.removeItem(atPath: wav); try? FileManager.default.removeItem(atPath: recorded) }
            try Wave.write(signal, to: wav)
            let recorder = try sandbox.start(["pw-record", "--target", sink, "-P",
                                              "{ stream.capture.sink = true node.passive = true node.name = sleep-rec-\(tag) }",
                                              "--channels", "\(channels.count)", "--channel-map", PipeWire.channelMap(channels),
                                              "--format", "f32", recorded])
            #expect(sandbox.shell("pw_wait_ports sleep-rec-\(tag) \(channels.count) input").succeeded)
            usleep(500_000)
            if fromSleep {
                #expect(device == "plain" ? asleep(try Graph(sandbox)) : deskAsleep(try Graph(sandbox)), "the passive recorder woke nothing")
            }
            let player = try sandbox.start(["paplay", "--device=\(device)", "--client-name=sleep-play-\(tag)", wav])
            player.wait(timeout: 20)
            usleep(500_000)
            recorder.stop()
            let read = try Wave.read(recorded)
            guard read.count == channels.count, let offset = read[0].firstIndex(where: { $0 != 0 }) else { return (signal[0].count, -1) }
            // Every sample from the first on, as played.
            let lost = (0..<signal[0].count).first { n in
                (0..<2).contains { c in offset + n >= read[c].count || abs(read[c][offset + n] - gain * signal[c][n]) > 1e-4 }
            } ?? signal[0].count
            return (signal[0].count - lost, offset)
        }
        let plain = try firstBlock(into: "plain", recording: "plain", channels: ["FL", "FR"])
        // (The desk's chain slept meanwhile: plain is a device of its own.)
        let desk = try firstBlock(into: "game", recording: "interface", channels: ["FL", "FR", "RL", "RR"])
        print("first block after waking: plain null sink \(plain.lost) frames lost, first sound \(plain.offset) frames into the recording; "
              + "game, desk, interface \(desk.lost) lost, \(desk.offset) frames in")
        #expect(plain.lost == 0 && desk.lost == 0, "frames lost: plain \(plain.lost), desk \(desk.lost)")

        // A device removed 2 s after its last sound (WirePlumber 0.4.13 arms its 5 s suspend
        // timer when the device goes idle, and fires it 3 s after the removal): the session
        // manager lives on; the rest sleeps again.
        let wireplumber = sandbox.pid(of: "wireplumber")
        #expect(wireplumber != nil)
        let music = try firstBlock(into: "music", recording: "interface", channels: ["FL", "FR", "RL", "RR"], gain: 0.5, fromSleep: false)
        #expect(music.lost == 0)
        usleep(2_000_000)
        #expect(sandbox.crosspoint("virtual", "remove", "desk", "music").succeeded)
        let removed = Date()
        devices.removeAll { $0 == "music" }
        _ = try sandbox.waitFor("asleep after playing", timeout: 20, describe: { g in (devices + ["desk"]).map { "\($0) \(state(g, $0))" }.joined(separator: ", ") }, asleep)
        let waited = Date().timeIntervalSince(removed)
        if waited < 4.5 { usleep(UInt32((4.5 - waited) * 1_000_000)) }  // past the timer's 3 s
        let after = sandbox.pid(of: "wireplumber")
        #expect(after == wireplumber, "WirePlumber was \(wireplumber.map(String.init) ?? "-"), now \(after.map(String.init) ?? "-")")
        #expect(try Graph(sandbox).nodeID("music") == nil)
    }

    /// A person's link from an output that follows a device (the monitor also to the
    /// interface's rear pair, by hand) stays beside the group's rule, `show` says so, and the
    /// node's memory keeps it across a daemon restart; the group's own links are not remembered
    /// (the group makes them).
    @Test func aPersonsLinkFromAFollowingOutputIsShownAndRememberedAcrossARestart() throws {
        let sandbox = try setupSandbox("crosspoint-desk", until: "the desk's monitor on the interface") { graph in
            graph.links(of: "desk").filter { $0.peer == "interface" }.count == 2
        }
        defer { sandbox.stop() }
        func monitorLinks(_ graph: Graph) -> [String] {
            let ports = graph.ports(of: "desk", direction: "output")
            guard let port = ports.first(where: { $0["port.name"] as? String == "out_mon_FL" }), let id = port["object.id"] as? Int else { return [] }
            return graph.linkedPorts(of: id).sorted()
        }
        #expect(sandbox.run(["pw-link", "desk:out_mon_FL", "interface:playback_RL"]).succeeded)
        let hand = "also linked by hand: out_mon_FL -> interface:playback_RL"
        // (And that it follows the default the session manager published: the first sink is all
        // it has until WirePlumber publishes one.)
        _ = try sandbox.waitFor("the follower to say so", describe: { graph in
            let defaults = sandbox.run(["pw-metadata", "0"]).stdout.split(separator: "\n").filter { $0.contains("audio.sink") }
            return "metadata: \(defaults.joined(separator: " | ")); desk's crosspoint.targets: "
                + (graph.nodes(named: "desk").first.map { Graph.props($0)["crosspoint.targets"] as? String ?? "" } ?? "")
        }) { graph in
            (graph.nodes(named: "desk").first.map { Graph.props($0)["crosspoint.targets"] as? String ?? "" } ?? "")
                .contains("linked to default (interface) (\(hand))")
        }
        let shown = sandbox.crosspoint("show", "desk").stdout
        #expect(shown.contains("following: default outputs=mon_FL,mon_FR: linked to default (interface) (\(hand))"), "\(shown)")
        #expect(monitorLinks(try Graph(sandbox)) == ["interface:playback_FL", "interface:playback_RL"])
        let stateFile = sandbox.directory + "/state/crosspoint/desk/state.json"
        try wait("the state file to have the person's link") {
            ((try? String(contentsOfFile: stateFile, encoding: .utf8)) ?? "").contains("\"playback_RL\"")
        }
        let state = (try? String(contentsOfFile: stateFile, encoding: .utf8)) ?? ""
        #expect(!state.contains("\"playback_FL\""), "the group's own link is not the memory's: \(state)")
        try sandbox.restartDaemon()
        _ = try sandbox.waitFor("the monitor on the interface and the person's link again", describe: { "\(monitorLinks($0))" }) {
            monitorLinks($0) == ["interface:playback_FL", "interface:playback_RL"]
        }
    }

    @Test func thePair34SetupPlaysAStereoDeviceOnOutputs3And4OfTheDefaultDevice() throws {
        let sandbox = try setupSandbox("crosspoint-pair34", until: "outputs-34 and the node on RL and RR") { graph in
            graph.nodeID("outputs-34") != nil && graph.links(of: "pair34").filter { $0.peer == "interface" }.count == 2
        }
        defer { sandbox.stop() }
        let signal = TestSignal(channels: 2)
        let heard = try playIntoDevice(sandbox, signal: signal) { wav, name in ["paplay", "--device=outputs-34", "--client-name=\(name)", wav] }
        expectSamples(Array(heard.recorded[2...3]), signal.channels, "outputs-34 on the interface's RL and RR")
        #expect(heard.recorded[0].allSatisfy { $0 == 0 } && heard.recorded[1].allSatisfy { $0 == 0 }, "outputs 1-2 are not silent")
    }

    @Test func theMonoSetupIsTheDefaultDeviceAndPlaysBothSidesInBothEarsOnTheRealDevice() throws {
        let sandbox = try setupSandbox("crosspoint-mono", until: "the mono device and the node on the interface") { graph in
            graph.nodeID("mono-output") != nil && graph.links(of: "mono").filter { $0.peer == "interface" }.count == 2
        }
        defer { sandbox.stop() }
        try wait("mono-output to be the default sink") {
            sandbox.run(["pactl", "get-default-sink"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mono-output"
        }
        // An application that chooses nothing: into the mono device, out on the interface.
        let signal = TestSignal(channels: 2)
        let heard = try playIntoDevice(sandbox, signal: signal) { wav, name in ["paplay", "--client-name=\(name)", wav] }
        let mono = zip(signal.channels[0], signal.channels[1]).map { 0.5 * $0 + 0.5 * $1 }
        expectSamples(Array(heard.recorded.prefix(2)), [mono, mono], "left and right in both ears")
        #expect(heard.peers == ["mono-output"], "the player is linked to \(heard.peers)")
    }

    /// The screen reader's setup (issue 31): an application that chooses nothing plays into
    /// "Media" (the default), the voice into "Speech"; both reach the interface, and media is
    /// 15 dB down while the voice speaks, back after it. Media is a 480 Hz tone, the voice a
    /// 1 kHz burst: each is read from the recording by its own frequency, window by window.
    @Test func theSpeechSetupLowersMediaWhileSpeechPlays() throws {
        let sandbox = try setupSandbox("crosspoint-speech", until: "media, speech and the reader on the interface") { graph in
            graph.nodeID("media") != nil && graph.nodeID("speech") != nil
                && graph.links(of: "reader").filter { $0.peer == "interface" }.count == 2
        }
        defer { sandbox.stop() }
        try wait("media to be the default sink") {
            sandbox.run(["pactl", "get-default-sink"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "media"
        }
        let tag = "\(UInt32.random(in: 0..<UInt32.max))"
        let mediaWav = Sandbox.audioFolder + "crosspoint-\(tag)-media.wav", speechWav = Sandbox.audioFolder + "crosspoint-\(tag)-speech.wav"
        let recorded = Sandbox.audioFolder + "crosspoint-\(tag)-out.wav"
        defer { for f in [mediaWav, speechWav, recorded] { try? FileManager.default.removeItem(atPath: f) } }
        let rate = 48000.0
        let media = (0..<Int(4 * rate)).map { Float(0.2 * sin(2 * Double.pi * 480 * Double($0) / rate)) }
        // The voice: 1 s of silence, 1 s of a 1 kHz tone at 0.3, then silence.
        let speech = (0..<Int(3 * rate)).map { n in n >= 48000 && n < 96000 ? Float(0.3 * sin(2 * Double.pi * 1000 * Double(n) / rate)) : 0 }
        try Wave.write([media, media], to: mediaWav)
        try Wave.write([speech, speech], to: speechWav)
        let recorder = try sandbox.start(["pw-record", "--target", "interface", "-P", "{ stream.capture.sink = true node.name = rec-\(tag) }",
                                          "--channels", "4", "--channel-map", PipeWire.channelMap(["FL", "FR", "RL", "RR"]), "--format", "f32", recorded])
        guard sandbox.shell("pw_wait_ports rec-\(tag) 4 input").succeeded else { recorder.stop(); throw SandboxError("the recorder has no ports") }
        usleep(300_000)
        let mediaPlayer = try sandbox.start(["paplay", "--client-name=media-\(tag)", mediaWav])
        usleep(300_000)
        let voice = try sandbox.start(["paplay", "--device=speech", "--client-name=voice-\(tag)", speechWav])
        voice.wait(timeout: 30)
        mediaPlayer.wait(timeout: 30)
        usleep(300_000)
        recorder.stop()
        let left = try Wave.read(recorded)[0]

        // Each frequency's amplitude over windows of 50 ms (whole periods of both tones).
        func amplitude(_ frequency: Double, at start: Int) -> Double {
            var re = 0.0, im = 0.0
            for n in start..<(start + 2400) {
                let phase = 2 * Double.pi * frequency * Double(n) / rate
                re += Double(left[n]) * cos(phase)
                im += Double(left[n]) * sin(phase)
            }
            return 2 * (re * re + im * im).squareRoot() / 2400
        }
        let windows = stride(from: 0, to: left.count - 2400, by: 2400).map { (start: $0, media: amplitude(480, at: $0), voice: amplitude(1000, at: $0)) }
        let speaking = windows.filter { $0.voice > 0.25 }
        let described = windows.map { String(format: "%.0f/%.2f", 20 * log10(max($0.media, 1e-9) / 0.2), $0.voice) }.joined(separator: " ")
        guard let first = speaking.first?.start, let last = speaking.last?.start, speaking.count >= 15 else {
            Issue.record("the voice was not heard for a second: \(described)")
            return
        }
        // Media at unity before the voice, 15 dB down while it speaks (after a window for the
        // attack), at unity again once the hold and release are past.
        // (Not the windows where media starts and ends: partly silent.)
        let playing = windows.filter { $0.media > 0.01 }
        let mediaFrom = (playing.first?.start ?? 0) + 2400, mediaTo = (playing.last?.start ?? 0) - 2400
        let before = playing.filter { $0.start >= mediaFrom && $0.start + 2400 < first - 2400 }
        #expect(!before.isEmpty && before.allSatisfy { abs(20 * log10($0.media / 0.2)) < 0.2 }, "media before the voice: \(described)")
        // (Not the windows where the voice starts and stops: partly silent, the cut tone leaks
        // into the media's frequency.)
        let during = speaking.filter { $0.start > first && $0.start < last }
        #expect(during.allSatisfy { abs(20 * log10($0.media / 0.2) + 15) < 0.5 }, "media while the voice speaks: \(described)")
        let after = playing.filter { $0.start > last + 2400 + Int(1.2 * rate) && $0.start <= mediaTo }
        #expect(!after.isEmpty && after.allSatisfy { abs(20 * log10($0.media / 0.2)) < 0.2 }, "media after the voice: \(described)")
        // The voice itself at unity throughout.
        #expect(during.allSatisfy { abs($0.voice - 0.3) < 0.005 }, "the voice: \(described)")
    }

    // MARK: Helpers

    private func wait(_ what: String, timeout: Double = 10, _ condition: () -> Bool) throws {
        try Wait.until(what, timeout: timeout, condition)
    }

    /// The lines of `wpctl status` under `title` (Sinks:, Sources:) up to the next heading.
    private func section(_ status: String, _ title: String) -> String {
        guard let start = status.range(of: title) else { return "" }
        let rest = status[start.upperBound...]
        let end = rest.range(of: "├─") ?? rest.range(of: "└─")
        return String(end.map { rest[..<$0.lowerBound] } ?? rest)
    }

    /// Expects `recorded` to be `expected` within `tolerance`, sample by sample, at the lag the
    /// recording trails it by (found by cross-correlation from the signal's onset; the tools'
    /// own delay differs between versions and players).
    private func expectSamples(_ recorded: [[Float]], _ expected: [[Float]], _ what: String, tolerance: Float = 1e-4,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        guard recorded.count == expected.count else {
            Issue.record("\(what): recorded \(recorded.count) channels, expected \(expected.count)", sourceLocation: sourceLocation)
            return
        }
        guard let (error, lag) = sampleError(recorded, expected) else {
            Issue.record("\(what): nothing to compare (no signal expected)", sourceLocation: sourceLocation)
            return
        }
        #expect(error <= tolerance, "\(what): max error \(error) at lag \(lag); recorded \(recorded.first?.count ?? 0) frames",
                sourceLocation: sourceLocation)
    }

    /// The largest |recorded - expected| over the steady window, at the lag the recording's
    /// onset gives; nil if the channels do not pair up or nothing is expected.
    private func sampleError(_ recorded: [[Float]], _ expected: [[Float]]) -> (error: Float, lag: Int)? {
        guard recorded.count == expected.count,
              let lag = CrossCorrelation.lag(recorded: recorded, expected: expected.map { Array($0.prefix(TestSignal.leadIn + 9600)) }) else { return nil }
        var error: Float = 0
        for c in expected.indices {
            for n in (TestSignal.leadIn + 2400)..<(expected[c].count - 4800) {
                let r = n + lag >= 0 && n + lag < recorded[c].count ? recorded[c][n + lag] : .infinity
                error = max(error, abs(r - expected[c][n]))
            }
        }
        return (error, lag)
    }

    /// Plays `signal` with the player `command(wav, name)` makes (which reaches a device through
    /// the session manager) and records `sink`'s monitor (the interface's FL and FR carry the
    /// node's outputs; a pw-record of its monitor gets all of its channels). Also
    /// returns the nodes the player was linked to while it played.
    private func playIntoDevice(
        _ sandbox: Sandbox, signal: TestSignal, recordFrom sink: String = "interface", channels: [String] = ["FL", "FR", "RL", "RR"],
        _ command: (String, String) -> [String]
    ) throws -> (recorded: [[Float]], peers: [String]) {
        let tag = "\(UInt32.random(in: 0..<UInt32.max))"
        let name = "player-\(tag)", recorder = "recorder-\(tag)"
        let wav = Sandbox.audioFolder + "crosspoint-\(tag)-in.wav", recorded = Sandbox.audioFolder + "crosspoint-\(tag)-out.wav"
        defer {
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: recorded)
        }
        try Wave.write(signal.channels, to: wav)
        let recording = try sandbox.start([
            "pw-record", "--target", sink, "-P", "{ stream.capture.sink = true node.name = \(recorder) }",
            "--channels", "\(channels.count)", "--channel-map", PipeWire.channelMap(channels), "--format", "f32", recorded,
        ])
        let ready = sandbox.shell("pw_wait_ports \(recorder) \(channels.count) input")
        guard ready.succeeded else { recording.stop(); throw SandboxError("recorder: \(ready.stderr)") }
        usleep(300_000)
        let player = try sandbox.start(command(wav, name))
        // Where the session manager sent the player, while it plays.
        let graph = try sandbox.waitFor("the player's links") { $0.links(of: name).count >= 2 }
        let peers = Set(graph.links(of: name).map(\.peer)).sorted()
        player.wait(timeout: 30)
        usleep(300_000)
        recording.stop()
        let read = try Wave.read(recorded)
        guard read.count == channels.count else { throw SandboxError("recorded \(read.count) channels, expected \(channels.count)") }
        return (read, peers)
    }
}
