import Foundation
import Testing

/// The daemon's memory under storms (issue 29, item 6): its resident set (VmRSS) while virtual
/// devices are made and removed 200 times, and while 10,000 output delays are changed, through
/// the real module in a private daemon. Each storm runs in batches; the RSS after each batch is
/// printed. Growth is judged after a warm-up (glibc keeps freed memory in its arenas, and the
/// daemon's own pools fill once): after it, the whole growth must stay under a bound, and the
/// last batches must be flat (a leak goes on to the end). The bounds and the figures they
/// come from: RELIABILITY.md, "Memory under storms".
@Suite(.serialized)
struct DaemonMemoryTests {
    static let node = "xp-daemon-mem"
    static let dropIn = """
        context.modules = [
            { name = libpipewire-module-crosspoint
              args = { node.name = "\(node)" inputs = 20 output.position = [ FL FR ] state.persist = false state.links = false } }
        ]
        """

    private func makeSandbox() throws -> (Sandbox, Int) {
        let conf = NSTemporaryDirectory() + "crosspoint-daemon-memory-\(getpid()).conf"
        try Self.dropIn.write(toFile: conf, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }  // the sandbox keeps its own copy
        let sandbox = try Sandbox(dropIns: [conf])
        let graph = try sandbox.waitFor("the node") { $0.nodeID(Self.node) != nil }
        return (sandbox, try #require(graph.nodeID(Self.node)))
    }

    /// The daemon's resident set in KiB (`VmRSS` of /proc/PID/status).
    private func rss(_ sandbox: Sandbox) throws -> Int {
        let pid = try #require(sandbox.daemonPID)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// The daemon's resident KiB by kind of mapping: the heap (brk), anonymous mappings (malloc's
    /// large blocks, the delay lines, stacks), memfd (buffers shared with clients), files.
    private func residentByKind(_ sandbox: Sandbox) -> String {
        // Through cat: Foundation reads a /proc file (size 0 to stat) only as far as its first page.
        guard let pid = sandbox.daemonPID else { return "-" }
        let smaps = sandbox.run(["cat", "/proc/\(pid)/smaps"]).stdout
        var sums: [String: Int] = [:], kind = "file"
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), fields.count >= 5 {
                let name = fields.count >= 6 ? String(fields[5]) : ""
                kind = name == "[heap]" ? "heap" : name.isEmpty ? "anon" : name.hasPrefix("/memfd:") ? "memfd" : name.hasPrefix("[") ? "other" : "file"
            } else if fields.first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                sums[kind, default: 0] += kb
            }
        }
        return ["heap", "anon", "memfd", "file", "other"].map { "\($0) \(sums[$0] ?? 0)" }.joined(separator: ", ")
    }

    /// Judges the RSS after each batch (KiB): `warmUp` batches are left out; after them, the
    /// growth may not pass `bound` KiB, and the last three batches may not add more than
    /// `tailBound` KiB between them (a leak goes on to the end; a step the daemon takes once,
    /// as a buffer of its own grown on a loaded machine, does not: CI on 1.4 once saw
    /// `13304 14380 14380 14380 14380` in the delay storm's second half).
    private func judge(_ name: String, _ samples: [Int], warmUp: Int, bound: Int, tailBound: Int) {
        let settled = Array(samples[warmUp...])
        let growth = settled.last! - settled.first!, tail = settled.last! - settled[settled.count - 3]
        print("\(name): daemon RSS KiB after each batch: \(samples.map(String.init).joined(separator: " "))")
        func signed(_ n: Int) -> String { n < 0 ? "\(n)" : "+\(n)" }
        print("\(name): \(signed(samples.last! - samples.first!)) KiB in all; after the warm-up (\(warmUp) batches) \(signed(growth)) KiB, "
              + "of which the last three batches \(signed(tail)) KiB")
        #expect(growth <= bound, "\(name): the daemon grew \(growth) KiB after the warm-up (bound \(bound)): \(samples)")
        #expect(tail <= tailBound, "\(name): the daemon still grew \(tail) KiB over the last three batches (bound \(tailBound)): \(samples)")
    }

    /// 200 virtual sinks made and removed: 20 batches of 10 devices, added by one set-param,
    /// waited for until each is made and linked into the node (20 links), then removed by one
    /// set-param and waited for until gone.
    @Test func virtualDevicesMadeAndRemoved200TimesDoNotGrowTheDaemon() throws {
        let (sandbox, id) = try makeSandbox()
        defer { sandbox.stop() }
        let names = (0..<10).map { "xp-mem-dev\($0)" }
        let lines = names.enumerated().map { k, name in "\"sink \(name) channels=\(2 * k),\(2 * k + 1)\"" }
        let add = "set-param \(id) Props { params = [ \"devices\" [ \(lines.joined(separator: " ")) ] ] }"
        let remove = "set-param \(id) Props { params = [ \"devices\" [ ] ] }"
        var samples = [try rss(sandbox)]
        let started = Date()
        let cli = try PwCli(sandbox)
        defer { cli.close() }
        for batch in 0..<20 {
            try sandbox.pwCliBatch([add], knowing: [id], until: "batch \(batch)'s devices made and linked", through: cli) { graph in
                names.allSatisfy { graph.nodeID($0) != nil }
                    && graph.links(of: Self.node).filter { names.contains($0.peer) }.count == 20
            }
            try sandbox.pwCliBatch([remove], knowing: [id], until: "batch \(batch)'s devices gone", through: cli) { graph in
                names.allSatisfy { graph.nodeID($0) == nil }
            }
            // The node gives the daemon's free memory back 300 ms after its last device went
            // (VirtualDeviceHost.trimDelayMilliseconds).
            usleep(600_000)
            samples.append(try rss(sandbox))
        }
        print("200 devices made and removed in \(Int(Date().timeIntervalSince(started))) s")
        // Measured (RELIABILITY.md), three runs: +5.1 to 5.2 MiB over the first batch (the
        // daemon's own warm-up for 10 linked devices at once), then +84 to 116 KiB over the
        // last 15 batches. Before the node trimmed the daemon's free memory: 16 to 69 MiB,
        // +14.7 MiB after the warm-up. A device leaking what it costs while linked (about
        // 1.1 MiB) would pass the bound within two batches, and the last three's at once.
        judge("200 virtual devices", samples, warmUp: 5, bound: 2048, tailBound: 512)
        #expect(!sandbox.daemonLog.contains("leaked proxy"))
    }

    /// 10,000 changes of `delay.out.0` and `delay.out.1` (0 to 1000 ms) while the node plays
    /// into a null sink: 10 batches of 1,000 set-params, each through one pw-cli process.
    @Test func tenThousandDelayChangesDoNotGrowTheDaemon() throws {
        let (sandbox, id) = try makeSandbox()
        defer { sandbox.stop() }
        let linked = sandbox.shell("pw_null_sink xp-mem-out 'FL FR' && pw-link \(Self.node):out_FL xp-mem-out:playback_FL "
                                   + "&& pw-link \(Self.node):out_FR xp-mem-out:playback_FR")
        #expect(linked.succeeded, "\(linked.stderr)")
        var random = SystemRandomNumberGenerator()
        var samples = [try rss(sandbox)]
        let started = Date()
        let cli = try PwCli(sandbox)
        defer { cli.close() }
        for batch in 0..<10 {
            var commands = (0..<999).map { k in
                "set-param \(id) Props { params = [ \"delay.out.\(k % 2)\" \(Double(Int.random(in: 0...9999, using: &random)) / 10) ] }"
            }
            // A value no other command writes: once the node shows it, it took the whole batch.
            let last = 1000 - Double(batch) / 8
            commands.append("set-param \(id) Props { params = [ \"delay.out.1\" \(last) ] }")
            try sandbox.pwCliBatch(commands, knowing: [id], until: "batch \(batch)'s last delay", through: cli) { graph in
                sandbox.float(graph.params(of: Self.node)["delay.out.1"]) == last
            }
            samples.append(try rss(sandbox))
            print("10,000 delay changes, batch \(batch): RSS \(samples.last!) KiB: \(residentByKind(sandbox))")
        }
        print("10,000 delay changes in \(Int(Date().timeIntervalSince(started))) s")
        // Measured (RELIABILITY.md), three runs: +1.4 to 1.7 MiB over the first 1,000 changes (the
        // two outputs' delay lines, 2 x 256 KiB of ring, made on the first delay and reused
        // after), then -156 to +452 KiB over the last 8,000, flat by the end. The review's
        // 0.7 MiB per 1,000, had it gone on, is 5.6 MiB after the warm-up and 1.4 MiB over the
        // last three batches.
        judge("10,000 delay changes", samples, warmUp: 2, bound: 2048, tailBound: 512)
    }
}
