import CrosspointCore
import Foundation
import Testing

/// The `crosspoint` executable the tests run: the one scripts/build made for the package
/// (`.build/release`, linked as shipped), or CROSSPOINT_BIN_DIR's.
let crosspointExecutable: String = {
    let folder = ProcessInfo.processInfo.environment["CROSSPOINT_BIN_DIR"].map { URL(fileURLWithPath: $0) }
        ?? repositoryRoot.appendingPathComponent(".build/release")
    return folder.appendingPathComponent("crosspoint").path
}()

extension Sandbox {
    /// Runs `crosspoint` with `arguments` against this daemon.
    @discardableResult
    func crosspoint(_ arguments: String...) -> CommandResult {
        run([crosspointExecutable] + arguments, timeout: 30)
    }

    /// A node's Props as pw-dump shows them (key -> value), after `crosspoint` changed them.
    func props(_ node: String) throws -> [String: Any] { try Graph(self).params(of: node) }
}

/// The command line against a private daemon with the module loaded by a drop-in
/// (Fixtures/cli.conf): every command's output, changes read back with pw-dump and heard
/// with real audio, links, presets, and bad input refused with a message and no change.
@Suite(.serialized)
struct CommandLineTests {
    /// A daemon with the nodes of Fixtures/cli.conf, and the 64x64 node of cli-64.conf if asked.
    func startSandbox(big: Bool = false) throws -> Sandbox {
        let fixtures = ["cli.conf"] + (big ? ["cli-64.conf"] : [])
        let sandbox = try Sandbox(dropIns: fixtures.map {
            repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures/\($0)").path
        })
        let nodes = ["xp-cli", "xp-show", "xp-3x1"] + (big ? ["xp-64"] : [])
        do {
            _ = try sandbox.waitFor("the nodes") { graph in nodes.allSatisfy { graph.nodeID($0) != nil } }
        } catch {
            let log = sandbox.daemonLog.split(separator: "\n").filter { $0.contains("xp-") }.suffix(5).joined(separator: "\n")
            sandbox.stop()
            throw SandboxError("\(error); the daemon's log says:\n\(log)")
        }
        return sandbox
    }

    func expectSuccess(_ result: CommandResult, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.succeeded, "\(what) failed (\(result.status)): \(result.stderr)", sourceLocation: sourceLocation)
    }

    func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    // MARK: list, show, params, help

    @Test func listShowsEveryCrosspointNodeAndRemoteSelectsTheDaemon() throws {
        let sandbox = try startSandbox()
        defer { sandbox.stop() }
        let graph = try Graph(sandbox)
        let result = sandbox.crosspoint("list")
        expectSuccess(result, "list")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.split(separator: " ", omittingEmptySubsequences: true) == ["ID", "NAME", "DESCRIPTION", "INPUTS", "OUTPUTS"])
        for (name, description, inputs, outputs) in [("xp-cli", "CLI test", 2, 2), ("xp-show", "Show me", 2, 3), ("xp-3x1", "Crosspoint 3x1", 3, 1)] {
            let id = try #require(graph.nodeID(name))
            let line = lines.first { $0.hasPrefix("\(id) ") }
            let fields = line?.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            #expect(fields == ["\(id)", name, description, "\(inputs)", "\(outputs)"], "\(result.stdout)")
        }
        #expect(lines.count == 4, "only Crosspoint nodes are listed:\n\(result.stdout)")

        let json = sandbox.crosspoint("list", "--json")
        expectSuccess(json, "list --json")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(Set(entries.compactMap { $0["name"] as? String }) == ["xp-cli", "xp-show", "xp-3x1"])
        let show = try #require(entries.first { $0["name"] as? String == "xp-show" })
        #expect(show["id"] as? Int == graph.nodeID("xp-show") && show["description"] as? String == "Show me")
        #expect(show["inputs"] as? Int == 2 && show["outputs"] as? Int == 3)

        // --remote names the daemon's socket; PIPEWIRE_REMOTE is the default.
        expectSuccess(sandbox.crosspoint("list", "--remote", "pipewire-0"), "list --remote pipewire-0")
        let nowhere = sandbox.crosspoint("list", "--remote", "nowhere-\(getpid())")
        #expect(!nowhere.succeeded && nowhere.stderr.contains("cannot connect to PipeWire at 'nowhere-\(getpid())'"), "\(nowhere.stderr)")
        let byEnvironment = sandbox.shell("PIPEWIRE_REMOTE=elsewhere '\(crosspointExecutable)' list")
        #expect(!byEnvironment.succeeded && byEnvironment.stderr.contains("'elsewhere'"), "\(byEnvironment.stderr)")
    }

    @Test func showPrintsTheMatrixWithGainsMutesAndLinks() throws {
        let sandbox = try startSandbox()
        defer { sandbox.stop() }
        expectSuccess(sandbox.shell("pw_null_sink snap 'FL FR' && pw-link xp-show:out_FL snap:playback_FL && pw-link xp-show:out_RL snap:playback_FR"), "links")
        expectSuccess(sandbox.crosspoint("mute", "xp-show", "in", "FR"), "mute")
        expectSuccess(sandbox.crosspoint("gain", "xp-show", "out", "RL", "-3dB"), "gain")
        let id = try #require(try Graph(sandbox).nodeID("xp-show"))

        let result = sandbox.crosspoint("show", "xp-show")  // piped: plain text, no width limit
        expectSuccess(result, "show")
        #expect(result.stdout == """
            xp-show (node \(id)) "Show me": 2 inputs x 3 outputs; master 0.0 dB; ramp 0 ms
            Gains in dB: -inf = silence, ø = flipped polarity, M = muted.
            Rows are inputs, columns are outputs.

                  gain mute | out_FL out_FR out_RL
            gain            |    0.0    0.0   -3.0
            ----------------+---------------------
            in_FL  0.0      |    0.0   -6.0   -inf
            in_FR  0.0    M |   -inf ø-12.0  -20.0

            Links:
              in_FL  not linked
              in_FR  not linked
              out_FL -> snap:playback_FL
              out_FR not linked
              out_RL -> snap:playback_FR

            """)
        #expect(!result.stdout.contains("\u{1B}["), "no colour when piped")
        let coloured = sandbox.crosspoint("show", "xp-show", "--color", "always")
        #expect(coloured.stdout.contains("\u{1B}[2m  -inf\u{1B}[0m") && coloured.stdout.contains("\u{1B}[1;31m   M\u{1B}[0m"))

        let json = sandbox.crosspoint("show", "xp-show", "--json")
        expectSuccess(json, "show --json")
        // One schema with presets (issue 14): the preset's keys, plus the node's id, name,
        // description, port names and links.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["name"] as? String == "xp-show" && object["id"] as? Int == id && object["description"] as? String == "Show me")
        #expect(object["format"] as? String == "crosspoint-preset" && object["inputs"] as? Int == 2 && object["outputs"] as? Int == 3)
        let matrix = try #require(object["matrix"] as? [[Double]])
        #expect(matrix == [[1, 0.5, 0], [0, -0.25, 0.1]])
        #expect(object["input.ports"] as? [String] == ["in_FL", "in_FR"] && object["mute.in"] as? [Bool] == [false, true])
        #expect(object["output.links"] as? [[String]] == [["snap:playback_FL"], [], ["snap:playback_FR"]])
        #expect(object["input.links"] as? [[String]] == [[], []])
        let outputGains = try #require(object["gain.out"] as? [Double])
        #expect(outputGains.count == 3 && abs(outputGains[2] - 0.70794576) < 1e-6)
        #expect(object["mute.master"] as? Bool == false && number(object["ramp.ms"]) == 0)
    }

    @Test func showFitsA64x64MatrixIntoTheTerminalWidth() throws {
        let sandbox = try startSandbox(big: true)
        defer { sandbox.stop() }
        let result = sandbox.crosspoint("show", "xp-64", "--width", "100")
        expectSuccess(result, "show xp-64")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.count <= 100 }, "a line is wider than 100 columns")
        // Blocks of 13 columns (6 characters each after the 21 of labels, gains and mutes).
        let blocks = lines.filter { $0.hasPrefix("outputs ") }
        #expect(blocks == ["outputs 0 to 12 of 64", "outputs 13 to 25 of 64", "outputs 26 to 38 of 64", "outputs 39 to 51 of 64",
                           "outputs 52 to 63 of 64"])
        #expect(lines.contains("out_     gain mute |  AUX0  AUX1  AUX2  AUX3  AUX4  AUX5  AUX6  AUX7  AUX8  AUX9 AUX10 AUX11 AUX12"))
        #expect(lines.contains("in_AUX63  0.0      |" + String(repeating: "  -inf", count: 11) + "   0.0"), "the identity's last cell")
        #expect(result.stdout.contains("in_AUX0 to in_AUX63: not linked"))
    }

    @Test func paramsPrintsTheParameterTableAndEveryCommandHasHelpWithExamples() throws {
        let markdown = Sandbox.run([crosspointExecutable, "params", "--markdown"], environment: ProcessInfo.processInfo.environment)
        #expect(markdown.succeeded && markdown.stdout == Parameter.markdownTable() + "\n")
        let plain = Sandbox.run([crosspointExecutable, "params"], environment: ProcessInfo.processInfo.environment)
        for family in Parameter.families { #expect(plain.stdout.contains(family.pattern) && plain.stdout.contains(family.summary)) }
        for command in ["list", "show", "set", "gain", "mute", "unmute", "map", "matrix", "ramp", "resize", "rename", "param", "route",
                        "unroute", "devices", "save", "load", "params"] {
            let help = Sandbox.run([crosspointExecutable, command, "--help"], environment: ProcessInfo.processInfo.environment)
            #expect(help.succeeded && help.stdout.contains("Examples:") && help.stdout.contains("crosspoint \(command)"),
                    "\(command) --help:\n\(help.stdout)\(help.stderr)")
            if !["params", "devices", "list"].contains(command) { #expect(help.stdout.contains("--remote")) }
        }
        let set = Sandbox.run([crosspointExecutable, "set", "--help"], environment: ProcessInfo.processInfo.environment)
        let words = set.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains(ParameterKind.crosspoint.family.summary), "set's help comes from the parameter table")
    }

    // MARK: Changes

    @Test func setGainMuteAndMapChangeTheNodeAsAudioConfirms() throws {
        let sandbox = try startSandbox()
        defer { sandbox.stop() }
        let set = sandbox.crosspoint("set", "xp-cli", "FL", "1", "-6dB")
        expectSuccess(set, "set")
        #expect(set.stdout == "xp-cli: matrix.0.1 (in_FL -> out_FR): -inf -> -6.0 dB (0.5011872)\n")
        expectSuccess(sandbox.crosspoint("gain", "xp-cli", "in", "1", "0.5"), "gain in")
        expectSuccess(sandbox.crosspoint("gain", "xp-cli", "master", "-inf"), "gain master")
        expectSuccess(sandbox.crosspoint("gain", "xp-cli", "master", "2x"), "gain master")  // a bare 2 is refused (issue 14)
        expectSuccess(sandbox.crosspoint("mute", "xp-cli", "out", "FL"), "mute out")
        var props = try sandbox.props("xp-cli")
        #expect(number(props["matrix.0.1"]).map { abs($0 - 0.5011872) < 1e-6 } == true)
        #expect(number(props["gain.in.1"]) == 0.5 && number(props["gain.master"]) == 2 && props["mute.out.0"] as? Bool == true)
        // out0 muted; out1 = 2 * (0.501 * in0 + 0.5 * in1)
        try sandbox.expectAudio(node: "xp-cli", gains: [[0, 2 * 0.5011872], [0, 1]], tolerance: 2e-4)

        let mute = sandbox.crosspoint("mute", "xp-cli", "master")
        #expect(mute.stdout == "xp-cli: master mute: off -> on\n")
        #expect(try sandbox.props("xp-cli")["mute"] as? Bool == true)
        expectSuccess(sandbox.crosspoint("unmute", "xp-cli", "master"), "unmute master")
        expectSuccess(sandbox.crosspoint("unmute", "xp-cli", "out", "0"), "unmute out")
        expectSuccess(sandbox.crosspoint("gain", "xp-cli", "master", "0dB"), "gain master")
        let map = sandbox.crosspoint("map", "xp-cli", "-1,0")
        expectSuccess(map, "map")
        props = try sandbox.props("xp-cli")
        #expect(number(props["matrix.0.0"]) == 0 && number(props["matrix.0.1"]) == 1 && number(props["matrix.1.1"]) == 0)
        try sandbox.expectAudio(node: "xp-cli", gains: [[0, 1], [0, 0]])
        #expect(sandbox.crosspoint("map", "xp-cli", "-1,0").stdout == "xp-cli: nothing to change\n")
    }

    @Test func matrixSetsA64x64MatrixInOneCallExactlyAndAudioFollowsIt() throws {
        let sandbox = try startSandbox(big: true)
        defer { sandbox.stop() }
        // Nearly every cross-point changes: thousands of keys, far past the 1024 bytes pw-cli
        // 0.3.65 can send. Gains are multiples of 1/64, exact in a Float and in the six
        // decimals pw-dump prints.
        func gain(_ i: Int, _ j: Int) -> Double {
            let k: Int = (i * 64 + j) % 97 % 63
            return Double(k - 31) / 64
        }
        var rows: [[Double]] = (0..<64).map { i in (0..<64).map { j in gain(i, j) } }
        let listened = [0, 17, 63]
        for j in listened {  // each listened output: three loud inputs, the rest silent
            for i in 0..<64 { rows[i][j] = 0 }
            for (k, i) in [(j * 5 + 1) % 64, (j * 11 + 7) % 64, (j * 3 + 30) % 64].enumerated() { rows[i][j] = [0.5, -0.25, 0.125][k] }
        }
        let file = NSTemporaryDirectory() + "crosspoint-64-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try JSONSerialization.data(withJSONObject: rows).write(to: URL(fileURLWithPath: file))

        let result = sandbox.crosspoint("matrix", "xp-64", file)
        expectSuccess(result, "matrix")
        let changed = (0..<64).flatMap { i in (0..<64).filter { j in rows[i][j] != (i == j ? 1 : 0) } }.count
        #expect(changed > 3800 && result.stdout.contains("(\(changed) parameters changed)"), "\(result.stdout)")

        // Read back by pw-dump (the node's published Props), and by `crosspoint show --json`.
        let props = try sandbox.props("xp-64")
        var mismatches: [String] = []
        for i in 0..<64 {
            for j in 0..<64 {
                let got = number(props["matrix.\(i).\(j)"]) ?? 0  // a node may leave silent cross-points out
                if got != rows[i][j] { mismatches.append("matrix.\(i).\(j) = \(got), sent \(rows[i][j])") }
            }
        }
        #expect(mismatches.count == 0, "\(mismatches.count) cross-points differ in pw-dump: \(mismatches.prefix(5))")
        let shown = sandbox.crosspoint("show", "xp-64", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        #expect(object?["matrix"] as? [[Double]] == rows, "show --json reads the matrix back exactly")

        let feeding = Set(listened.flatMap { j in (0..<64).filter { rows[$0][j] != 0 } })
        let signal = TestSignal(channels: 64, seconds: 0.8, amplitude: 0.1)
        let expected = signal.expected(gains: rows, linkedInputs: feeding)
        try sandbox.compareJudgedByTheControl("xp-64", expected: listened.map { expected[$0] }) {
            try sandbox.playThrough(node: "xp-64", signal: signal, linkedInputs: feeding, linkedOutputs: Set(listened)).outputs(listened)
        }.expectMatch()
    }

    // MARK: Routing

    @Test func routeLinksByChannelNameOrOffsetAndAudioArrivesOnThoseChannelsOnly() throws {
        let sandbox = try startSandbox()
        defer { sandbox.stop() }
        let positions = ["FL", "FR", "RL", "RR"]
        // Four channels for the node, and FC for the recording's reference path.
        expectSuccess(sandbox.shell("pw_null_sink dev4 'FL FR RL RR FC' && pw_null_sink dev4b 'FL FR RL RR FC'"), "sinks")
        let signal = TestSignal(channels: 2)
        let expected = signal.expected(gains: [[0, 0, 1, 0], [0, 0, 0, 1]], linkedInputs: [0, 1])

        for (sink, option) in [("dev4", ["--channels", "RL,RR"]), ("dev4b", ["--offset", "2"])] {
            let result = sandbox.run([crosspointExecutable, "route", "xp-cli", "--to", sink] + option)
            expectSuccess(result, "route \(option)")
            let lines = result.stdout.split(separator: "\n").map { $0.replacing(/\ \(link \d+\)/, with: "") }
            #expect(lines == ["linked xp-cli:out_FL -> \(sink):playback_RL", "linked xp-cli:out_FR -> \(sink):playback_RR"], "\(result.stdout)")
            // The command has exited; its links stay (object.linger).
            let graph = try Graph(sandbox)
            let links = graph.objects.filter { ($0["type"] as? String) == "PipeWire:Interface:Link" }.map { link in
                let info = link["info"] as? [String: Any] ?? [:]
                return [info["output-port-id"], info["input-port-id"]].compactMap { $0 as? Int }
            }
            func port(_ node: String, _ name: String, _ direction: String) -> Int? {
                let id = graph.nodeID(node)
                return graph.objects.first { o in
                    (o["type"] as? String) == "PipeWire:Interface:Port" && (Graph.props(o)["node.id"] as? Int) == id
                        && Graph.props(o)["port.name"] as? String == name && (o["info"] as? [String: Any])?["direction"] as? String == direction
                }?["id"] as? Int
            }
            let out = [port("xp-cli", "out_FL", "output"), port("xp-cli", "out_FR", "output")]
            let into = positions.map { port(sink, "playback_\($0)", "input") }
            #expect(links.contains([out[0]!, into[2]!]) && links.contains([out[1]!, into[3]!]))
            #expect(!links.contains { $0.count == 2 && [into[0], into[1]].contains($0[1]) }, "nothing linked to FL, FR")

            let comparison = try sandbox.compareJudgedByTheControl("xp-cli", expected: expected) {
                try sandbox.recordSink(sink, positions: positions, reference: "FC", node: "xp-cli", signal: signal)
            }
            comparison.expectMatch("\(sink) \(option)")
            #expect(comparison.peak[0] == 0 && comparison.peak[1] == 0, "FL and FR stay silent: \(comparison)")

            let again = sandbox.run([crosspointExecutable, "route", "xp-cli", "--to", sink] + option)
            #expect(again.succeeded && again.stdout.hasPrefix("already linked: xp-cli:out_FL -> \(sink):playback_RL"), "\(again.stdout)")
        }
    }

    @Test func devicesListsSinksWithChannelsAndAggregateOffsets() throws {
        let sandbox = try startSandbox()
        defer { sandbox.stop() }
        expectSuccess(sandbox.shell("pw_null_sink tv 'FL FR' && pw_null_sink iface 'FL FR RL RR'"), "sinks")
        let result = sandbox.crosspoint("devices")
        expectSuccess(result, "devices")
        let graph = try Graph(sandbox)
        let tv = try #require(graph.nodeID("tv")), iface = try #require(graph.nodeID("iface"))
        let width = max(2, "\(tv)".count, "\(iface)".count)
        func id(_ text: String) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        #expect(result.stdout == """
            \(id("ID"))  NAME   DESCRIPTION  CHANNELS     AGGREGATE
            \(id("\(tv)"))  tv     tv           FL FR        0-1
            \(id("\(iface)"))  iface  iface        FL FR RL RR  2-5

            """)
        let json = sandbox.crosspoint("devices", "--json")
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(devices.map { $0["name"] as? String } == ["tv", "iface"])
        #expect(devices.map { $0["offset"] as? Int } == [0, 2])
        #expect(devices.map { $0["channels"] as? [String] } == [["FL", "FR"], ["FL", "FR", "RL", "RR"]])
    }

    // MARK: Presets

    @Test func presetsRoundTripAndAPresetOfAnotherShapeIsRefused() throws {
        let sandbox = try startSandbox()
        defer { sandbox.stop() }
        for command in [["set", "xp-cli", "0", "1", "0.25"], ["gain", "xp-cli", "out", "1", "-6dB"], ["mute", "xp-cli", "in", "0"],
                        ["mute", "xp-cli", "master"]] {
            expectSuccess(sandbox.run([crosspointExecutable] + command), command.joined(separator: " "))
        }
        let file = NSTemporaryDirectory() + "crosspoint-preset-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let save = sandbox.crosspoint("save", "xp-cli", file)
        #expect(save.succeeded && save.stdout == "xp-cli: saved 2 x 2 to \(file)\n", "\(save.stdout)\(save.stderr)")
        // The preset's keys (the rest describe the node), read as Core reads a preset.
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
        guard case let .object(members) = document else { Issue.record("\(file) is not a JSON object"); return }
        let preset = try Preset(json: .object(members.filter { Preset.keys.contains($0.0) }))
        #expect(preset.format == "crosspoint-preset" && preset.version == 1 && preset.inputs == 2 && preset.outputs == 2)
        let mixer = try Mixer(preset: preset)
        #expect(mixer.matrix == [1, 0.25, 0, 1] && mixer.inputMutes == [true, false] && mixer.masterMute)
        #expect(mixer.inputChannels == ["FL", "FR"] && mixer.rampMilliseconds == 0)
        let saved = try sandbox.props("xp-cli")

        // Change everything back, then load: the node is as it was saved.
        for command in [["map", "xp-cli", "0,1"], ["gain", "xp-cli", "out", "1", "1"], ["unmute", "xp-cli", "in", "0"],
                        ["unmute", "xp-cli", "master"]] {
            expectSuccess(sandbox.run([crosspointExecutable] + command), command.joined(separator: " "))
        }
        #expect(try sandbox.props("xp-cli")["mute"] as? Bool == false)
        expectSuccess(sandbox.crosspoint("load", "xp-cli", file), "load")
        let loaded = try sandbox.props("xp-cli")
        #expect(NSDictionary(dictionary: loaded) == NSDictionary(dictionary: saved), "loaded \(loaded)\nsaved \(saved)")

        // Standard output and input: save one node, load it into another of the same shape.
        let piped = sandbox.shell("'\(crosspointExecutable)' save xp-cli - | '\(crosspointExecutable)' load xp-show - || echo status=$?")
        #expect(piped.stderr.contains("the preset is for 2 inputs x 2 outputs but the node has 2 x 3"), "\(piped.stderr)")
        #expect(piped.stdout.contains("status=1"))

        let before = try sandbox.props("xp-3x1")
        let refused = sandbox.crosspoint("load", "xp-3x1", file)
        #expect(!refused.succeeded && refused.stderr == "Error: the preset is for 2 inputs x 2 outputs but the node has 3 x 1\n",
                "\(refused.stderr)")
        #expect(NSDictionary(dictionary: try sandbox.props("xp-3x1")) == NSDictionary(dictionary: before))
    }

    // MARK: Bad input

    @Test func badInputGivesAClearMessageANonZeroExitAndChangesNothing() throws {
        let sandbox = try startSandbox()
        defer { sandbox.stop() }
        expectSuccess(sandbox.shell("pw_null_sink dev4 'FL FR RL RR'"), "sink")
        let directory = NSTemporaryDirectory() + "crosspoint-bad-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, text) in [("rows3.txt", "1 0\n0 1\n1 1\n"), ("word.txt", "1 zero\n0 1\n"), ("big.txt", "1 0\n0 11\n"),
                             ("notjson.json", "{ nope"), ("wrongkind.json", #"{"format": "other", "version": 1, "inputs": 2, "outputs": 2, "matrix": [[1, 0], [0, 1]]}"#),
                             ("cell.json", #"{"format": "crosspoint-preset", "version": 1, "inputs": 2, "outputs": 2, "matrix": [[1, 0], [0, "x"]]}"#)] {
            try text.write(toFile: "\(directory)/\(name)", atomically: false, encoding: .utf8)
        }
        let snapshot = { () throws -> [String: NSDictionary] in
            try ["xp-cli", "xp-show", "xp-3x1"].reduce(into: [:]) { $0[$1] = NSDictionary(dictionary: try sandbox.props($1)) }
        }
        let linkCount = { () throws -> Int in try Graph(sandbox).objects.filter { ($0["type"] as? String) == "PipeWire:Interface:Link" }.count }
        let before = try snapshot()
        let linksBefore = try linkCount()

        let cases: [([String], String)] = [
            (["set", "xp-cli", "9", "0", "1"], "input index 9 is out of range (the node has 2, numbered 0 to 1)"),
            (["set", "xp-cli", "0", "SW", "1"], "no output channel is named 'SW'"),
            (["set", "xp-cli", "0", "0", "loud"], "gain: 'loud' is not a gain; write 0.5, -6dB or -inf"),
            (["set", "xp-cli", "0", "0", "30dB"], "matrix.0.0: 30dB is above the maximum +20 dB"),
            (["set", "xp-cli", "0", "0"], "missing GAIN"),
            (["set", "nope", "0", "0", "1"], "unknown node 'nope'; the Crosspoint nodes are: xp-cli (id"),
            (["set", "Dummy-Driver", "0", "0", "1"], "node 'Dummy-Driver' (id"),
            (["gain", "xp-cli", "middle", "1"], "'middle' is not master, in or out"),
            (["gain", "xp-cli", "out", "5", "-3dB"], "output index 5 is out of range"),
            (["gain", "xp-cli", "master", "-11"], "-11 is a linear gain of +20.8 dB, flipped; did you mean -11dB?"),
            (["gain", "xp-cli", "master", "-11x"], "gain.master: -11x is outside the linear range -10 to 10"),
            (["mute", "xp-cli", "out"], "'out' needs an index or channel name after it"),
            (["unmute", "xp-cli", "in", "RR"], "no input channel is named 'RR'"),
            (["map", "xp-cli", "0,0,0"], "channel-map has 3 entries but the node has 2 outputs"),
            (["map", "xp-cli", "0,x"], "channel-map: 'x' is not an integer"),
            (["map", "xp-cli", "0,2"], "channel-map: entry 1 is 2"),
            (["matrix", "xp-cli", "\(directory)/missing.txt"], "missing.txt: cannot read it (No such file or directory)"),
            (["matrix", "xp-cli", "\(directory)/rows3.txt"], "matrix has 3 rows but the node has 2 inputs"),
            (["matrix", "xp-cli", "\(directory)/word.txt"], "word.txt: line 1: 'zero' is not a gain"),
            (["matrix", "xp-cli", "\(directory)/big.txt"], "big.txt: line 2: 11 is a linear gain of +20.8 dB; did you mean 11dB?"),
            (["matrix", "xp-cli", "--linear", "\(directory)/big.txt"], "big.txt: line 2: matrix.1.1: 11 is outside the linear range -10 to 10"),
            (["load", "xp-cli", "\(directory)/notjson.json"], "notjson.json: not a Crosspoint preset: not valid JSON"),
            (["load", "xp-cli", "\(directory)/wrongkind.json"], "format: is 'other'; a Crosspoint preset says 'crosspoint-preset'"),
            (["load", "xp-cli", "\(directory)/cell.json"], "cell.json: not a Crosspoint preset: matrix[1][1]: must be a number, got \"x\""),
            (["save", "xp-cli", "\(directory)/no/such/dir/p.json"], "p.json: cannot write it"),
            (["route", "xp-cli", "--to", "nosink"], "unknown sink 'nosink'; the sinks are: dev4 (id"),
            (["route", "xp-cli", "--to", "dev4", "--channels", "RL,XX"], "sink 'dev4' has no channel 'XX'; its channels are FL FR RL RR"),
            (["route", "xp-cli", "--to", "dev4", "--channels", "FL,FR,RL"], "--channels names 3 channels but the node has 2 outputs"),
            (["route", "xp-cli", "--to", "dev4", "--offset", "4"], "--offset 4 is past the last channel of sink 'dev4': it has 4 channels"),
            (["route", "xp-cli", "--to", "dev4", "--offset", "1", "--channels", "FL"], "give --channels or --offset, not both"),
            (["route", "xp-cli", "--to", "dev4", "--from", "2"], "output index 2 is out of range"),
            (["show", "nope"], "unknown node 'nope'"),
            (["show"], "there are several Crosspoint nodes; name one: xp-cli (id"),
            (["frobnicate"], "Unexpected argument 'frobnicate'"),
        ]
        for (arguments, message) in cases {
            let result = sandbox.run([crosspointExecutable] + arguments)
            #expect(!result.succeeded, "\(arguments) succeeded")
            #expect(result.stderr.contains(message), "\(arguments.joined(separator: " ")): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments.joined(separator: " ")) printed \(result.stdout)")
        }
        #expect(try snapshot() == before, "a refused command changed a node")
        #expect(try linkCount() == linksBefore, "a refused route made a link")
    }
}
