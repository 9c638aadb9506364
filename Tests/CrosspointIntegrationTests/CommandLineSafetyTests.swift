import CrosspointCore
import Foundation
import Testing

extension Sandbox {
    /// The links of the daemon as `node:port>node:port`, read with pw-dump.
    func linkLabels() throws -> Set<String> {
        let graph = try Graph(self)
        var ports: [Int: String] = [:]
        var nodes: [Int: String] = [:]
        for o in graph.objects {
            guard let id = o["id"] as? Int else { continue }
            if o["type"] as? String == "PipeWire:Interface:Node" { nodes[id] = Graph.props(o)["node.name"] as? String }
        }
        for o in graph.objects where o["type"] as? String == "PipeWire:Interface:Port" {
            guard let id = o["id"] as? Int, let node = Graph.props(o)["node.id"] as? Int else { continue }
            ports[id] = "\(nodes[node] ?? "?"):\(Graph.props(o)["port.name"] as? String ?? "?")"
        }
        return Set(graph.objects.filter { $0["type"] as? String == "PipeWire:Interface:Link" }.compactMap { link in
            let info = link["info"] as? [String: Any] ?? [:]
            guard let out = info["output-port-id"] as? Int, let into = info["input-port-id"] as? Int else { return nil }
            return "\(ports[out] ?? "?")>\(ports[into] ?? "?")"
        })
    }
}

/// Issue 14 (the command line a PipeWire user expects) and issue 9 items 4 and 6 (terminal
/// injection; false failures and "unknown node" under concurrent writers), each through the
/// real `crosspoint` against a real daemon: exit codes, messages, the node read back with
/// pw-dump, nothing changed on error.
@Suite(.serialized)
struct CommandLineSafetyTests {
    let cli = CommandLineTests()

    func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    func props(_ sandbox: Sandbox, _ node: String) throws -> NSDictionary { NSDictionary(dictionary: try sandbox.props(node)) }

    /// Runs each command, expecting it to fail with `message` in its standard error, print
    /// nothing on standard output, and leave every node as it was.
    func expectRefused(_ sandbox: Sandbox, _ cases: [([String], String)], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let nodes = ["xp-cli", "xp-show", "xp-3x1"]
        let before = try nodes.map { try props(sandbox, $0) }
        for (arguments, message) in cases {
            let result = sandbox.run([crosspointExecutable] + arguments)
            #expect(!result.succeeded, "\(arguments) succeeded: \(result.stdout)", sourceLocation: sourceLocation)
            #expect(result.stderr.contains(message), "\(arguments.joined(separator: " ")): \(result.stderr)", sourceLocation: sourceLocation)
            #expect(result.stdout.isEmpty, "\(arguments.joined(separator: " ")) printed \(result.stdout)", sourceLocation: sourceLocation)
        }
        #expect(try nodes.map { try props(sandbox, $0) } == before, "a refused command changed a node", sourceLocation: sourceLocation)
    }

    // MARK: Gains

    @Test func bareGainsAboveOneAreRefusedAndUnambiguousSpellingsAndStepsWork() throws {
        let sandbox = try cli.startSandbox()
        defer { sandbox.stop() }
        try expectRefused(sandbox, [
            (["set", "xp-cli", "FR", "FL", "-6"],
             "Error: -6 is a linear gain of +15.6 dB, flipped; did you mean -6dB? (for the linear gain write -6x, or use --linear)"),
            (["set", "xp-cli", "FR", "FL", "6"], "Error: 6 is a linear gain of +15.6 dB; did you mean 6dB?"),
            (["gain", "xp-cli", "out", "FL", "1.5"], "1.5 is a linear gain of +3.5 dB; did you mean 1.5dB?"),
            (["param", "xp-cli", "gain.master", "-2"], "-2 is a linear gain of +6.0 dB, flipped; did you mean -2dB?"),
            (["set", "xp-cli", "FR", "FL", "25dB"], "Error: matrix.1.0: 25dB is above the maximum +20 dB"),
            (["gain", "xp-cli", "master", "20.5dB"], "Error: gain.master: 20.5dB is above the maximum +20 dB"),
            (["set", "xp-cli", "FR", "FL", "12x"], "Error: matrix.1.0: 12x is outside the linear range -10 to 10 (+20 dB, either polarity)"),
            (["set", "xp-cli", "--linear", "FR", "FL", "12"], "Error: matrix.1.0: 12 is outside the linear range -10 to 10"),
            (["set", "xp-cli", "FR", "FL", "0.5+"], "relative steps are in dB with the sign after: 3dB+ or 3dB-"),
            (["set", "xp-cli", "FR", "FL", "3dB+"], "matrix.1.0 is silent (-inf dB): a step of 3dB+ needs a level to start from"),
            (["set", "xp-cli", "FR", "FL", "-3dB+"], "'-3dB+' is not a step"),
            // An unknown option is an unknown option, before or after the values.
            (["set", "xp-cli", "FR", "FL", "--remtoe", "x"], "Error: Unknown option '--remtoe'. Did you mean '--remote'?"),
            (["set", "--remtoe", "x", "xp-cli", "FR", "FL", "-6dB"], "Error: Unknown option '--remtoe'"),
            (["gain", "xp-cli", "master", "-3dB", "--bogus"], "Error: Unknown option '--bogus'"),
            (["set", "xp-cli", "FR", "FL", "-6dB", "-3dB"], "Unexpected argument '-3dB'"),
        ])

        // `--` ends the options; a negative value needs no `--` either.
        let ended = sandbox.crosspoint("set", "xp-cli", "FR", "FL", "--", "-6dB")
        #expect(ended.succeeded && ended.stdout == "xp-cli: matrix.1.0 (in_FR -> out_FL): -inf -> -6.0 dB (0.5011872)\n",
                "\(ended.stdout)\(ended.stderr)")
        #expect(number(try sandbox.props("xp-cli")["matrix.1.0"]).map { abs($0 - 0.5011872) < 1e-6 } == true)
        let linear = sandbox.crosspoint("set", "xp-cli", "FR", "FL", "-6x")
        #expect(linear.stdout == "xp-cli: matrix.1.0 (in_FR -> out_FL): -6.0 dB (0.5011872) -> ø+15.6 dB (-6)\n", "\(linear.stderr)")
        #expect(number(try sandbox.props("xp-cli")["matrix.1.0"]) == -6)
        cli.expectSuccess(sandbox.crosspoint("set", "--linear", "xp-cli", "FR", "FL", "2"), "--linear 2")
        #expect(number(try sandbox.props("xp-cli")["matrix.1.0"]) == 2)
        cli.expectSuccess(sandbox.crosspoint("set", "xp-cli", "FR", "FL", "-0.5"), "a bare gain of at most 1")
        #expect(number(try sandbox.props("xp-cli")["matrix.1.0"]) == -0.5)

        // Steps: from where the gain is, in dB, the polarity kept, clamped at +20 dB.
        let up = sandbox.crosspoint("set", "xp-cli", "FR", "FL", "6dB+")
        #expect(up.stdout == "xp-cli: matrix.1.0 (in_FR -> out_FL): ø-6.0 dB (-0.5) -> ø0.0 dB (-0.99763113)\n", "\(up.stdout)\(up.stderr)")
        #expect(number(try sandbox.props("xp-cli")["matrix.1.0"]).map { abs($0 + 0.99763113) < 1e-6 } == true)
        cli.expectSuccess(sandbox.crosspoint("gain", "xp-cli", "master", "-6dB"), "gain master -6dB")
        let step = sandbox.crosspoint("gain", "xp-cli", "master", "3dB+")
        #expect(step.stdout == "xp-cli: gain.master: -6.0 dB (0.5011872) -> -3.0 dB (0.70794576)\n", "\(step.stdout)\(step.stderr)")
        let down = sandbox.crosspoint("gain", "xp-cli", "master", "1.5dB-")
        #expect(down.stdout == "xp-cli: gain.master: -3.0 dB (0.70794576) -> -4.5 dB (0.5956621)\n", "\(down.stdout)\(down.stderr)")
        #expect(number(try sandbox.props("xp-cli")["gain.master"]).map { abs($0 - 0.5956621) < 1e-6 } == true)
        cli.expectSuccess(sandbox.crosspoint("gain", "xp-cli", "master", "18dB"), "gain master 18dB")
        let clamped = sandbox.crosspoint("gain", "xp-cli", "master", "6dB+")
        #expect(clamped.succeeded && clamped.stdout == "xp-cli: gain.master: +18.0 dB (7.943282) -> +20.0 dB (10)\n", "\(clamped.stdout)")
        #expect(clamped.stderr == "warning: clamped to the maximum +20 dB\n")
        #expect(number(try sandbox.props("xp-cli")["gain.master"]) == 10)
        let quietClamp = sandbox.crosspoint("gain", "-q", "xp-cli", "master", "6dB+")
        #expect(quietClamp.succeeded && quietClamp.stdout.isEmpty && quietClamp.stderr.isEmpty)

        // A negative channel map is a value too.
        let map = sandbox.crosspoint("map", "xp-cli", "-1,0")
        #expect(map.succeeded, "\(map.stderr)")
        let mapped = try sandbox.props("xp-cli")
        #expect(number(mapped["matrix.0.1"]) == 1 && number(mapped["matrix.0.0"]) == 0)
    }

    // MARK: Every parameter

    @Test func rampResizeRenameAndParamSetEveryKeyOfTheTable() throws {
        let sandbox = try cli.startSandbox()
        defer { sandbox.stop() }
        let ramp = sandbox.crosspoint("ramp", "xp-cli", "25ms")
        #expect(ramp.stdout == "xp-cli: ramp.ms: 0 ms -> 25 ms\n", "\(ramp.stdout)\(ramp.stderr)")
        #expect(number(try sandbox.props("xp-cli")["ramp.ms"]) == 25)

        let resize = sandbox.crosspoint("resize", "xp-cli", "--outputs", "4")
        #expect(resize.stdout == "xp-cli: outputs: 2 -> 4\n", "\(resize.stdout)\(resize.stderr)")
        #expect(number(try sandbox.props("xp-cli")["outputs"]) == 4)
        cli.expectSuccess(sandbox.shell("pw_wait_ports xp-cli 4 output"), "four output ports")

        let rename = sandbox.crosspoint("rename", "xp-cli", "out", "FL", "FR", "RL", "RR")
        #expect(rename.stdout == "xp-cli: output.position: FL FR AUX2 AUX3 -> FL FR RL RR\n", "\(rename.stdout)\(rename.stderr)")
        #expect(try sandbox.props("xp-cli")["output.position"] as? [String] == ["FL", "FR", "RL", "RR"])
        let channels = try Graph(sandbox).ports(of: "xp-cli", direction: "output").compactMap { $0["audio.channel"] as? String }
        #expect(Set(channels) == ["FL", "FR", "RL", "RR"], "\(channels)")

        let param = sandbox.crosspoint("param", "xp-cli", "matrix.FL.RL", "-6dB", "mute.in.FR", "true", "gain.out.RR", "0.5", "ramp.ms", "5")
        #expect(param.stdout == """
            xp-cli: matrix.0.2 (in_FL -> out_RL): -inf -> -6.0 dB (0.5011872)
            xp-cli: mute.in.1 (in_FR): off -> on
            xp-cli: gain.out.3 (out_RR): 0.0 dB (1) -> -6.0 dB (0.5)
            xp-cli: ramp.ms: 25 ms -> 5 ms

            """, "\(param.stdout)\(param.stderr)")
        var props = try sandbox.props("xp-cli")
        #expect(number(props["matrix.0.2"]).map { abs($0 - 0.5011872) < 1e-6 } == true && props["mute.in.1"] as? Bool == true)
        #expect(number(props["gain.out.3"]) == 0.5 && number(props["ramp.ms"]) == 5)
        let shrink = sandbox.crosspoint("param", "xp-cli", "outputs", "3", "gain.out.RL", "-3dB")
        #expect(shrink.stdout == "xp-cli: outputs: 4 -> 3\nxp-cli: gain.out.2 (out_RL): 0.0 dB (1) -> -3.0 dB (0.70794576)\n",
                "\(shrink.stdout)\(shrink.stderr)")
        #expect(number(try sandbox.props("xp-cli")["outputs"]) == 3)

        try expectRefused(sandbox, [
            (["ramp", "xp-cli", "2000"], "Error: ramp.ms: 2000 is above the maximum 1000 ms"),
            (["ramp", "xp-cli", "slow"], "ramp.ms: 'slow' is not a time; write milliseconds: 10 or 10ms"),
            (["resize", "xp-cli"], "give --inputs, --outputs or both"),
            (["resize", "xp-cli", "--inputs", "0"], "--inputs must be a whole number from 1 to 256, got 0"),
            (["rename", "xp-cli", "in", "FL,FL"], "input.position: 'FL' appears twice"),
            (["rename", "xp-cli", "in", "L-1", "R"], "'L-1' is not a channel name"),
            (["rename", "xp-cli", "sideways", "A"], "'sideways' is not in or out"),
            (["param", "xp-cli", "gain.mastr", "1"], "unknown parameter 'gain.mastr'; `crosspoint params` lists the keys"),
            (["param", "xp-cli", "gain.master"], "'gain.master' has no value; give KEY VALUE pairs"),
            (["param", "xp-cli", "mute.in.0", "maybe"], "mute.in.0: 'maybe' is not true or false"),
            (["param", "xp-cli", "inputs", "300"], "inputs: '300' is not a whole number from 1 to 256"),
            (["param", "xp-cli", "matrix.FL.XX", "1"], "no output channel is named 'XX'; the outputs are FL, FR, RL"),
            // A bad pair anywhere refuses the whole call: nothing is sent.
            (["param", "xp-cli", "gain.master", "0.5", "channel-map", "0,5,0"], "channel-map: entry 1 is 5"),
        ])

        // One call with every key of the parameter table.
        let pairs = [
            ("inputs", "3"), ("outputs", "3"), ("input.position", "L,R,C"), ("output.position", "FL,FR,RL"),
            ("channel-map", "2,1,0"), ("matrix.L.RL", "0.5"), ("gain.master", "0.5"), ("gain.in.C", "0.25"),
            ("gain.out.FR", "-6dB"), ("mute.in.R", "true"), ("mute.out.FL", "on"), ("delay.out.RL", "12.5ms"), ("ramp.ms", "7"),
            ("midi", "on"), ("midi.map", "cc 1 7 gain.in.C, note 1 60 mute.out.FL momentary"),
            ("devices", "sink xp-show-game channels=L,R description=Show game"), ("targets", "nowhere-sink outputs=FL,FR"),
            ("duck", "L lowers=R,out:RL depth=-10 release=1s"), ("duck.depth.L", "-12dB"), ("duck.on.0", "off"),
            // The fader where it is (no scenes to move between yet: it moves nothing), then the scenes.
            ("scene.morph", "0"), ("scenes", "a in=L,R,C out=FL,FR,RL gain.in.L=0.5; b in=L,R,C out=FL,FR,RL"),
            ("scene.safe", "gain.master"), ("scene.morph.between", "a,b"),
        ]
        var shape = try Mixer(inputs: 3, outputs: 3, inputChannels: ["L", "R", "C"], outputChannels: ["FL", "FR", "RL"])
        try shape.setDucking(["L lowers=R"])
        let covered = Set(try pairs.map { key, _ in try Parameter(key: key, in: shape).kind.family.pattern })
        // Every key a person sets (levels.watch is a watcher's write-only lease, not a setting).
        #expect(covered == Set(Parameter.families.filter { $0.access == .readWrite }.map(\.pattern)),
                "the call covers every key of the table")
        let all = sandbox.run([crosspointExecutable, "param", "xp-show"] + pairs.flatMap { [$0.0, $0.1] })
        #expect(all.succeeded, "\(all.stderr)")
        props = try sandbox.props("xp-show")
        #expect(number(props["inputs"]) == 3 && number(props["outputs"]) == 3)
        #expect(props["input.position"] as? [String] == ["L", "R", "C"] && props["output.position"] as? [String] == ["FL", "FR", "RL"])
        #expect(number(props["matrix.2.0"]) == 1 && number(props["matrix.1.1"]) == 1 && number(props["matrix.0.2"]) == 0.5)
        #expect(number(props["matrix.0.0"]) == 0 && number(props["gain.master"]) == 0.5 && number(props["gain.in.2"]) == 0.25)
        #expect(number(props["gain.out.1"]).map { abs($0 - 0.5011872) < 1e-6 } == true)
        #expect(props["mute.in.1"] as? Bool == true && props["mute.out.0"] as? Bool == true && number(props["ramp.ms"]) == 7)
        #expect(props["midi"] as? Bool == true && props["midi.map"] as? [String] == ["cc 1 7 gain.in.C", "note 1 60 mute.out.FL momentary"])
        #expect(props["devices"] as? [String] == ["sink xp-show-game position=FL,FR channels=L,R description=Show game"], "\(props)")
        #expect(props["targets"] as? [String] == ["nowhere-sink outputs=FL,FR"], "\(props)")
        #expect(props["duck"] as? [String] == ["L lowers=R,out:RL depth=-12 threshold=-40 attack=20 hold=300 release=1000 detect=rms off"], "\(props)")

        // A key set and then removed by a resize in the same call changes nothing.
        let gone = sandbox.crosspoint("param", "xp-show", "gain.out.2", "-9dB", "outputs", "2")
        #expect(gone.succeeded && gone.stdout == "xp-show: outputs: 3 -> 2\n", "\(gone.stdout)\(gone.stderr)")
        #expect(number(try sandbox.props("xp-show")["outputs"]) == 2)
    }

    // MARK: Routes

    @Test func routeReplaceMovesAStereoPairAndUnrouteRemovesLinks() throws {
        let sandbox = try cli.startSandbox()
        defer { sandbox.stop() }
        cli.expectSuccess(sandbox.shell("pw_null_sink iface 'FL FR RL RR FC' && pw_null_sink tv 'FL FR'"), "sinks")
        cli.expectSuccess(sandbox.crosspoint("route", "xp-cli", "--to", "iface"), "route to 1-2")
        cli.expectSuccess(sandbox.crosspoint("route", "xp-cli", "--to", "tv"), "route to the TV too")
        #expect(try sandbox.linkLabels() == ["xp-cli:out_FL>iface:playback_FL", "xp-cli:out_FR>iface:playback_FR",
                                             "xp-cli:out_FL>tv:playback_FL", "xp-cli:out_FR>tv:playback_FR"])

        // One command moves the pair from channels 1-2 to 3-4 (and off the TV).
        let moved = sandbox.crosspoint("route", "xp-cli", "--to", "iface", "--offset", "2", "--replace")
        #expect(moved.succeeded, "\(moved.stderr)")
        let lines = moved.stdout.split(separator: "\n").map { $0.replacing(/\ \(link \d+\)/, with: "") }
        #expect(Set(lines.filter { $0.hasPrefix("unlinked") }) == [
            "unlinked xp-cli:out_FL -> iface:playback_FL", "unlinked xp-cli:out_FR -> iface:playback_FR",
            "unlinked xp-cli:out_FL -> tv:playback_FL", "unlinked xp-cli:out_FR -> tv:playback_FR"], "\(moved.stdout)")
        #expect(lines.suffix(2) == ["linked xp-cli:out_FL -> iface:playback_RL", "linked xp-cli:out_FR -> iface:playback_RR"])
        #expect(try sandbox.linkLabels() == ["xp-cli:out_FL>iface:playback_RL", "xp-cli:out_FR>iface:playback_RR"])
        // Audio arrives on 3-4 only.
        let signal = TestSignal(channels: 2)
        let comparison = try sandbox.compareJudgedByTheControl(
            "xp-cli", expected: signal.expected(gains: [[0, 0, 1, 0], [0, 0, 0, 1]], linkedInputs: [0, 1])) {
            try sandbox.recordSink("iface", positions: ["FL", "FR", "RL", "RR"], reference: "FC", node: "xp-cli", signal: signal)
        }
        comparison.expectMatch("route --replace to 3-4")
        #expect(comparison.peak[0] == 0 && comparison.peak[1] == 0, "\(comparison)")

        let again = sandbox.crosspoint("route", "xp-cli", "--to", "iface", "--offset", "2", "--replace", "--json")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect((report["already-linked"] as? [Any])?.count == 2 && (report["unlinked"] as? [Any])?.count == 0
                && (report["linked"] as? [Any])?.count == 0, "\(again.stdout)")

        try expectRefused(sandbox, [
            (["unroute", "xp-cli", "ZZ"], "no output channel is named 'ZZ'; the outputs are FL, FR"),
            (["unroute", "xp-cli", "--to", "nosink"], "unknown sink 'nosink'"),
        ])
        #expect(try sandbox.linkLabels().count == 2, "a refused unroute removed nothing")
        let one = sandbox.crosspoint("unroute", "xp-cli", "FL")
        #expect(one.stdout.replacing(/\ \(link \d+\)/, with: "") == "unlinked xp-cli:out_FL -> iface:playback_RL\n", "\(one.stdout)\(one.stderr)")
        #expect(try sandbox.linkLabels() == ["xp-cli:out_FR>iface:playback_RR"])
        let toTV = sandbox.crosspoint("unroute", "xp-cli", "--to", "tv")
        #expect(toTV.succeeded && toTV.stdout == "xp-cli: no links to remove to 'tv'\n", "\(toTV.stdout)\(toTV.stderr)")
        let json = sandbox.crosspoint("unroute", "xp-cli", "--to", "iface", "--json")
        let removed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((removed["unlinked"] as? [[String: Any]])?.map { $0["input"] as? String } == ["iface:playback_RR"])
        #expect(try sandbox.linkLabels().isEmpty)
    }

    // MARK: Scripts

    @Test func everyCommandPrintsJSONQuietSilencesAndVersionNamesTheLibrary() throws {
        let sandbox = try cli.startSandbox()
        defer { sandbox.stop() }
        cli.expectSuccess(sandbox.shell("pw_null_sink tv 'FL FR'"), "sink")
        let file = NSTemporaryDirectory() + "crosspoint-json-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let commands: [([String], (([String: Any]) -> Bool))] = [
            (["set", "xp-cli", "FL", "FR", "-6dB"], { c in
                let change = (c["changes"] as? [[String: Any]])?.first
                return change?["key"] as? String == "matrix.0.1" && change?["what"] as? String == "in_FL -> out_FR"
                    && (change?["before"] as? NSNumber) == 0 && self.number(change?["after"]).map { abs($0 - 0.5011872) < 1e-6 } == true
            }),
            (["gain", "xp-cli", "out", "FR", "0.5"], { c in (c["changes"] as? [[String: Any]])?.first?["key"] as? String == "gain.out.1" }),
            (["mute", "xp-cli", "master"], { c in
                let change = (c["changes"] as? [[String: Any]])?.first
                return change?["key"] as? String == "mute.master" && change?["before"] as? Bool == false && change?["after"] as? Bool == true
            }),
            (["unmute", "xp-cli", "master"], { c in (c["changes"] as? [[String: Any]])?.first?["after"] as? Bool == false }),
            (["map", "xp-cli", "1,0"], { c in (c["changes"] as? [[String: Any]])?.count == 4 }),
            (["ramp", "xp-cli", "10"], { c in (c["changes"] as? [[String: Any]])?.first?["after"] as? Int == 10 }),
            (["resize", "xp-cli", "--inputs", "3"], { c in (c["changes"] as? [[String: Any]])?.first?["key"] as? String == "inputs" }),
            (["rename", "xp-cli", "in", "A,B,C"], { c in (c["changes"] as? [[String: Any]])?.first?["after"] as? [String] == ["A", "B", "C"] }),
            (["param", "xp-cli", "inputs", "2"], { c in (c["changes"] as? [[String: Any]])?.first?["before"] as? Int == 3 }),
            (["save", "xp-cli", file], { c in c["file"] as? String == file && c["inputs"] as? Int == 2 && c["id"] is Int }),
            (["load", "xp-cli", file], { c in (c["changes"] as? [[String: Any]])?.isEmpty == true && c["node"] as? String == "xp-cli" }),
            (["route", "xp-cli", "--to", "tv"], { c in (c["linked"] as? [[String: Any]])?.count == 2 && c["sink"] as? String == "tv" }),
            (["unroute", "xp-cli"], { c in (c["unlinked"] as? [[String: Any]])?.count == 2 }),
        ]
        for (arguments, check) in commands {
            let result = sandbox.run([crosspointExecutable] + arguments + ["--json"])
            #expect(result.succeeded, "\(arguments): \(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            #expect(object.map(check) == true, "\(arguments.joined(separator: " ")) --json:\n\(result.stdout)")
            if arguments[0] != "save" && arguments[0] != "route" && arguments[0] != "unroute" {
                #expect(object?["node"] as? String == "xp-cli" && object?["id"] is Int)
            }
        }
        for command in [["list"], ["show", "xp-cli"], ["devices"], ["params"]] {
            let result = sandbox.run([crosspointExecutable] + command + ["--json"])
            #expect(result.succeeded && (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) != nil, "\(command)")
        }

        // -q: nothing printed, the change made.
        let quiet = sandbox.crosspoint("set", "-q", "xp-cli", "1", "1", "-3dB")
        #expect(quiet.succeeded && quiet.stdout.isEmpty && quiet.stderr.isEmpty)
        #expect(number(try sandbox.props("xp-cli")["matrix.1.1"]).map { abs($0 - 0.70794576) < 1e-6 } == true)
        for command in [["gain", "--quiet", "xp-cli", "master", "-1dB"], ["route", "-q", "xp-cli", "--to", "tv"], ["unroute", "-q", "xp-cli"],
                        ["save", "-q", "xp-cli", file], ["load", "-q", "xp-cli", file]] {
            let result = sandbox.run([crosspointExecutable] + command)
            #expect(result.succeeded && result.stdout.isEmpty, "\(command): \(result.stdout)\(result.stderr)")
        }
        let failing = sandbox.crosspoint("set", "-q", "xp-cli", "1", "1", "loud")
        #expect(!failing.succeeded && failing.stderr.contains("'loud' is not a gain"), "errors still print with -q")

        let version = sandbox.crosspoint("--version")
        let library = sandbox.run(["pw-cli", "--version"]).stdout.split(separator: "\n").first { $0.hasPrefix("Linked with libpipewire ") }
        let linked = try #require(library).dropFirst("Linked with libpipewire ".count)
        #expect(version.succeeded && version.stdout == "crosspoint 0.1.0 (libpipewire \(linked))\n", "\(version.stdout)")
    }

    // MARK: Presets

    @Test func showJSONLoadsBackAndUnknownPresetKeysAreRefused() throws {
        let sandbox = try cli.startSandbox()
        defer { sandbox.stop() }
        for command in [["set", "xp-cli", "0", "1", "-12dB"], ["gain", "xp-cli", "in", "1", "-3dB"], ["mute", "xp-cli", "out", "0"], ["ramp", "xp-cli", "40"]] {
            cli.expectSuccess(sandbox.run([crosspointExecutable] + command), command.joined(separator: " "))
        }
        let directory = NSTemporaryDirectory() + "crosspoint-schema-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shown = sandbox.crosspoint("show", "xp-cli", "--json")
        try shown.stdout.write(toFile: "\(directory)/shown.json", atomically: false, encoding: .utf8)
        let saved = try props(sandbox, "xp-cli")
        for command in [["map", "xp-cli", "0,1"], ["gain", "xp-cli", "in", "1", "0dB"], ["unmute", "xp-cli", "out", "0"], ["ramp", "xp-cli", "0"]] {
            cli.expectSuccess(sandbox.run([crosspointExecutable] + command), command.joined(separator: " "))
        }
        #expect(try props(sandbox, "xp-cli") != saved)
        let load = sandbox.crosspoint("load", "xp-cli", "\(directory)/shown.json")
        #expect(load.succeeded, "show --json loads back: \(load.stderr)")
        #expect(try props(sandbox, "xp-cli") == saved)
        // And through a pipe, into another node of the same shape.
        let piped = sandbox.shell("'\(crosspointExecutable)' show xp-cli --json | '\(crosspointExecutable)' load --quiet 'CLI test' -")
        #expect(piped.succeeded && piped.stdout.isEmpty, "\(piped.stderr)")

        var object = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        object["gain.mastr"] = 0.5
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: "\(directory)/typo.json"))
        object["gain.mastr"] = nil
        object["links"] = []
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: "\(directory)/extra.json"))
        try #"{"format": "crosspoint-preset", "version": 1, "inputs": 1, "outputs": 1, "gain.in": [1, 1], "matrix": [[1]]}"#
            .write(toFile: "\(directory)/one.json", atomically: false, encoding: .utf8)
        try expectRefused(sandbox, [
            (["load", "xp-cli", "\(directory)/typo.json"],
             "typo.json: not a Crosspoint preset: unknown key 'gain.mastr' (did you mean 'gain.master'?); a preset's keys are delay.out, devices, duck, format, gain.in"),
            (["load", "xp-cli", "\(directory)/extra.json"], "unknown key 'links'"),
            (["load", "xp-cli", "\(directory)/one.json"], "one.json: gain.in has 2 entries but the preset has 1 input"),
        ])
    }

    // MARK: Smaller

    @Test func smallerThingsChannelNamesEmptyFilesInaudibleChangesSignsAndPlurals() throws {
        let sandbox = try cli.startSandbox()
        defer { sandbox.stop() }
        cli.expectSuccess(sandbox.shell("pw_null_sink dev4 'FL FR RL RR'"), "sink")
        try expectRefused(sandbox, [
            (["set", "xp-cli", "FRR", "FL", "0.5"], "Error: no input channel is named 'FRR'; did you mean 'FR'? the inputs are FL, FR (or their indices, 0 to 1)"),
            (["gain", "xp-show", "out", "SW", "-3dB"], "no output channel is named 'SW'; the outputs are FL, FR, RL"),
            (["matrix", "xp-cli", "/dev/null"], "Error: /dev/null: is empty; give one row of gains per input"),
            (["matrix", "xp-cli", "/"], "Error: /: is a directory, not a file"),
            (["set", "xp-3x1", "0", "3", "1"], "Error: output index 3 is out of range (the node has 1 output, numbered 0)"),
            (["map", "xp-3x1", "0,1"], "Error: channel-map has 2 entries but the node has 1 output (one entry per output)"),
            (["route", "xp-3x1", "--to", "dev4", "--channels", "FL,FR"], "--channels names 2 channels but the node has 1 output"),
        ])
        let shown = sandbox.crosspoint("show", "xp-3x1")
        #expect(shown.stdout.hasPrefix("xp-3x1 (node ") && shown.stdout.contains("\"Crosspoint 3x1\": 3 inputs x 1 output;"), "\(shown.stdout)")

        // A level typed in dB that is already there to the 0.1 dB shown: nothing audible changes.
        cli.expectSuccess(sandbox.crosspoint("set", "xp-cli", "FR", "FL", "0.5"), "set 0.5")
        let same = sandbox.crosspoint("set", "xp-cli", "FR", "FL", "-6dB")
        #expect(same.succeeded && same.stdout == "xp-cli: nothing to change (matrix.1.0 is already -6.0 dB)\n", "\(same.stdout)\(same.stderr)")
        #expect(number(try sandbox.props("xp-cli")["matrix.1.0"]) == 0.5)
        // An exact linear value is sent, and the line shows the difference.
        let exact = sandbox.crosspoint("set", "xp-cli", "FR", "FL", "0.5011872")
        #expect(exact.stdout == "xp-cli: matrix.1.0 (in_FR -> out_FL): -6.02 dB (0.5) -> -6.00 dB (0.5011872)\n", "\(exact.stdout)")

        // Signs on dB.
        let up = sandbox.crosspoint("gain", "xp-cli", "master", "+3dB")
        #expect(up.stdout == "xp-cli: gain.master: 0.0 dB (1) -> +3.0 dB (1.4125376)\n", "\(up.stdout)")
        let table = sandbox.crosspoint("show", "xp-cli")
        #expect(table.stdout.contains("; master +3.0 dB;"), "\(table.stdout)")
    }

    // MARK: Terminal injection (issue 9, item 4)

    @Test func namesWithControlCharactersArePrintedEscaped() throws {
        let fixtures = ["cli.conf", "cli-evil.conf"].map { repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures/\($0)").path }
        let sandbox = try Sandbox(dropIns: fixtures)
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("the nodes") { graph in ["xp-cli", "xp-evil"].allSatisfy { graph.nodeID($0) != nil } }
        let evil = "SINK\u{1B}[2J\u{1B}[5mBLINK\nINJECTED"
        cli.expectSuccess(sandbox.shell(#"""
            pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name="evil\u001bsink"
              node.description="SINK\u001b[2J\u001b[5mBLINK\nINJECTED" media.class=Audio/Sink object.linger=true
              audio.position=[ FL FR ] }' >/dev/null
            pw_wait_until 10 pw_has_ports $'evil\x1bsink' 2 input
            """#), "the evil sink")
        // The premise: the daemon holds the raw control characters.
        let graph = try Graph(sandbox)
        #expect(graph.objects.contains { Graph.props($0)["node.description"] as? String == evil }, "the sink's description is raw")
        #expect(graph.objects.contains { Graph.props($0)["node.description"] as? String == "XP\u{1B}[2J\u{1B}[5mBLINK\nINJECTED" })
        let sinkName = "evil\u{1B}sink"

        let runs: [[String]] = [
            ["list"], ["devices"], ["show", "xp-evil"], ["route", "xp-evil", "--to", sinkName], ["show", "xp-evil"],
            ["set", "xp-evil", "0", "1", "-6dB"], ["route", "xp-evil", "--to", sinkName],
            ["show", "nope\u{1B}[2J"], ["set", "xp-evil", "0", "0", "\u{1B}[2J"], ["route", "xp-evil", "--to", "nope\u{1B}[31m"],
            ["unroute", "xp-evil"], ["save", "xp-evil", "-"], ["load", "xp-evil", "/nonexistent/\u{1B}[2J"],
        ]
        var sawEscaped = false
        for arguments in runs {
            let result = sandbox.run([crosspointExecutable] + arguments)
            for (stream, text) in [("stdout", result.stdout), ("stderr", result.stderr)] {
                #expect(!text.unicodeScalars.contains { $0.value == 0x1B }, "\(arguments) printed an ESC on \(stream): \(text.debugDescription)")
                #expect(!text.split(separator: "\n").contains { $0.hasPrefix("INJECTED") }, "\(arguments) forged a line: \(text)")
                if text.contains(#"SINK\x1b[2J\x1b[5mBLINK\x0aINJECTED"#) || text.contains(#"XP\x1b[2J\x1b[5mBLINK\x0aINJECTED"#) { sawEscaped = true }
            }
        }
        #expect(sawEscaped, "the descriptions are shown, escaped")
        let list = sandbox.crosspoint("list")
        #expect(list.stdout.contains(#"xp-evil  XP\x1b[2J\x1b[5mBLINK\x0aINJECTED  2       2"#), "\(list.stdout)")
        let devices = sandbox.crosspoint("devices")
        #expect(devices.stdout.contains(#"evil\x1bsink  SINK\x1b[2J\x1b[5mBLINK\x0aINJECTED  FL FR"#), "\(devices.stdout)")
        // JSON keeps the exact text, escaped the JSON way.
        let json = sandbox.crosspoint("list", "--json")
        let entries = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(entries?.contains { $0["description"] as? String == "XP\u{1B}[2J\u{1B}[5mBLINK\nINJECTED" } == true)
        #expect(!json.stdout.unicodeScalars.contains { $0.value == 0x1B })
    }

    // MARK: Concurrent writers (issue 9, item 6)

    @Test func setAndShowWorkFastWhileAnotherClientWritesOtherKeys() throws {
        let sandbox = try cli.startSandbox()
        defer { sandbox.stop() }
        let id = try #require(try Graph(sandbox).nodeID("xp-cli"))
        // About 150 set-params a second on gain.in.1 through one pw-cli, until the checks below
        // are done (at most 30 s), then `quit` (0.3.65's pw-cli does not end at the end of its
        // input: it spins, a core's worth, until it is killed).
        let stop = NSTemporaryDirectory() + "crosspoint-writer-\(getpid())-\(UInt32.random(in: 0..<UInt32.max)).stop"
        defer { try? FileManager.default.removeItem(atPath: stop) }
        let writer = try sandbox.start(["bash", "-c", """
            end=$((SECONDS + 30)); k=0
            { while ((SECONDS < end)) && [[ ! -e "$0" ]]; do k=$((k + 1)); echo "set-param \(id) Props { params = [ \\"gain.in.1\\" 0.$((k % 9 + 1)) ] }"; sleep 0.005; done; echo quit; } | pw-cli >/dev/null 2>&1
            """, stop])
        usleep(1_000_000)
        for (k, gain) in ["-1dB", "-2dB", "-3dB", "-4dB", "-5dB", "-7dB", "-8dB", "-9dB"].enumerated() {
            let start = Date()
            let result = sandbox.crosspoint("set", "xp-cli", "FR", "FL", gain)
            let seconds = Date().timeIntervalSince(start)
            #expect(result.succeeded, "set \(gain) under a concurrent writer: \(result.stderr)")
            #expect(result.stdout.hasPrefix("xp-cli: matrix.1.0 (in_FR -> out_FL): "), "\(result.stdout)")
            #expect(seconds < 1.5, "set \(gain) took \(seconds) s")
            let value = number(try sandbox.props("xp-cli")["matrix.1.0"])
            #expect(value.map { abs($0 - pow(10, Double(-[1, 2, 3, 4, 5, 7, 8, 9][k]) / 20)) < 1e-6 } == true, "\(gain): \(value ?? .nan)")
        }
        var failures: [String] = []
        for _ in 0..<25 {
            let show = sandbox.crosspoint("show", "xp-cli")
            if !show.succeeded { failures.append(show.stderr) }
        }
        #expect(failures.isEmpty, "show failed \(failures.count) of 25 times: \(failures.first ?? "")")
        let written = number(try sandbox.props("xp-cli")["gain.in.1"])
        #expect(writer.isRunning, "the other writer wrote for as long as the checks took")
        FileManager.default.createFile(atPath: stop, contents: nil)
        writer.wait(timeout: 10)
        #expect(written != nil && written != 1, "the other writer was writing (gain.in.1 = \(written ?? .nan))")
    }

    // MARK: Shells and the manual

    @Test func shellCompletionsOfferNodesChannelsSinksAndKeysFromTheDaemon() throws {
        let sandbox = try cli.startSandbox()
        defer { sandbox.stop() }
        cli.expectSuccess(sandbox.shell("pw_null_sink iface 'FL FR RL RR'"), "sink")
        let script = NSTemporaryDirectory() + "crosspoint-completion-\(getpid())"
        defer { for shell in ["bash", "zsh", "fish"] { try? FileManager.default.removeItem(atPath: "\(script).\(shell)") } }
        for shell in ["bash", "zsh", "fish"] {
            let generated = sandbox.crosspoint("--generate-completion-script", shell)
            #expect(generated.succeeded && generated.stdout.contains("---completion"), "\(shell)")
            try generated.stdout.write(toFile: "\(script).\(shell)", atomically: false, encoding: .utf8)
        }
        // bash, as it completes: the script's function with COMP_WORDS and COMP_CWORD set.
        func bash(_ line: String) -> [String] {
            let result = sandbox.run(["bash", "-c", """
                source '\(script).bash'
                COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
                read -ra COMP_WORDS <<<"$COMP_LINE"
                [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
                _crosspoint "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
                """, "bash", "\(crosspointExecutable) " + line])
            return result.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        }
        #expect(Set(bash("set ")) == ["xp-cli", "xp-show", "xp-3x1"])
        #expect(bash("show xp-s") == ["xp-show"])
        #expect(bash("set xp-show FL ") == ["FL", "FR", "RL"])
        #expect(bash("set xp-3x1 ") == ["AUX0", "AUX1", "AUX2"])
        #expect(bash("gain xp-show ") == ["master", "in", "out"])
        #expect(bash("mute xp-show out ") == ["FL", "FR", "RL"])
        #expect(bash("route xp-cli --to ") == ["iface"])
        #expect(bash("route xp-cli --to iface --channels R") == ["RL", "RR"])
        #expect(bash("param xp-3x1 gain.in.") == ["gain.in.AUX0", "gain.in.AUX1", "gain.in.AUX2"])
        #expect(bash("param xp-cli mute.in.FL ") == ["true", "false"])
        #expect(bash("unroute xp-show ").contains("RL"))

        // zsh and fish as a person uses them: the shell in a terminal (tmux), the line typed,
        // Tab pressed, the screen read. (Skipped where tmux or the shell is not installed.)
        func typed(_ shell: [String], setup: String, _ line: String, expecting: [String]) -> String {
            let server = "crosspoint-test-\(getpid())-\(UInt32.random(in: 0..<UInt32.max))"
            let path = URL(fileURLWithPath: crosspointExecutable).deletingLastPathComponent().path + ":" + (sandbox.environment["PATH"] ?? "/usr/bin:/bin")
            defer { sandbox.run(["tmux", "-L", server, "kill-server"]) }
            sandbox.run(["tmux", "-L", server, "new-session", "-d", "-x", "200", "-y", "50", "env", "PATH=\(path)"] + shell)
            // The screen's lines with text; a prompt is a last one ending in #, %, > or $.
            func lines() -> [String] {
                sandbox.run(["tmux", "-L", server, "capture-pane", "-p"]).stdout.split(separator: "\n")
                    .map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            // Not a failure of its own: the checks below say what the screen showed.
            func waitFor(_ done: ([String]) -> Bool) { _ = Wait.holds(within: 10) { done(lines()) } }
            var prompt = ""
            waitFor { lines in
                prompt = lines.last ?? ""
                return prompt.last.map { "#%>$".contains($0) } == true
            }
            sandbox.run(["tmux", "-L", server, "send-keys", setup, "Enter"])
            waitFor { $0.count >= 2 && $0.last == prompt }  // the setup ran: the prompt again
            sandbox.run(["tmux", "-L", server, "send-keys", line, "Tab"])
            var screen = ""
            let start = Date()
            var pressedAgain = false
            repeat {
                usleep(200_000)
                screen = sandbox.run(["tmux", "-L", server, "capture-pane", "-p"]).stdout
                // zsh inserts a common prefix on the first Tab and lists on the second.
                if !pressedAgain && Date().timeIntervalSince(start) > 2 {
                    sandbox.run(["tmux", "-L", server, "send-keys", "Tab"])
                    pressedAgain = true
                }
            } while !expecting.allSatisfy { screen.contains($0) } && Date().timeIntervalSince(start) < 10
            return screen
        }
        func words(_ screen: String) -> Set<String> { Set(screen.split(whereSeparator: \.isWhitespace).map(String.init)) }
        let tmux = FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")
        if tmux && FileManager.default.isExecutableFile(atPath: "/usr/bin/fish") {
            let fish = ["fish", "--no-config"], setup = "source '\(script).fish'"
            var screen = typed(fish, setup: setup, "crosspoint set ", expecting: ["xp-cli", "xp-show", "xp-3x1"])
            #expect(words(screen).isSuperset(of: ["xp-cli", "xp-show", "xp-3x1"]), "fish: \(screen)")
            screen = typed(fish, setup: setup, "crosspoint gain xp-show out ", expecting: ["FL", "FR", "RL"])
            #expect(words(screen).isSuperset(of: ["FL", "FR", "RL"]), "fish: \(screen)")
            screen = typed(fish, setup: setup, "crosspoint route xp-cli --to i", expecting: ["--to iface"])
            #expect(screen.contains("crosspoint route xp-cli --to iface"), "fish: \(screen)")
        }
        if tmux && FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") {
            let directory = NSTemporaryDirectory() + "crosspoint-zsh-\(getpid())"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.copyItem(atPath: "\(script).zsh", toPath: "\(directory)/_crosspoint")
            let zsh = ["zsh", "-f"], setup = "fpath=(\(directory) $fpath); autoload -U compinit; compinit -u"
            var screen = typed(zsh, setup: setup, "crosspoint set ", expecting: ["xp-cli", "xp-show", "xp-3x1"])
            #expect(words(screen).isSuperset(of: ["xp-cli", "xp-show", "xp-3x1"]), "zsh: \(screen)")
            screen = typed(zsh, setup: setup, "crosspoint set xp-show FL ", expecting: ["FL", "FR", "RL"])
            #expect(words(screen).isSuperset(of: ["FL", "FR", "RL"]), "zsh: \(screen)")
            screen = typed(zsh, setup: setup, "crosspoint param xp-3x1 gain.in.", expecting: ["gain.in.AUX2"])
            #expect(words(screen).isSuperset(of: ["gain.in.AUX0", "gain.in.AUX1", "gain.in.AUX2"]), "zsh: \(screen)")
        }
        let zsh = try String(contentsOfFile: "\(script).zsh", encoding: .utf8)
        #expect(zsh.contains("#compdef crosspoint") && zsh.contains("---completion set -- positional@0"))
    }

    @Test func theManPageIsMadeFromTheHelpAndRenders() throws {
        let page = Sandbox.run([crosspointExecutable, "manual"], environment: ProcessInfo.processInfo.environment)
        #expect(page.succeeded && page.stdout.hasPrefix(".TH CROSSPOINT 1"))
        let file = NSTemporaryDirectory() + "crosspoint-\(getpid()).1"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try page.stdout.write(toFile: file, atomically: false, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["MANWIDTH"] = "100"
        environment["MANPAGER"] = "cat"
        let rendered = Sandbox.run(["man", "-l", file], environment: environment)
        #expect(rendered.succeeded, "\(rendered.stderr)")
        let text = rendered.stdout.replacing(/.\x08/, with: "")  // no overstrike
        for command in ["list", "show", "set", "gain", "mute", "unmute", "map", "matrix", "ramp", "resize", "rename", "param", "route",
                        "unroute", "devices", "save", "load", "params"] {
            #expect(text.contains("crosspoint \(command)\n"), "the page has a section for \(command)")
            let help = Sandbox.run([crosspointExecutable, command, "--help"], environment: ProcessInfo.processInfo.environment).stdout
            let example = help.split(separator: "\n").first { $0.hasPrefix("  crosspoint \(command)") }
            #expect(example.map { text.contains($0.trimmingCharacters(in: .whitespaces)) } == true, "\(command)'s examples are in the page")
        }
        #expect(text.contains("PIPEWIRE_REMOTE") && text.contains("SEE ALSO"))
        let help = Sandbox.run([crosspointExecutable, "--help"], environment: ProcessInfo.processInfo.environment)
        #expect(!help.stdout.contains("manual"), "the manual command is hidden")
    }

    @Test func installPutsTheManPageAndCompletionsWhereShellsFindThemAndUninstallRemovesThem() throws {
        try #require(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first (scripts/test does)")
        let home = NSTemporaryDirectory() + "crosspoint-home-extras-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["XDG_CONFIG_HOME"] = home + "/.config"
        environment["XDG_DATA_HOME"] = home + "/.local/share"
        let script = repositoryRoot.appendingPathComponent("scripts/install").path
        let installed = Sandbox.run(["bash", script, "--user"], environment: environment, timeout: 600)
        #expect(installed.succeeded, "\(installed.stderr)")
        let command = home + "/.local/bin/crosspoint"
        let expected: [(String, [String])] = [
            (home + "/.local/share/man/man1/crosspoint.1", ["manual"]),
            (home + "/.local/share/bash-completion/completions/crosspoint", ["--generate-completion-script", "bash"]),
            (home + "/.local/share/zsh/site-functions/_crosspoint", ["--generate-completion-script", "zsh"]),
            (home + "/.config/fish/completions/crosspoint.fish", ["--generate-completion-script", "fish"]),
        ]
        for (file, arguments) in expected {
            let content = try? String(contentsOfFile: file, encoding: .utf8)
            let made = Sandbox.run([command] + arguments, environment: environment).stdout
            #expect(content != nil && content == made, "\(file) is what `crosspoint \(arguments.joined(separator: " "))` prints")
        }
        // man finds the page next to the command on PATH.
        environment["PATH"] = home + "/.local/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["MANPAGER"] = "cat"
        let man = Sandbox.run(["man", "crosspoint"], environment: environment)
        #expect(man.succeeded && man.stdout.contains("crosspoint"), "\(man.stderr)")
        let removed = Sandbox.run(["bash", script, "--uninstall", "--user"], environment: environment, timeout: 60)
        #expect(removed.succeeded, "\(removed.stderr)")
        for (file, _) in expected { #expect(!FileManager.default.fileExists(atPath: file), "\(file) is still there") }
    }
}
