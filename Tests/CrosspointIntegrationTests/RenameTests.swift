import Foundation
import Testing

/// Channel names changed live, as every client sees them: a renamed port is a new port object
/// (registry readers such as pw-link, Helvum, qpwgraph and `crosspoint show` only ever see a
/// port's first name), linked to the same peers as the old one. And what a node remembers of
/// the links of ports that go: a channel removed and added again starts unlinked; the links
/// of peers that never come back are forgotten beyond 64.
@Suite(.serialized)
struct RenameTests {
    let sandbox: Sandbox
    static let dropIn = """
        context.modules = [
            { name = libpipewire-module-crosspoint args = { node.name = "xp-rn" inputs = 2 outputs = 2 ramp.ms = 0 } }
        ]
        """

    init() throws {
        let conf = NSTemporaryDirectory() + "crosspoint-rename-\(getpid()).conf"
        try RenameTests.dropIn.write(toFile: conf, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }
        sandbox = try Sandbox(dropIns: [conf])
        _ = try sandbox.waitFor("xp-rn") { $0.nodeID("xp-rn") != nil }
    }

    var stateFile: String { sandbox.environment["XDG_STATE_HOME"]! + "/crosspoint/xp-rn/state.json" }

    func setParam(_ json: String) throws {
        let id = try #require(try Graph(sandbox).nodeID("xp-rn"))
        let result = sandbox.run(["pw-cli", "set-param", "\(id)", "Props", json])
        #expect(result.succeeded, "set-param \(json): \(result.stderr)")
    }

    /// `pw-link -o` / `-i`: what a registry reader lists for the node (port names as announced).
    func listed(_ flag: String) -> [String] {
        sandbox.run(["pw-link", flag]).stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("xp-rn:") }
    }

    @Test func aRenamedPortIsSeenByRegistryReadersKeepsItsLinksAndTheOtherChannelPlaysOn() throws {
        let signal = TestSignal(channels: 2, seconds: 3)
        let recorded = try sandbox.playThrough(node: "xp-rn", signal: signal) {
            usleep(1_200_000)  // into the tone
            try setParam(#"{ params = [ "output.position" [ "FL" "RR" ] ] }"#)
        }
        // Registry readers list the new name, not the old one.
        #expect(Set(listed("-o")) == ["xp-rn:out_FL", "xp-rn:out_RR"], "pw-link -o: \(listed("-o"))")
        // The untouched channel (out_FL, fed by in_FL) played on sample-exact through the rename.
        let expected = signal.expected(gains: [[1, 0], [0, 1]], linkedInputs: [0, 1])
        let untouched = try Comparison(recording: recorded.outputs([0]), expected: [expected[0]])
        untouched.expectMatch("out_FL while out_FR was renamed")
        // The renamed channel is linked again and carries its tone to the end: the RMS of its
        // last half second of tone is the tone's (0.2 / sqrt 2).
        let renamed = recorded.outputs[1]
        let end = renamed.lastIndex { abs($0) > 1e-3 } ?? 0
        let tail = renamed[max(0, end - 24000)..<end]
        let rms = (tail.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(tail.count, 1))).squareRoot()
        #expect(abs(rms - 0.2 / 2.0.squareRoot()) < 0.01, "out_RR after the rename: RMS \(rms)")

        // An input renamed while linked: the new name is listed and the link follows it.
        #expect(sandbox.shell("pw_null_sink src 'FL' && pw-link src:monitor_FL xp-rn:in_FL").succeeded)
        try setParam(#"{ params = [ "input.position" [ "MIC" "FR" ] ] }"#)
        _ = try sandbox.waitFor("in_MIC") { _ in Set(listed("-i")) == ["xp-rn:in_MIC", "xp-rn:in_FR"] }
        let show = sandbox.run([crosspointExecutable, "show", "xp-rn"])
        #expect(show.succeeded && show.stdout.contains("MIC") && show.stdout.contains("RR"),
                "crosspoint show: \(show.stdout) \(show.stderr)")
        var links = ""
        for _ in 0..<20 where !links.contains("src:monitor_FL") {
            usleep(100_000)
            links = sandbox.run(["pw-link", "-l", "xp-rn:in_MIC"]).stdout
        }
        #expect(links.contains("src:monitor_FL"), "in_MIC keeps in_FL's link: \(links)")
        // `show` pairs each channel with its own port's links: in_MIC is a new port object,
        // listed after in_FR, and its link must not be shown as in_FR's.
        let table = sandbox.run([crosspointExecutable, "show", "xp-rn"]).stdout
        let micLine = table.split(separator: "\n").first { $0.contains("in_MIC ") && ($0.contains("<-") || $0.contains("not linked")) }
        let frLine = table.split(separator: "\n").first { $0.contains("in_FR ") && ($0.contains("<-") || $0.contains("not linked")) }
        #expect(micLine?.contains("src:monitor_FL") == true && frLine?.contains("not linked") == true,
                "links by channel after the rename: \(table)")
        sandbox.stop()
    }

    @Test func aChannelRemovedAndAddedAgainStartsUnlinked() throws {
        try setParam(#"{ params = [ "outputs" 4 ] }"#)
        _ = try sandbox.waitFor("4 outputs") { $0.ports(of: "xp-rn", direction: "output").count == 4 }
        #expect(sandbox.shell("pw_null_sink tv 'FL FR' && pw-link xp-rn:out_AUX3 tv:playback_FR").succeeded)
        usleep(500_000)
        try setParam(#"{ params = [ "outputs" 3 ] }"#)
        _ = try sandbox.waitFor("3 outputs") { $0.ports(of: "xp-rn", direction: "output").count == 3 }
        usleep(500_000)
        try setParam(#"{ params = [ "outputs" 5 ] }"#)
        _ = try sandbox.waitFor("5 outputs") { $0.ports(of: "xp-rn", direction: "output").count == 5 }
        usleep(1_000_000)  // time enough for a remembered link to be re-made
        let links = sandbox.run(["pw-link", "-l"]).stdout
        #expect(!links.contains("xp-rn:out_AUX3"), "a link of a removed channel came back: \(links)")
        sandbox.stop()
    }

    @Test func theStateFileKeepsAtMost64LinksOfAbsentPeers() throws {
        // 100 short-lived peers (null sinks, as pw_null_sink makes them), each linked to the node
        // and gone again, 20 at a time: a batch made by one pw-cli, linked by 20 pw-links at
        // once, destroyed by one pw-cli.
        let node = try #require(try Graph(sandbox).nodeID("xp-rn"))
        var gone = Date.distantPast
        for batch in 0..<5 {
            let names = (0..<20).map { "peer\(batch * 20 + $0)" }
            try sandbox.pwCliBatch(names.map { """
                create-node adapter { factory.name=support.null-audio-sink node.name=\($0) \
                media.class=Audio/Sink object.linger=true audio.position=[ MONO ] }
                """ }, knowing: [node], until: "batch \(batch)'s sinks") { graph in
                names.allSatisfy { graph.ports(of: $0, direction: "input").count == 1 }
            }
            // The node keeps when a link was last live to the second: each batch is linked a
            // second after the one before was gone, so that the batches' ages differ.
            let wait = gone.addingTimeInterval(1.1).timeIntervalSinceNow
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            let linked = sandbox.shell("""
                pids=(); for peer in \(names.joined(separator: " ")); do pw-link xp-rn:out_FL "$peer:playback_MONO" & pids+=($!); done
                for pid in "${pids[@]}"; do wait "$pid"; done
                """, timeout: 120)
            #expect(linked.succeeded, "batch \(batch): \(linked.stderr)")
            usleep(400_000)  // the links are announced and remembered
            let graph = try Graph(sandbox)
            let ids = names.compactMap { graph.nodeID($0) }
            #expect(ids.count == 20, "batch \(batch): \(ids.count) of its 20 sinks")
            try sandbox.pwCliBatch(ids.map { "destroy \($0)" }, knowing: ids, until: "batch \(batch) to go") { graph in
                names.allSatisfy { graph.nodeID($0) == nil }
            }
            gone = Date()
        }
        usleep(1_000_000)  // settled and saved
        let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
        let peers = saved.components(separatedBy: "\"peer.node\"").count - 1
        #expect(peers == 64, "the state file holds \(peers) link records")
        #expect(saved.contains("\"peer99\"") && !saved.contains("\"peer0\""), "the longest absent go first")
        sandbox.stop()
    }
}
