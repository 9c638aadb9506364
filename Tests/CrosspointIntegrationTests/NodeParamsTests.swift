import Foundation
import Testing

/// The node as PipeWire tools see it: pw-dump, pw-cli set-param and enum-params, module
/// arguments, and the module's life in a running daemon.
@Suite(.serialized)
struct NodeParamsTests {
    let sandbox: Sandbox

    /// Node ids, each looked up on its first use in a test and kept for the rest of it (no test
    /// uses one after restarting the daemon, which could change it).
    private final class IDs { var byName: [String: Int] = [:] }
    private let ids = IDs()

    init() throws { sandbox = try Sandbox.withTestNodes() }

    func id(_ node: String) throws -> Int {
        if let id = ids.byName[node] { return id }
        let id = try #require(try Graph(sandbox).nodeID(node), "node \(node) is missing")
        ids.byName[node] = id
        return id
    }

    /// Whether `condition` holds, tried every 50 ms for up to `seconds`.
    func poll(_ seconds: Double = 5, _ condition: () throws -> Bool) rethrows -> Bool {
        try Wait.holds(within: seconds, condition)
    }

    /// `pw-cli enum-params <id> Props`, read back as key -> printed value.
    func enumProps(_ node: String) throws -> [String: String] {
        let result = sandbox.run(["pw-cli", "enum-params", "\(try id(node))", "Props"])
        #expect(result.succeeded, "enum-params failed: \(result.stderr)")
        var values: [String: String] = [:]
        let lines = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        var k = 0
        while k + 1 < lines.count {
            if lines[k].hasPrefix("String \""), !lines[k + 1].hasPrefix("String ") {
                let key = String(lines[k].dropFirst("String \"".count).dropLast())
                var value = lines[k + 1]
                if value.hasPrefix("Array") {  // the elements follow, one a line
                    var items: [String] = []
                    var m = k + 2
                    while m < lines.count, lines[m].hasPrefix("Int ") { items.append(String(lines[m].dropFirst(4))); m += 1 }
                    value = "[" + items.joined(separator: ",") + "]"
                }
                values[key] = value
                k += 2
            } else {
                k += 1
            }
        }
        return values
    }

    /// `enumProps`, read again until it shows every key with its value (for up to 5 s).
    func enumProps(_ node: String, showing values: [String: String]) throws -> [String: String] {
        var props: [String: String] = [:]
        _ = try poll { props = try enumProps(node); return values.allSatisfy { props[$0.key] == $0.value } }
        return props
    }

    /// `pw-cli set-param`: it returns once the daemon has the message; the node takes it a moment
    /// later, so the tests then wait for what it changes.
    func setParam(_ node: String, _ json: String) throws {
        let result = sandbox.run(["pw-cli", "set-param", "\(try id(node))", "Props", json])
        #expect(result.succeeded, "set-param \(json): \(result.stderr)")
    }

    @Test func pwDumpShowsPortNamesAndConfiguredParams() throws {
        let graph = try Graph(sandbox)
        let node = try #require(graph.nodes(named: "xp-4x3").first)
        let props = Graph.props(node)
        #expect(props["media.category"] as? String == "Filter")
        #expect(props["node.description"] as? String == "Crosspoint 4x3")
        let inputs = graph.ports(of: "xp-4x3", direction: "input")
        let outputs = graph.ports(of: "xp-4x3", direction: "output")
        #expect(Set(inputs.compactMap { $0["port.name"] as? String }) == ["in_AUX0", "in_AUX1", "in_AUX2", "in_AUX3"])
        #expect(Set(outputs.compactMap { $0["port.name"] as? String }) == ["out_AUX0", "out_AUX1", "out_AUX2"])
        for port in inputs + outputs {
            #expect(port["format.dsp"] as? String == "32 bit float mono audio")
            #expect((port["port.alias"] as? String)?.hasPrefix("Crosspoint 4x3:") == true)
            #expect((port["port.name"] as? String)?.hasSuffix("_" + (port["audio.channel"] as? String ?? "?")) == true)
        }
        let params = graph.params(of: "xp-4x3")
        #expect(sandbox.float(params["matrix.1.1"]) == -0.75)
        #expect(sandbox.float(params["matrix.2.0"]).map { abs($0 - 0.3) < 1e-6 } == true)
        #expect(sandbox.float(params["gain.master"]) == 1)
        #expect(sandbox.float(params["ramp.ms"]) == 5)
        let names = graph.propInfoNames(of: "xp-4x3")
        for key in ["gain.master", "gain.in.3", "gain.out.2", "matrix.3.2", "mute.in.0", "mute.out.2", "channel-map", "ramp.ms"] {
            #expect(names.contains(key), "PropInfo lacks \(key)")
        }
        // The shipped drop-in's node, with its channel names.
        #expect(Set(graph.ports(of: "crosspoint", direction: "input").compactMap { $0["port.name"] as? String }) == ["in_FL", "in_FR"])
        #expect(graph.ports(of: "crosspoint", direction: "output").compactMap { $0["port.name"] as? String } == ["out_MONO"])
        sandbox.stop()
    }

    @Test func setParamChangesCrosspointGainMuteAndMapAndEnumParamsReadsThemBack() throws {
        try setParam("xp-params", #"{ params = [ "matrix.0.1" 0.5 "matrix.FR.FR" 0.25 "gain.in.1" 2 "mute.out.0" true ] }"#)
        var props = try enumProps("xp-params", showing: [
            "matrix.0.1": "Float 0.500000", "matrix.1.1": "Float 0.250000", "gain.in.1": "Float 2.000000", "mute.out.0": "Bool true",
        ])
        #expect(props["matrix.0.1"] == "Float 0.500000")
        #expect(props["matrix.1.1"] == "Float 0.250000")
        #expect(props["gain.in.1"] == "Float 2.000000")
        #expect(props["mute.out.0"] == "Bool true")
        // out0 muted; out1 = 0.5 * in0 + 2 * 0.25 * in1
        try sandbox.expectAudio(node: "xp-params", gains: [[0, 0.5], [0, 0.5]])

        try setParam("xp-params", #"{ params = [ "mute.out.0" false "channel-map" [ 1 0 ] "gain.in.1" 1 ] }"#)
        props = try enumProps("xp-params", showing: ["channel-map": "[1,0]", "matrix.0.0": "Float 0.000000", "matrix.1.0": "Float 1.000000"])
        #expect(props["channel-map"] == "[1,0]")
        #expect(props["matrix.0.0"] == "Float 0.000000" && props["matrix.1.0"] == "Float 1.000000")
        try sandbox.expectAudio(node: "xp-params", gains: [[0, 1], [1, 0]])
        sandbox.stop()
    }

    @Test func standardVolumeMuteAndChannelVolumesMapToMasterAndOutputGains() throws {
        try setParam("xp-params", "{ volume = 0.5 channelVolumes = [ 0.25 1.5 ] }")
        var props = try enumProps("xp-params", showing: ["gain.master": "Float 0.500000", "gain.out.0": "Float 0.250000", "gain.out.1": "Float 1.500000"])
        #expect(props["gain.master"] == "Float 0.500000")
        #expect(props["gain.out.0"] == "Float 0.250000" && props["gain.out.1"] == "Float 1.500000")
        try sandbox.expectAudio(node: "xp-params", gains: [[0.125, 0], [0, 0.75]])
        try setParam("xp-params", "{ mute = true }")
        _ = try sandbox.waitFor("mute on xp-params") { ($0.params(of: "xp-params")["mute"] as? Bool) == true }
        props = try enumProps("xp-params")
        try sandbox.expectAudio(node: "xp-params", gains: [[0, 0], [0, 0]])
        sandbox.stop()
    }

    @Test func malformedSetParamsAreRefusedAndChangeNothing() throws {
        let before = try enumProps("xp-4x3")
        let bad: [(String, String)] = [
            (#"{ params = [ "matrix.0.0" "loud" ] }"#, "matrix.0.0"),
            (#"{ params = [ "matrix.9.0" 0.5 ] }"#, "input index 9"),
            (#"{ params = [ "matrix.0.7" 0.5 ] }"#, "output index 7"),
            (#"{ params = [ "no.such.key" 1 ] }"#, "unknown parameter 'no.such.key'"),
            (#"{ params = [ "gain.master" 1e30 ] }"#, "gain.master"),
            (#"{ params = [ "gain.in.0" 11 ] }"#, "outside"),
            (#"{ params = [ "mute.in.0" 0.5 ] }"#, "mute.in.0"),
            (#"{ params = [ "channel-map" [ ] ] }"#, "channel-map"),
            (#"{ params = [ "channel-map" [ 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 ] ] }"#, "channel-map has 20 entries"),
            (#"{ params = [ "channel-map" [ 7 0 0 ] ] }"#, "entry 0 is 7"),
            (#"{ params = [ "ramp.ms" -4 ] }"#, "ramp.ms"),
            (#"{ params = [ "matrix.FL.X" 1 ] }"#, "no input channel is named 'FL'"),
            (#"{ params = [ 42 1 ] }"#, "key is not a string"),
            (#"{ params = [ "gain.out.1" ] }"#, "gain.out.1: got a value of type nothing"),
            ("{ channelVolumes = [ 1 1 ] }", "channelVolumes has 2 entries"),
            // Each of these once killed the daemon (SIGILL: Int(Double) out of range).
            (#"{ params = [ "inputs" 1e20 ] }"#, "inputs: must be a whole number from 1 to 256, got 1e+20"),
            (#"{ params = [ "outputs" 1e20 ] }"#, "outputs: must be a whole number from 1 to 256, got 1e+20"),
            (#"{ params = [ "inputs" -1e20 ] }"#, "inputs: must be a whole number from 1 to 256, got -1e+20"),
            (#"{ params = [ "outputs" 9.3e18 ] }"#, "outputs: must be a whole number from 1 to 256, got 9.3e+18"),
            (#"{ params = [ "channel-map" [ 1e20 0 ] ] }"#, "channel-map: 1e+20 in the list is not a whole number"),
            (#"{ params = [ "channel-map" [ -1e20 0 ] ] }"#, "channel-map: -1e+20 in the list is not a whole number"),
            // Indices are plain numbers; channel names ASCII.
            (#"{ params = [ "matrix.-0.0" 0.5 ] }"#, "matrix.-0.0: input: '-0' is not an index"),
            (#"{ params = [ "matrix.00.0" 0.5 ] }"#, "matrix.00.0: input: '00' is not an index"),
            (#"{ params = [ "matrix.0.+1" 0.5 ] }"#, "matrix.0.+1: output: '+1' is not an index"),
            (#"{ params = [ "input.position" [ "A" "Ä" "C" "D" ] ] }"#, "'Ä' is not a channel name"),
            (#"{ params = [ "output.position" [ "A" "2" "C" ] ] }"#, "'2' is a number"),
        ]
        for (json, mention) in bad {
            let mentions = sandbox.daemonLog.components(separatedBy: mention).count
            try setParam("xp-4x3", json)
            // Once the node has taken it, the log has one more warning naming it.
            let warned = poll { sandbox.daemonLog.components(separatedBy: mention).count > mentions }
            #expect(sandbox.run(["pw-cli", "info", "0"]).succeeded, "daemon died after \(json)")
            #expect(warned, "no warning naming '\(mention)' for \(json)")
        }
        // Log lines point at the Swift code that wrote them (PIPEWIRE_DEBUG users read that).
        #expect(sandbox.daemonLog.contains("FilterNode.swift:") && !sandbox.daemonLog.contains("shim.c:"),
                "log lines should carry the Swift caller's file")
        let after = try enumProps("xp-4x3")
        #expect(after == before)
        try sandbox.expectAudio(node: "xp-4x3", gains: NodeAudioTests.mixed)
        sandbox.stop()
    }

    /// `pw-cli destroy` of a module the daemon loaded: PipeWire 0.3.65 destroys it, and the
    /// node must go with it. From 0.3.77 a module's global grants no client the right to
    /// destroy it (its permissions are r and m only): the daemon refuses, module and node
    /// stay, and the node plays on. Then a restart loads it again.
    @Test func destroyingTheModuleRemovesTheNodeAndARestartLoadsItAgain() throws {
        let graph = try Graph(sandbox)
        let module = try #require(graph.objects.first { o in
            (o["type"] as? String) == "PipeWire:Interface:Module"
                && ((o["info"] as? [String: Any])?["args"] as? String)?.contains("xp-swap") == true
        })
        let moduleID = try #require(module["id"] as? Int)
        let destroyable = (module["permissions"] as? [String])?.contains("x")
        #expect(destroyable == !PipeWire.atLeast(0, 3, 77), "module permissions \(module["permissions"] ?? "none") on PipeWire \(PipeWire.version)")
        #expect(sandbox.run(["pw-cli", "destroy", "\(moduleID)"]).succeeded)  // returns once the daemon has handled it
        if destroyable == true {
            _ = try sandbox.waitFor("xp-swap to go") { $0.nodeID("xp-swap") == nil }
        } else {
            let after = try Graph(sandbox)
            #expect(after.objects.contains { ($0["id"] as? Int) == moduleID }, "the module stays")
            #expect(after.nodeID("xp-swap") != nil, "the node stays with its module")
            try sandbox.expectAudio(node: "xp-swap", gains: [[0, 1], [1, 0]])
        }
        #expect(sandbox.run(["pw-cli", "info", "0"]).succeeded, "the daemon must keep running")
        #expect(try Graph(sandbox).nodeID("xp-4x3") != nil, "other nodes stay")
        try sandbox.expectAudio(node: "xp-mono-stereo", gains: [[1, 1]])

        try sandbox.restartDaemon()
        _ = try sandbox.waitFor("xp-swap to come back") { $0.nodeID("xp-swap") != nil }
        try sandbox.expectAudio(node: "xp-swap", gains: [[0, 1], [1, 0]])
        sandbox.stop()
    }

    /// A module destroyed while the process that loaded it lives on takes its node with it:
    /// pw-cli loads the module into its own process, then unloads it (pw-cli's
    /// `unload-module` exists from PipeWire 1.3.81; before, the daemon's `destroy` above
    /// covers this).
    @Test(.enabled(if: PipeWire.atLeast(1, 3, 81)))
    func unloadingTheModuleFromTheProcessThatLoadedItRemovesTheNode() throws {
        let helpers = repositoryRoot.appendingPathComponent("scripts/lib/pw-helpers.sh").path
        let script = """
            set -euo pipefail; source '\(helpers)'
            dir=$(mktemp -d); mkfifo "$dir/in"
            pw-cli <"$dir/in" >"$dir/out" 2>&1 & cli=$!
            exec 3>"$dir/in"
            echo 'load-module libpipewire-module-crosspoint { node.name = "xp-local" state.persist = false state.links = false }' >&3
            pw_wait_until 10 pw_node_id xp-local >/dev/null || { echo "xp-local did not appear"; cat "$dir/out"; exit 1; }
            var=$(grep -o '[0-9]* = @module:' "$dir/out" | tail -1 | cut -d' ' -f1)
            echo "loaded as pw-cli variable $var"
            echo "unload-module $var" >&3
            pw_wait_until 10 pw_node_absent xp-local || { echo "xp-local outlived its module"; cat "$dir/out"; exit 1; }
            echo "unloaded"
            kill -0 $cli && echo "pw-cli still running"
            echo quit >&3; exec 3>&-; wait $cli; rm -rf "$dir"   # (pw-cli ignores the end of a FIFO)
            """
        let result = sandbox.shell(script, timeout: 40)
        #expect(result.succeeded && result.stdout.contains("unloaded") && result.stdout.contains("pw-cli still running"),
                "\(result.stdout)\n\(result.stderr)")
        #expect(sandbox.run(["pw-cli", "info", "0"]).succeeded, "the daemon must keep running")
        #expect(try Graph(sandbox).nodeID("xp-swap") != nil, "other nodes stay")
        sandbox.stop()
    }
}

/// Module arguments that are wrong, and the standalone process.
@Suite(.serialized)
struct ModuleArgumentTests {
    @Test func aBadModuleArgumentFailsLoudlyAndTheDaemonKeepsRunning() throws {
        let conf = NSTemporaryDirectory() + "crosspoint-bad-\(getpid()).conf"
        try """
        context.modules = [
            { name = libpipewire-module-crosspoint args = { node.name = "xp-bad" inputs = 0 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-bad2" matrix = [ [ 1 ] [ "x" ] ] } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-bad3" inptus = 2 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-bad4" state.persist = maybe } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-huge1" inputs = 1e39 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-huge2" inputs = -1e20 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-huge3" outputs = 1e20 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-huge4" inputs = 99999999999999999999 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-huge5" channel-map = [ 1e20 0 ] } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-rows" matrix = [ \(String(repeating: "[ 1 ] ", count: 300))] } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-empty" output.position = [ ] } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-twice" inputs = 2 inputs = 3 } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-umlaut" input.position = [ FL "FÄ" ] } flags = [ nofail ] }
            { name = libpipewire-module-crosspoint args = { node.name = "xp-good" } }
        ]
        """.write(toFile: conf, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }
        let sandbox = try Sandbox(dropIns: [conf])
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("xp-good") { $0.nodeID("xp-good") != nil }
        let graph = try Graph(sandbox)
        #expect(graph.nodeID("xp-bad") == nil && graph.nodeID("xp-bad2") == nil && graph.nodeID("xp-bad3") == nil)
        let log = sandbox.daemonLog
        #expect(log.contains("argument 'inputs': must be a whole number from 1 to 256, got 0"), "\(log)")
        #expect(log.contains("argument 'matrix': row 1 holds \"x\", which is not a number"), "\(log)")
        #expect(log.contains("argument 'inptus': unknown argument"), "\(log)")
        #expect(log.contains("argument 'state.persist': must be true or false"), "\(log)")
        #expect(graph.nodeID("xp-bad4") == nil)
        // Numbers that once killed the daemon while it loaded its config (Int(Double) trapped).
        for huge in ["1e+39", "-1e+20", "1e+20"] {
            #expect(log.contains("must be a whole number from 1 to 256, got \(huge)"), "\(huge): \(log)")
        }
        #expect(log.contains("argument 'outputs'") && log.contains("argument 'channel-map'"), "\(log)")
        for k in 1...5 { #expect(graph.nodeID("xp-huge\(k)") == nil) }
        // Each error names the argument the person wrote.
        #expect(log.contains("argument 'matrix': gives 300 inputs; a node has 1 to 256"), "\(log)")
        #expect(log.contains("argument 'output.position': gives 0 outputs; a node has 1 to 256"), "\(log)")
        #expect(log.contains("argument 'inputs': is given twice"), "\(log)")
        #expect(log.contains("argument 'input.position': input.position: 'FÄ' is not a channel name"), "\(log)")
        for name in ["xp-rows", "xp-empty", "xp-twice", "xp-umlaut"] { #expect(graph.nodeID(name) == nil) }
        #expect(sandbox.run(["pw-cli", "info", "0"]).succeeded)
    }

    @Test func theStandaloneConfigRunsTheNodeAsItsOwnProcess() throws {
        let sandbox = try Sandbox(dropIns: [])
        defer { sandbox.stop() }
        let conf = repositoryRoot.appendingPathComponent("conf/crosspoint-standalone.conf").path
        for round in 1...2 {
            let process = try sandbox.start(["pipewire", "-c", conf])
            _ = try sandbox.waitFor("the standalone node, round \(round)") { $0.nodeID("crosspoint-standalone") != nil }
            try sandbox.expectAudio(node: "crosspoint-standalone", gains: [[1, 0], [0, 1]])
            process.stop()
            _ = try sandbox.waitFor("the standalone node to go") { $0.nodeID("crosspoint-standalone") == nil }
        }
    }

    @Test func theDaemonShutsDownCleanlyWithTheModuleLoaded() throws {
        let base = NSTemporaryDirectory() + "crosspoint-shutdown-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let dropIns = base + "/config/pipewire/pipewire.conf.d"
        try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: base + "/runtime", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(atPath: repositoryRoot.appendingPathComponent("conf/crosspoint.conf").path,
                                         toPath: dropIns + "/crosspoint.conf")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = base + "/runtime"
        environment["XDG_CONFIG_HOME"] = base + "/config"
        environment["XDG_STATE_HOME"] = base + "/state"
        environment["PIPEWIRE_MODULE_DIR"] = (modulePath as NSString).deletingLastPathComponent + ":/usr/lib/x86_64-linux-gnu/pipewire-0.3"
        for key in ["PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_CONFIG_DIR"] { environment[key] = nil }
        let daemon = try Child(["pipewire"], environment: environment, stdout: base + "/log", stderr: base + "/log")
        var loaded = false
        for _ in 0..<50 where !loaded {
            usleep(100_000)
            loaded = Sandbox.run(["pw-cli", "ls", "Node"], environment: environment, timeout: 3).stdout.contains("\"crosspoint\"")
        }
        #expect(loaded, "the node did not appear")
        daemon.signal(SIGTERM)
        #expect(daemon.wait(timeout: 10) == 0, "pipewire must exit cleanly with the module loaded")
    }
}
