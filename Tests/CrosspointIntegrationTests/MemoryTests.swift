import Foundation
import Testing

/// What a node remembers: its state across daemon restarts, and the links people made.
@Suite(.serialized)
struct MemoryTests {
    let sandbox: Sandbox
    static let dropIn = """
        context.modules = [
            { name = libpipewire-module-crosspoint args = { node.name = "xp-mem" inputs = 2 outputs = 2 ramp.ms = 0 } }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-forgetful" state.persist = false state.links = false } }
        ]
        """

    init() throws {
        let conf = NSTemporaryDirectory() + "crosspoint-memory-\(getpid()).conf"
        try MemoryTests.dropIn.write(toFile: conf, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }  // the sandbox keeps its own copy
        sandbox = try Sandbox(dropIns: [conf])
        _ = try sandbox.waitFor("the nodes") { $0.nodeID("xp-mem") != nil && $0.nodeID("xp-forgetful") != nil }
    }

    var stateFile: String { sandbox.environment["XDG_STATE_HOME"]! + "/crosspoint/xp-mem/state.json" }

    func setParam(_ node: String, _ json: String) throws {
        let id = try #require(try Graph(sandbox).nodeID(node))
        #expect(sandbox.run(["pw-cli", "set-param", "\(id)", "Props", json]).succeeded)
    }

    func linkToSink(_ sink: String, positions: String = "FL FR") {
        sandbox.shell("pw_null_sink \(sink) '\(positions)' && pw-link xp-mem:out_FL \(sink):playback_FL && pw-link xp-mem:out_FR \(sink):playback_FR")
    }

    func links(of node: String) -> [String] {
        let out = sandbox.shell("pw-link -l | grep -A1 '^\(node)' | grep -- '->' | awk '{print $2}' | sort").stdout
        return out.split(separator: "\n").map(String.init)
    }

    func waitForLinks(_ expected: [String], timeout: Double = 5) -> [String] {
        var found: [String] = []
        _ = try? Wait.until("the links \(expected)", timeout: timeout) { found = links(of: "xp-mem:out"); return found == expected }
        return found
    }

    @Test func stateAndLinksComeBackAfterADaemonRestart() throws {
        try setParam("xp-mem", #"{ params = [ "matrix.0.1" 0.5 "matrix.1.1" -0.25 "gain.out.0" 0.5 ] }"#)
        linkToSink("speakers")
        usleep(800_000)
        let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
        #expect(saved.contains("\"peer.node\": \"speakers\""), "links are saved: \(saved)")

        try sandbox.restartDaemon()
        let graph = try sandbox.waitFor("xp-mem after the restart") { $0.nodeID("xp-mem") != nil }
        let params = graph.params(of: "xp-mem")
        #expect(sandbox.float(params["matrix.0.1"]) == 0.5 && sandbox.float(params["matrix.1.1"]) == -0.25)
        #expect(sandbox.float(params["gain.out.0"]) == 0.5)
        // The sink is a device that comes back after the daemon: the links are re-made.
        sandbox.shell("pw_null_sink speakers 'FL FR'")
        #expect(waitForLinks(["speakers:playback_FL", "speakers:playback_FR"]) == ["speakers:playback_FL", "speakers:playback_FR"])
        try sandbox.expectAudio(node: "xp-mem", gains: [[0.5, 0.5], [0, -0.25]])
        sandbox.stop()
    }

    @Test func aReplugRestoresTheLinksAndAudioReachesTheDevice() throws {
        linkToSink("usb", positions: "FL FR FC")  // FC: for the recording's reference path
        usleep(500_000)
        sandbox.shell("pw_destroy_node usb")
        #expect(links(of: "xp-mem:out").isEmpty)
        usleep(500_000)
        sandbox.shell("pw_null_sink usb 'FL FR FC'")
        #expect(waitForLinks(["usb:playback_FL", "usb:playback_FR"]) == ["usb:playback_FL", "usb:playback_FR"])
        // Audio through the node reaches the replugged device: record its monitor (its
        // FC, which the node does not feed, takes the recording's reference path).
        let signal = TestSignal(channels: 2)
        try sandbox.compareJudgedByTheControl("xp-mem", expected: signal.expected(gains: [[1, 0], [0, 1]], linkedInputs: [0, 1])) {
            try sandbox.recordSink("usb", positions: ["FL", "FR"], reference: "FC", node: "xp-mem", signal: signal)
        }.expectMatch()
        // The node let go of the proxies of the links it re-made: a daemon stop reports none leaked.
        try sandbox.restartDaemon()
        #expect(!sandbox.daemonLog.contains("leaked proxy"), "\(sandbox.daemonLog)")
        sandbox.stop()
    }

    @Test func aLinkThePersonRemovesIsForgotten() throws {
        linkToSink("monitor")
        usleep(500_000)
        sandbox.run(["pw-link", "-d", "xp-mem:out_FR", "monitor:playback_FR"])
        usleep(800_000)
        let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
        #expect(saved.contains("playback_FL") && !saved.contains("playback_FR"), "\(saved)")
        sandbox.shell("pw_destroy_node monitor && pw_null_sink monitor 'FL FR'")
        #expect(waitForLinks(["monitor:playback_FL"]) == ["monitor:playback_FL"])
        sandbox.stop()
    }

    @Test func aTruncatedStateFileIsSetAsideAndTheNodeStillLoads() throws {
        try setParam("xp-mem", #"{ params = [ "matrix.0.1" 0.75 ] }"#)
        usleep(600_000)
        let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
        try String(saved.prefix(saved.count / 2)).write(toFile: stateFile, atomically: false, encoding: .utf8)
        try sandbox.restartDaemon()
        let graph = try sandbox.waitFor("xp-mem after the restart") { $0.nodeID("xp-mem") != nil }
        #expect(sandbox.float(graph.params(of: "xp-mem")["matrix.0.1"]) == 0, "starts from its arguments")
        #expect(sandbox.daemonLog.contains("ignored the saved state"), "the problem is reported")
        let kept = try FileManager.default.contentsOfDirectory(atPath: (stateFile as NSString).deletingLastPathComponent)
        #expect(kept.contains { $0.hasPrefix("state.json.bad-") }, "the bad file is kept aside: \(kept)")
        sandbox.stop()
    }

    @Test func persistenceCanBeTurnedOff() throws {
        try setParam("xp-forgetful", #"{ params = [ "matrix.0.1" 0.75 ] }"#)
        usleep(600_000)
        let dir = sandbox.environment["XDG_STATE_HOME"]! + "/crosspoint/xp-forgetful"
        #expect(!FileManager.default.fileExists(atPath: dir))
        try sandbox.restartDaemon()
        let graph = try sandbox.waitFor("xp-forgetful after the restart") { $0.nodeID("xp-forgetful") != nil }
        #expect(sandbox.float(graph.params(of: "xp-forgetful")["matrix.0.1"]) == 0)
        sandbox.stop()
    }
}
