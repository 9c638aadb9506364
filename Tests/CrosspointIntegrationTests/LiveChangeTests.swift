import Foundation
import Testing

/// Live change while audio plays: port counts, relinking, parameter storms. The untouched
/// channels must play on sample-exact: no gap, no click, no change of gain.
@Suite(.serialized)
struct LiveChangeTests {
    let sandbox: Sandbox
    static let dropIn = """
        context.modules = [
            { name = libpipewire-module-crosspoint args = { node.name = "xp-live" inputs = 4 outputs = 4 } }
        ]
        """

    init() throws {
        let conf = NSTemporaryDirectory() + "crosspoint-live-\(getpid()).conf"
        try LiveChangeTests.dropIn.write(toFile: conf, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }  // the sandbox keeps its own copy
        sandbox = try Sandbox(dropIns: [conf])
        _ = try sandbox.waitFor("xp-live") { $0.nodeID("xp-live") != nil }
    }

    @Test func portCountsLinksAndAParameterStormLeaveUntouchedChannelsPlaying() throws {
        let id = try #require(try Graph(sandbox).nodeID("xp-live"))
        let profile = NSTemporaryDirectory() + "crosspoint-profile-\(getpid()).log"
        // pw-profiler writes plot files beside its log: run it in the temporary directory.
        let profiler = try sandbox.start(["bash", "-c", "cd \"$0\" && exec pw-profiler -o \"$1\"", NSTemporaryDirectory(), profile])
        defer { try? FileManager.default.removeItem(atPath: profile) }
        var random = SystemRandomNumberGenerator()
        var lastWritten: [String: Double] = [:]

        let signal = TestSignal(channels: 4, seconds: 7)
        let recorded = try sandbox.playThrough(node: "xp-live", signal: signal) {
            // The player, found while it surely plays (on a loaded machine, the changes below
            // have taken longer than its signal).
            let player = sandbox.shell("pw-link -l | grep -B1 -- '-> xp-live:in_AUX0' | head -1").stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!player.isEmpty, "in_AUX0 should be fed by the player")
            usleep(400_000)
            let cli = try PwCli(sandbox)
            defer { cli.close() }
            for (key, value) in [("outputs", 6), ("outputs", 3), ("inputs", 2), ("inputs", 4)] {
                cli.send(["set-param \(id) Props { params = [ \"\(key)\" \(value) ] }"])
                usleep(300_000)
            }
            // Unlink and relink one port of a touched output (fan-out and re-made links too).
            let peer = sandbox.shell("pw-link -l | grep -A1 '^xp-live:out_AUX2' | tail -1 | awk '{print $2}'").stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!peer.isEmpty, "out_AUX2 should be linked")
            sandbox.run(["pw-link", "-d", "xp-live:out_AUX2", peer])
            usleep(200_000)
            sandbox.run(["pw-link", "xp-live:out_AUX2", peer])
            sandbox.run(["pw-link", "xp-live:out_AUX2", peer])  // the same link again: refused, nothing breaks
            // Fan-out of an untouched output to a second device, and a second source summed
            // into a touched input (PipeWire mixes what several links bring to one port).
            sandbox.shell("pw_null_sink second 'FL FR' && pw-link xp-live:out_AUX0 second:playback_FL")
            sandbox.run(["pw-link", player, "xp-live:in_AUX3"])
            usleep(200_000)
            // 1,000 set-params on the cross-points of output 2, in one pw-cli process.
            var commands: [String] = []
            for _ in 0..<1000 {
                let key = "matrix.\(Int.random(in: 0...3, using: &random)).2"
                let value = (Double(Int.random(in: 0...100, using: &random)) / 100)
                lastWritten[key] = value
                commands.append("set-param \(id) Props { params = [ \"\(key)\" \(value) ] }")
            }
            // Then one value no earlier command wrote: once the node shows it, it has taken
            // every command before it (the daemon and the node handle them in order).
            lastWritten["matrix.0.2"] = 0.125
            commands.append("set-param \(id) Props { params = [ \"matrix.0.2\" 0.125 ] }")
            try sandbox.pwCliBatch(commands, knowing: [id], until: "the storm's last command") { graph in
                sandbox.float(graph.params(of: "xp-live")["matrix.0.2"]) == 0.125
            }
        }
        profiler.stop()

        // Outputs 0 and 1 (fed by inputs 0 and 1, which stayed) must be the input, sample for sample.
        let expected = signal.expected(gains: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], linkedInputs: [0, 1, 2, 3])
        try Comparison(recording: recorded.outputs([0, 1]), expected: Array(expected.prefix(2))).expectMatch("untouched outputs")
        // No step larger than the sine's own steepest one (plus a margin) anywhere after the onset.
        for j in 0..<2 {
            let frequency = 330.0 + 190.0 * Double(j)
            let maxSlope = Float(2 * Double.pi * frequency * 0.2 / Double(TestSignal.rate)) * 1.05 + 1e-4
            let channel = recorded.outputs[j]
            let start = (channel.firstIndex { abs($0) > 1e-3 } ?? 0) + 1
            let end = start + (signal.channels[0].count - TestSignal.leadIn) - 4800
            var worst: Float = 0
            for n in start..<min(end, channel.count) { worst = max(worst, abs(channel[n] - channel[n - 1])) }
            #expect(worst <= maxSlope, "output \(j): a step of \(worst), more than the sine's \(maxSlope)")
        }

        // The node has the shape and the last values written.
        let graph = try Graph(sandbox)
        let portNames = { (direction: String) in graph.ports(of: "xp-live", direction: direction).compactMap { $0["port.name"] as? String }.sorted() }
        #expect(graph.ports(of: "xp-live", direction: "input").count == 4, "\(portNames("input"))")
        #expect(graph.ports(of: "xp-live", direction: "output").count == 3, "\(portNames("output")); Props: \(graph.params(of: "xp-live")["outputs"] ?? "-") outputs")
        let params = graph.params(of: "xp-live")
        for (key, value) in lastWritten {
            #expect(sandbox.float(params[key]).map { abs($0 - value) < 1e-6 } == true, "\(key) is \(params[key] ?? "missing"), last written \(value)")
        }
        #expect(sandbox.float(params["matrix.0.0"]) == 1 && sandbox.float(params["matrix.1.1"]) == 1)

        // No xrun: the profiler saw every cycle of the node finish, from its first finished one
        // on. The cycles before it are the graph waking: the node is passive and sleeps while
        // nothing plays, and the profiler starts before the player (seen: its first one or two
        // cycles triggered and not yet finished when the profiler looked).
        let log = (try? String(contentsOfFile: profile, encoding: .utf8)) ?? ""
        let cycles = log.split(separator: "\n")
        var nodeCycles = 0, failed = 0, running = false
        var failures: [String] = []
        for (index, line) in cycles.enumerated() {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            var k = 4
            while k + 7 < columns.count {
                if columns[k] == "\(id)" {
                    if columns[k + 6] == "3" { running = true }
                    if running {
                        nodeCycles += 1
                        if columns[k + 6] != "3" {
                            failed += 1
                            if failures.count < 4 { failures.append("cycle \(index) of \(cycles.count): \(columns[k...(k + 7)].joined(separator: " "))") }
                        }
                    }
                }
                k += 8
            }
        }
        #expect(nodeCycles > 100, "the profiler logged \(nodeCycles) cycles of the node")
        #expect(failed == 0, "\(failed) of \(nodeCycles) cycles of the node did not finish (xruns): \(failures.joined(separator: "; "))")
        sandbox.stop()
    }

    @Test func channelNamesChangeLiveAndLinksStay() throws {
        let id = try #require(try Graph(sandbox).nodeID("xp-live"))
        sandbox.shell("pw_null_sink names 'FL FR' && pw-link xp-live:out_AUX0 names:playback_FL")
        sandbox.run(["pw-cli", "set-param", "\(id)", "Props", #"{ params = [ "output.position" [ "FL" "FR" "RL" ] ] }"#])
        let graph = try sandbox.waitFor("renamed ports") { graph in
            Set(graph.ports(of: "xp-live", direction: "output").compactMap { $0["port.name"] as? String }) == ["out_FL", "out_FR", "out_RL"]
        }
        #expect(graph.ports(of: "xp-live", direction: "output").allSatisfy { ($0["port.name"] as? String) == "out_" + (($0["audio.channel"] as? String) ?? "?") })
        // The renamed port keeps its link (pw-dump shows the new port names; pw-link reads the
        // registry's first announcement of a port and keeps showing the old name).
        let renamed = graph.objects.first { o in
            (o["type"] as? String) == "PipeWire:Interface:Port" && Graph.props(o)["port.name"] as? String == "out_FL"
                && Graph.props(o)["node.id"] as? Int == graph.nodeID("xp-live")
        }?["id"] as? Int
        let linked = graph.objects.contains { o in
            (o["type"] as? String) == "PipeWire:Interface:Link"
                && ((o["info"] as? [String: Any])?["output-port-id"] as? Int) == renamed
        }
        #expect(renamed != nil && linked, "the renamed port keeps its link")
        #expect(sandbox.float(graph.params(of: "xp-live")["outputs"]) == 3)
        sandbox.run(["pw-cli", "set-param", "\(id)", "Props", #"{ params = [ "output.position" [ "FL" "FL" ] ] }"#])
        usleep(300_000)
        #expect(sandbox.daemonLog.contains("'FL' appears twice"))
        sandbox.stop()
    }
}
