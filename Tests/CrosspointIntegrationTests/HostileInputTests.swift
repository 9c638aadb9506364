import CrosspointCore
import Foundation
import Testing

/// Inputs found by the audit (and reproduced by scripts/fuzz) that once broke the node, sent
/// through the real daemon: it stays alive, the node is unchanged, a warning names the key.
@Suite(.serialized)
struct HostileInputTests {
    /// -2^63 once trapped in Gain.format (abs(Int.min)) while the refusal was being worded.
    static let dropIn = """
        context.modules = [
            { name = libpipewire-module-crosspoint args = { node.name = "xp-hostile" inputs = 2 outputs = 2 ramp.ms = 0 } }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-intmin1" inputs = -9223372036854775808 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-intmin2" state.persist = -9223372036854775808 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-intmin3" node.description = -9223372036854775808 } flags = [ nofail ] }
        ]
        """

    @Test func minusTwoToTheSixtyThreeIsRefusedWithAWarningAndTheDaemonLives() throws {
        let conf = NSTemporaryDirectory() + "crosspoint-hostile-\(getpid()).conf"
        try HostileInputTests.dropIn.write(toFile: conf, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }
        let sandbox = try Sandbox(dropIns: [conf])
        defer { sandbox.stop() }
        let graph = try sandbox.waitFor("xp-hostile and xp-intmin3") { $0.nodeID("xp-hostile") != nil && $0.nodeID("xp-intmin3") != nil }

        // Module arguments: refused by name, or (a description is any text) taken as written.
        let log = sandbox.daemonLog
        #expect(log.contains("argument 'inputs': must be a whole number from 1 to 256, got -9.223372e+18"), "\(log)")
        #expect(log.contains("argument 'state.persist': must be true or false, got -9.223372e+18"), "\(log)")
        #expect(graph.nodeID("xp-intmin1") == nil && graph.nodeID("xp-intmin2") == nil)
        // (pw-dump prints a property that reads as a number as a number: ask pw-cli.)
        let other = try #require(graph.nodeID("xp-intmin3"))
        let info = sandbox.run(["pw-cli", "info", "\(other)"]).stdout
        #expect(info.contains("node.description = \"-9.223372e+18\""), "\(info)")

        // set-param: pw-cli sends -9.223372e18 as a Float pod, which is exactly -2^63.
        let id = try #require(graph.nodeID("xp-hostile"))
        let before = graph.params(of: "xp-hostile").mapValues { "\($0)" }
        for key in ["inputs", "outputs"] {
            let json = "{ params = [ \"\(key)\" -9.223372e18 ] }"
            #expect(sandbox.run(["pw-cli", "set-param", "\(id)", "Props", json]).succeeded)
            #expect(sandbox.run(["pw-cli", "info", "0"]).succeeded, "daemon died after \(json)")
            #expect(sandbox.daemonLog.contains("set-param refused: \(key): must be a whole number from 1 to 256, got -9.223372e+18"),
                    "no warning naming \(key)")
        }
        let after = try Graph(sandbox).params(of: "xp-hostile").mapValues { "\($0)" }
        #expect(after == before)
        try sandbox.expectAudio(node: "xp-hostile", gains: [[1, 0], [0, 1]])

        // Twenty changes of shape in one set-param: the first 16 apply, the rest are refused in one line.
        let counts = (1...20).map { "\"inputs\" \(2 + $0 % 5)" }.joined(separator: " ")
        #expect(sandbox.run(["pw-cli", "set-param", "\(id)", "Props", "{ params = [ \(counts) ] }"]).succeeded)
        _ = try sandbox.waitFor("3 inputs, from the 16th change") { $0.ports(of: "xp-hostile", direction: "input").count == 3 }
        #expect(sandbox.daemonLog.contains("4 changes of inputs, outputs or their positions refused: one set-param takes at most 16"))
    }

    /// PropInfo was sized at 256 bytes a key, but a key's summary names two channels of up to 63
    /// bytes each: a 60x60 node with long channel names overflowed the buffer and published no
    /// Props and part of its PropInfo (found auditing PropsCodec; the arguments fuzz target reproduces it).
    @Test func aLargeNodeWithLongChannelNamesPublishesEveryParam() throws {
        let names = (0..<60).map { String(format: "N%02d", $0) + String(repeating: "x", count: 60) }
        let conf = NSTemporaryDirectory() + "crosspoint-long-names-\(getpid()).conf"
        try """
        context.modules = [
            { name = libpipewire-module-crosspoint
              args = { node.name = "xp-long-names" inputs = 60 outputs = 60 input.position = [ \(names.joined(separator: " ")) ] } }
        ]
        """.write(toFile: conf, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }
        let sandbox = try Sandbox(dropIns: [conf])
        defer { sandbox.stop() }
        let graph = try sandbox.waitFor("xp-long-names with its params") { !$0.params(of: "xp-long-names").isEmpty }
        let params = graph.params(of: "xp-long-names")
        #expect(sandbox.float(params["matrix.59.59"]) == 1)
        #expect(sandbox.float(params["matrix.3.3"]) == 1)
        // Every key has its PropInfo: 60x60 cross-points, 60 gains and mutes a side, 60 output
        // delays, and the keys without indices (channel-map, ramp.ms, inputs ...).
        let unindexed = Parameter.families.filter { !$0.pattern.contains("<") }.count
        #expect(graph.propInfoNames(of: "xp-long-names").count == 3600 + 5 * 60 + unindexed)
        #expect(!sandbox.daemonLog.contains("overflowed"), "\(sandbox.daemonLog.suffix(2000))")
    }
}
