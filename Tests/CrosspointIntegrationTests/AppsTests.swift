import Foundation
import Testing

/// `crosspoint apps` and `crosspoint move` against what applications and the desktop use: a
/// private daemon with WirePlumber and pipewire-pulse, the stand-in interface (the default
/// device) and the node `desk` with its virtual sink `game` (Fixtures/interface.conf and
/// devices.conf). The node's outputs go to a sink of their own, `desk-out`, so that recordings
/// tell the two paths apart: the interface carries what plays on it directly, desk-out what
/// plays through game and the node.
@Suite(.serialized)
struct AppsTests {
    static let fixtures = repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures")

    private func makeSandbox() throws -> Sandbox {
        let sandbox = try Sandbox(dropIns: [Self.fixtures.appendingPathComponent("interface.conf").path,
                                            Self.fixtures.appendingPathComponent("devices.conf").path], pulse: true)
        _ = try sandbox.waitFor("the devices and their links", describe: { "\($0.links(of: "desk"))" }) { graph in
            graph.nodeID("game") != nil && graph.nodeID("interface") != nil && graph.links(of: "desk").count == 4
        }
        let linked = sandbox.shell("""
            pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=desk-out media.class=Audio/Sink \
              object.linger=true audio.position=[ FL FR ] priority.session=100 session.suspend-timeout-seconds=0 }' >/dev/null
            pw_wait_ports desk-out 2 input
            pw-link desk:out_FL desk-out:playback_FL && pw-link desk:out_FR desk-out:playback_FR
            """)
        guard linked.succeeded else { throw SandboxError("linking the outputs: \(linked.stderr)") }
        return sandbox
    }

    /// A folder with two long stereo files to play, of different tones (330 and 520 Hz; 710
    /// and 900 Hz): two players of the same file could cancel out where they are mixed.
    private func longFiles() throws -> (folder: String, wav: String, other: String) {
        let folder = Sandbox.audioFolder + "crosspoint-apps-\(UInt32.random(in: 0..<UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let tones = TestSignal(channels: 4, seconds: 60).channels
        try Wave.write(Array(tones[0...1]), to: folder + "/long.wav")
        try Wave.write(Array(tones[2...3]), to: folder + "/other.wav")
        return (folder, folder + "/long.wav", folder + "/other.wav")
    }

    /// The process id of the one process whose command line contains `pattern`.
    private func pid(_ sandbox: Sandbox, _ pattern: String) -> Int? {
        let found = sandbox.run(["pgrep", "-f", "--", pattern]).stdout.split(separator: "\n").compactMap { Int($0) }
        return found.count == 1 ? found[0] : nil
    }

    /// The apps of `crosspoint apps --json`, by stream node name.
    private func apps(_ sandbox: Sandbox) throws -> [String: [String: Any]] {
        let result = sandbox.crosspoint("apps", "--json")
        guard result.succeeded else { throw SandboxError("crosspoint apps --json: \(result.stderr)") }
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let list = try #require(json?["apps"] as? [[String: Any]], "apps --json printed \(result.stdout)")
        return Dictionary(list.map { ($0["node"] as? String ?? "?", $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The peak of each channel of `seconds` of a sink's monitor.
    private func peaks(_ sandbox: Sandbox, _ sink: String, channels: [String], _ folder: String, seconds: Double = 1) throws -> [Float] {
        let tag = UInt32.random(in: 0..<UInt32.max), path = folder + "/rec-\(tag).wav"
        let recorder = try sandbox.start([
            "pw-record", "--target", sink, "-P", "{ stream.capture.sink = true node.name = apps-rec-\(tag) }",
            "--channels", "\(channels.count)", "--channel-map", PipeWire.channelMap(channels), "--format", "f32", path,
        ])
        #expect(sandbox.shell("pw_wait_ports apps-rec-\(tag) \(channels.count) input").succeeded)
        usleep(UInt32(seconds * 1_000_000) + 300_000)
        recorder.stop()
        let recorded = try Wave.read(path)
        guard recorded.count == channels.count else { throw SandboxError("recorded \(recorded.count) channels") }
        // The last `seconds` (what was recorded once the links were made).
        return recorded.map { channel in channel.suffix(Int(seconds * 48000)).reduce(0) { max($0, abs($1)) } }
    }

    @Test func appsAreListedMovedToAVirtualDeviceAndRememberedWhenStartedAgain() throws {
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        let (folder, wav, other) = try longFiles()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tag = "\(UInt32.random(in: 0..<UInt32.max))"
        let pulseName = "apps-paplay-\(tag)", nativeName = "apps-pwplay-\(tag)"
        var paplay = try sandbox.start(["paplay", "--client-name=\(pulseName)", wav])
        let pwplay = try sandbox.start(["pw-play", "-P", "{ node.name = \(nativeName) }", other])
        defer { paplay.stop(); pwplay.stop() }
        var graph = try sandbox.waitFor("both players on the interface",
                                        describe: { "\($0.links(of: pulseName)) \($0.links(of: nativeName))" }) { graph in
            Set(graph.links(of: pulseName).map(\.peer)) == ["interface"] && Set(graph.links(of: nativeName).map(\.peer)) == ["interface"]
        }
        let pulseID = try #require(graph.nodeID(pulseName)), nativeID = try #require(graph.nodeID(nativeName))
        let pulsePID = try #require(pid(sandbox, "--client-name=\(pulseName)"))
        let nativePID = try #require(pid(sandbox, "node.name = \(nativeName)"))

        // Listed with name, pid and the interface.
        var listed = sandbox.crosspoint("apps")
        #expect(listed.succeeded, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ID  APP") == true, "\(listed.stdout)")
        let pulseLine = lines.first { $0.hasPrefix("\(pulseID) ") } ?? ""
        let nativeLine = lines.first { $0.hasPrefix("\(nativeID) ") } ?? ""
        // Playing ("plays"), on the interface, following the default device.
        #expect(pulseLine.contains(pulseName) && pulseLine.contains(" \(pulsePID) ") && pulseLine.contains(" plays ")
                && pulseLine.contains(" interface ") && pulseLine.hasSuffix(" default"), "\(listed.stdout)")
        #expect(nativeLine.contains("pw-play") && nativeLine.contains(nativeName) && nativeLine.contains(" \(nativePID) ")
                && nativeLine.contains(" interface ") && nativeLine.hasSuffix(" default"), "\(listed.stdout)")
        var json = try apps(sandbox)
        #expect(json[pulseName]?["app"] as? String == pulseName && json[pulseName]?["pid"] as? Int == pulsePID, "\(json)")
        #expect(json[nativeName]?["app"] as? String == "pw-play" && json[nativeName]?["pid"] as? Int == nativePID, "\(json)")
        #expect((json[pulseName]?["plays"] as? [[String: Any]])?.map { $0["name"] as? String } == ["interface"], "\(json)")
        #expect(json[pulseName]?["kind"] as? String == "playback" && json[pulseName]?["followsDefault"] as? Bool == true
                && json[pulseName]?["pinnedTo"] is NSNull, "\(json)")
        // Heard on the interface, not through the node.
        var direct = try peaks(sandbox, "interface", channels: ["FL", "FR", "RL", "RR"], folder)
        var throughNode = try peaks(sandbox, "desk-out", channels: ["FL", "FR"], folder)
        #expect(direct[0] > 0.1 && direct[1] > 0.1 && throughNode == [0, 0], "interface \(direct), desk-out \(throughNode)")

        // Moved by name to game: relinked there alone.
        let moved = sandbox.crosspoint("move", pulseName, "--to", "game")
        #expect(moved.succeeded, "\(moved.stderr)")
        #expect(moved.stdout == "moved \(pulseName) (id \(pulseID), pid \(pulsePID)) from interface to game\n", "\(moved.stdout)")
        graph = try sandbox.waitFor("paplay on game", describe: { "\($0.links(of: pulseName))" }) {
            Set($0.links(of: pulseName).map(\.peer)) == ["game"]
        }
        // And pw-play by its id, to the device's description, with a JSON report.
        let movedNative = sandbox.crosspoint("move", "\(nativeID)", "--to", "Game", "--json")
        #expect(movedNative.succeeded, "\(movedNative.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(movedNative.stdout.utf8)) as? [String: Any]
        let entry = (report?["moved"] as? [[String: Any]])?.first
        #expect(report?["device"] as? String == "game" && entry?["id"] as? Int == nativeID
                && entry?["from"] as? [String] == ["interface"] && entry?["to"] as? String == "game", "\(movedNative.stdout)")
        graph = try sandbox.waitFor("pw-play on game", describe: { "\($0.links(of: nativeName))" }) {
            Set($0.links(of: nativeName).map(\.peer)) == ["game"]
        }
        // The session manager's own mechanism: the target in the default metadata.
        let metadata = sandbox.run(["pw-metadata", "-n", "default"]).stdout
        #expect(metadata.contains("id:\(pulseID) key:'target.object'") && metadata.contains("id:\(nativeID) key:'target.node'"), "\(metadata)")

        // Listed as playing through game into the desk's game inputs, and heard there: on the
        // node's outputs, no longer on the interface.
        listed = sandbox.crosspoint("apps")
        let through = "game (desk inputs game_FL, game_FR)"
        #expect(listed.stdout.split(separator: "\n").filter { $0.contains(through) && $0.hasSuffix(" pinned: game") }.count == 2,
                "\(listed.stdout)")
        json = try apps(sandbox)
        #expect(json[pulseName]?["followsDefault"] as? Bool == false && json[pulseName]?["pinnedTo"] as? String == "game", "\(json)")
        let place = (json[nativeName]?["plays"] as? [[String: Any]])?.first
        #expect(place?["name"] as? String == "game", "\(json)")
        #expect((place?["mixer"] as? [String: Any])?["node"] as? String == "desk"
                && (place?["mixer"] as? [String: Any])?["inputs"] as? [String] == ["game_FL", "game_FR"], "\(json)")
        #expect(Set(graph.links(of: "game").map(\.peer)).isSuperset(of: ["desk", pulseName, nativeName]), "\(graph.links(of: "game"))")
        direct = try peaks(sandbox, "interface", channels: ["FL", "FR", "RL", "RR"], folder)
        throughNode = try peaks(sandbox, "desk-out", channels: ["FL", "FR"], folder)
        #expect(direct == [0, 0, 0, 0] && throughNode[0] > 0.1 && throughNode[1] > 0.1, "interface \(direct), desk-out \(throughNode)")

        // Started again (the same client name, no device asked): the session manager plays it on game.
        paplay.stop()
        _ = try sandbox.waitFor("the first paplay to go") { $0.nodeID(pulseName) == nil }
        paplay = try sandbox.start(["paplay", "--client-name=\(pulseName)", wav])
        // (The new stream may get the old one's id: the daemon reuses ids.)
        _ = try sandbox.waitFor("the second paplay to be linked") { !$0.links(of: pulseName).isEmpty }
        usleep(300_000)
        graph = try Graph(sandbox)
        #expect(Set(graph.links(of: pulseName).map(\.peer)) == ["game"], "started again, it plays on \(graph.links(of: pulseName))")

        // Moved back, by process id.
        let secondPID = try #require(pid(sandbox, "--client-name=\(pulseName)"))
        let back = sandbox.crosspoint("move", "\(secondPID)", "--to", "interface")
        #expect(back.succeeded && back.stdout.contains("from game to interface"), "\(back.stdout) \(back.stderr)")
        _ = try sandbox.waitFor("paplay back on the interface") { Set($0.links(of: pulseName).map(\.peer)) == ["interface"] }

        // Given back to the default device: it follows the default when it changes, and started
        // again it plays on the default, not on the device it was last moved to.
        #expect(sandbox.shell("""
            pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=phones media.class=Audio/Sink \
              object.linger=true audio.position=[ FL FR ] priority.session=500 session.suspend-timeout-seconds=0 }' >/dev/null
            pw_wait_ports phones 2 input
            """).succeeded)
        let followed = sandbox.crosspoint("move", "\(secondPID)", "--to", "default")
        #expect(followed.succeeded && followed.stdout.contains("plays on the default device (interface now) and follows it"),
                "\(followed.stdout) \(followed.stderr)")
        #expect(try apps(sandbox)[pulseName]?["followsDefault"] as? Bool == true, "unpinned")
        #expect(sandbox.run(["pactl", "set-default-sink", "phones"]).succeeded)
        _ = try sandbox.waitFor("paplay on the new default device", describe: { "\($0.links(of: pulseName))" }) {
            Set($0.links(of: pulseName).map(\.peer)) == ["phones"]
        }
        paplay.stop()
        _ = try sandbox.waitFor("the second paplay to go") { $0.nodeID(pulseName) == nil }
        usleep(1_500_000)  // WirePlumber writes what it remembers a second after a change
        paplay = try sandbox.start(["paplay", "--client-name=\(pulseName)", wav])
        _ = try sandbox.waitFor("the third paplay to be linked") { !$0.links(of: pulseName).isEmpty }
        usleep(300_000)
        graph = try Graph(sandbox)
        #expect(Set(graph.links(of: pulseName).map(\.peer)) == ["phones"], "started again, it plays on \(graph.links(of: pulseName))")
    }

    /// Recording streams (OBS recording the stream mix, a call recording a microphone): listed
    /// as recording, from the default source; moved to the node's virtual source by name, where
    /// they record the node's outputs (heard); a sink is refused for them; given back to the
    /// default source.
    @Test func recordingStreamsAreListedAndMovedToSources() throws {
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        let (folder, wav, _) = try longFiles()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A microphone stand-in, the default source.
        #expect(sandbox.shell("""
            pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=mic media.class=Audio/Source/Virtual \
              object.linger=true audio.position=[ FL FR ] priority.session=2000 session.suspend-timeout-seconds=0 }' >/dev/null
            pw_wait_ports mic 2 output
            """).succeeded)
        _ = try sandbox.waitFor("mic to be the default source") { _ in
            sandbox.run(["pactl", "get-default-source"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mic"
        }
        let tag = "\(UInt32.random(in: 0..<UInt32.max))"
        let recorderName = "apps-rec-\(tag)", recording = folder + "/recorded.wav"
        let recorder = try sandbox.start(["pw-record", "-P", "{ node.name = \(recorderName) }", "--channels", "2", "--format", "f32", recording])
        defer { recorder.stop() }
        var graph = try sandbox.waitFor("the recorder on mic") { Set($0.links(of: recorderName).map(\.peer)) == ["mic"] }
        let recorderID = try #require(graph.nodeID(recorderName))
        var listed = sandbox.crosspoint("apps")
        let line = listed.stdout.split(separator: "\n").first { $0.hasPrefix("\(recorderID) ") } ?? ""
        #expect(line.contains(" pw-record ") && line.contains(" records ") && line.contains(" mic ") && line.hasSuffix(" default"), "\(listed.stdout)")
        var json = try apps(sandbox)
        #expect(json[recorderName]?["kind"] as? String == "recording" && json[recorderName]?["followsDefault"] as? Bool == true, "\(json)")

        // A sink is refused for a recording stream, naming why; nothing changes.
        let wrong = sandbox.crosspoint("move", recorderName, "--to", "game")
        #expect(wrong.status == 1 && wrong.stderr.contains("has no playback stream (it records: give a source)"), "\(wrong.stderr)")
        // Moved to the desk's virtual source: it records the desk's outputs.
        let moved = sandbox.crosspoint("move", recorderName, "--to", "stream-mix")
        #expect(moved.succeeded && moved.stdout.contains("from mic to stream-mix"), "\(moved.stdout) \(moved.stderr)")
        graph = try sandbox.waitFor("the recorder on stream-mix") { Set($0.links(of: recorderName).map(\.peer)) == ["stream-mix"] }
        listed = sandbox.crosspoint("apps")
        #expect(listed.stdout.contains("stream-mix (desk outputs stream_mix_FL, stream_mix_FR)") && listed.stdout.contains(" pinned: stream-mix"),
                "\(listed.stdout)")
        json = try apps(sandbox)
        let place = (json[recorderName]?["plays"] as? [[String: Any]])?.first
        #expect((place?["mixer"] as? [String: Any])?["node"] as? String == "desk", "\(json)")
        // Heard: a player on game reaches the desk, its outputs the stream mix, and the recorder.
        for (input, output) in [("game_FL", "stream_mix_FL"), ("game_FR", "stream_mix_FR")] {
            #expect(sandbox.crosspoint("set", "desk", input, output, "0dB").succeeded)
        }
        let player = try sandbox.start(["paplay", "--device=game", "--client-name=apps-into-game-\(tag)", wav])
        _ = try sandbox.waitFor("the player on game") { Set($0.links(of: "apps-into-game-\(tag)").map(\.peer)) == ["game"] }
        usleep(1_500_000)
        player.stop()
        recorder.stop()
        let recorded = try Wave.read(recording)
        let loud = recorded.first.map { $0.reduce(Float(0)) { max($0, abs($1)) } } ?? 0
        #expect(recorded.count == 2 && loud > 0.1, "the recorder heard the stream mix at peak \(loud)")
        // A pulse client's recording, moved and given back to the default source.
        let recorder2 = try sandbox.start(["parecord", "--client-name=\(recorderName)-2", "--channels=2", "/dev/null"])
        defer { recorder2.stop() }
        _ = try sandbox.waitFor("the second recorder linked") { !$0.links(of: "\(recorderName)-2").isEmpty }
        #expect(sandbox.crosspoint("move", "\(recorderName)-2", "--to", "stream-mix").succeeded)
        let back = sandbox.crosspoint("move", "\(recorderName)-2", "--to", "@DEFAULT_SOURCE@")
        #expect(back.succeeded && back.stdout.contains("records from the default device (mic now) and follows it"), "\(back.stdout) \(back.stderr)")
        _ = try sandbox.waitFor("the second recorder back on mic") { Set($0.links(of: "\(recorderName)-2").map(\.peer)) == ["mic"] }
    }

    /// The control surface's API (`crosspoint serve`, the same code): `GET /api/apps` is
    /// `crosspoint apps --json`, text for text; `POST /api/apps/move` moves as `crosspoint move`
    /// does (to game, and back to the default device, waiting for the relink), answering what
    /// moved in the command's words; a request the command refuses is refused with its message
    /// (404 for an application or a device that is not there, 400 otherwise) and changes
    /// nothing; without the token, 401.
    @Test func theSurfaceListsAndMovesAppsAsTheCommandDoes() throws {
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        let (folder, wav, _) = try longFiles()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let name = "apps-api-\(UInt32.random(in: 0..<UInt32.max))"
        let player = try sandbox.start(["paplay", "--client-name=\(name)", wav])
        defer { player.stop() }
        let graph = try sandbox.waitFor("the player on the interface") { Set($0.links(of: name).map(\.peer)) == ["interface"] }
        let id = try #require(graph.nodeID(name))

        let out = folder + "/serve"
        let server = try sandbox.start([crosspointExecutable, "serve", "--port", "0"], stdout: out + ".out", stderr: out + ".err")
        defer { server.stop() }
        let started = try Wait.forValue("serve to start", describe: { (try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "" }) {
            () throws -> ServeAnnouncement? in
            if let started = ServeAnnouncement((try? String(contentsOfFile: out + ".out", encoding: .utf8)) ?? "") { return started }
            guard server.isRunning else {
                throw SandboxError("serve did not start: \((try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "")")
            }
            return nil
        }
        let (port, token) = (started.port, started.token)
        /// The status and body of a request (a body is sent as JSON).
        func request(_ path: String, _ body: String? = nil, token given: String? = nil) -> (status: Int, body: String) {
            let sending = body.map { ["-H", "Content-Type: application/json", "-d", $0] } ?? []
            let result = sandbox.run(["curl", "-s", "--max-time", "15", "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(given ?? token)"]
                                     + sending + ["http://127.0.0.1:\(port)\(path)"], timeout: 20)
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
        }
        func error(_ body: String) -> String {
            ((try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any])?["error"] as? String ?? "(no error in \(body))"
        }

        let listed = request("/api/apps")
        #expect(listed.status == 200 && listed.body == sandbox.crosspoint("apps", "--json").stdout, "\(listed)")

        // Refused as the command refuses, in its words; nothing changes.
        let metadataBefore = sandbox.run(["pw-metadata", "-n", "default"]).stdout
        let refusals: [(app: String, to: String, status: Int)] = [
            ("firefox", "game", 404), (name, "nowhere", 404), (name, "stream-mix", 400), (name, "desk", 400), ("99999", "game", 404),
        ]
        for (app, to, status) in refusals {
            let answer = request("/api/apps/move", "{\"app\": \"\(app)\", \"to\": \"\(to)\"}")
            let command = sandbox.crosspoint("move", app, "--to", to).stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(answer.status == status && command.hasSuffix(error(answer.body)) && !error(answer.body).isEmpty,
                    "\(app) to \(to): \(answer), the command said \(command)")
        }
        #expect(request("/api/apps/move", "{\"app\": \"\(name)\"}").status == 400)
        #expect(request("/api/apps/move", "{\"app\": \"\(name)\", \"to\": \"game\", \"now\": true}").status == 400)
        #expect(request("/api/apps/move", "{\"app\": \"\(name)\", \"to\": \"game\"}", token: "wrong-token-wrong-token").status == 401)
        #expect(request("/api/apps", token: "wrong-token-wrong-token").status == 401)
        usleep(300_000)
        #expect(sandbox.run(["pw-metadata", "-n", "default"]).stdout == metadataBefore)
        #expect(Set(try Graph(sandbox).links(of: name).map(\.peer)) == ["interface"])

        // Moved to game by its stream id (a number), linked there when the answer comes.
        let moved = request("/api/apps/move", "{\"app\": \(id), \"to\": \"game\"}")
        let report = (try? JSONSerialization.jsonObject(with: Data(moved.body.utf8))) as? [String: Any]
        let said = report?["said"] as? [String]
        #expect(moved.status == 200 && said?.count == 1 && said?.first?.hasPrefix("moved \(name) (id \(id), pid ") == true
                && said?.first?.hasSuffix(" from interface to game") == true, "\(moved)")
        let entry = ((report?["report"] as? [String: Any])?["moved"] as? [[String: Any]])?.first
        #expect(entry?["id"] as? Int == Int(id) && entry?["from"] as? [String] == ["interface"] && entry?["to"] as? String == "game", "\(moved)")
        #expect(Set(try Graph(sandbox).links(of: name).map(\.peer)) == ["game"])
        #expect(try apps(sandbox)[name]?["pinnedTo"] as? String == "game")

        // Given back to the default device, following it.
        let back = request("/api/apps/move", "{\"app\": \"\(name)\", \"to\": \"default\"}")
        #expect(back.status == 200 && back.body.contains("plays on the default device (interface now) and follows it; it was on game")
                && back.body.contains("\"followsDefault\":true"), "\(back)")
        #expect(Set(try Graph(sandbox).links(of: name).map(\.peer)) == ["interface"])
        #expect(try apps(sandbox)[name]?["followsDefault"] as? Bool == true)
    }

    @Test func badApplicationsAndTargetsAreRefusedAndChangeNothing() throws {
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        let none = sandbox.crosspoint("apps")
        #expect(none.succeeded && none.stdout == "no application is playing or recording\n", "\(none.stdout) \(none.stderr)")
        #expect(sandbox.crosspoint("apps", "--json").stdout.replacingOccurrences(of: " ", with: "").contains("\"apps\":[]"))
        let nothing = sandbox.crosspoint("move", "firefox", "--to", "game")
        #expect(nothing.status == 1 && nothing.stderr.contains("unknown application 'firefox': no application is playing or recording"), "\(nothing.stderr)")

        let (folder, wav, _) = try longFiles()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let name = "apps-bad-\(UInt32.random(in: 0..<UInt32.max))"
        let player = try sandbox.start(["paplay", "--client-name=\(name)", wav])
        defer { player.stop() }
        let graph = try sandbox.waitFor("the player on the interface") { Set($0.links(of: name).map(\.peer)) == ["interface"] }
        let id = try #require(graph.nodeID(name))
        let metadataBefore = sandbox.run(["pw-metadata", "-n", "default"]).stdout

        let cases: [([String], String)] = [
            (["move", "firefox", "--to", "game"], "unknown application 'firefox'; the applications playing or recording are: \(name) (id \(id), pid "),
            (["move", name, "--to", "nowhere"], "unknown sink 'nowhere'; the sinks are: "),
            (["move", name, "--to", "stream-mix"], "has no recording stream (it plays: give a sink); stream-mix (a source) takes only recording streams"),
            (["move", name, "--to", "desk"], "is not a sink: it is a Crosspoint node"),
            (["move", "99999", "--to", "game"], "unknown application '99999'"),
        ]
        for (arguments, message) in cases {
            let result = sandbox.run([crosspointExecutable] + arguments)
            #expect(result.status == 1 && result.stderr.contains(message) && result.stdout.isEmpty, "\(arguments): \(result.stderr)")
        }
        let notDevice = sandbox.crosspoint("move", name, "--to", "desk-ot").stderr
        #expect(notDevice.contains("unknown sink 'desk-ot'; did you mean 'desk-out'?") && notDevice.contains("game"), "\(notDevice)")
        let missing = sandbox.crosspoint("move", name)
        #expect(missing.status == 64, "\(missing.stderr)")

        usleep(300_000)
        #expect(sandbox.run(["pw-metadata", "-n", "default"]).stdout == metadataBefore)
        #expect(Set(try Graph(sandbox).links(of: name).map(\.peer)) == ["interface"])
    }
}
