import Foundation
import Testing

/// Ducking through the real daemon, session manager and module (issue 31): the node `xp-duck`
/// of Fixtures/nodes.conf, whose rule (a module argument) lowers its input `music` by 15 dB
/// while its input `mic` is above -30 dBFS (attack 10 ms, hold 200 ms, release 500 ms); music
/// goes to output FL, the mic to FR. A steady tone plays on music and a burst on the mic, and
/// the recorded FL's level, window by window, is held against the rule's envelope.
@Suite(.serialized)
struct DuckingTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox.shared("test nodes") { try Sandbox.withTestNodes() } }

    static let rate = 48000.0
    /// The music: 480 Hz (100 samples a period), 0.2 peak; the level is read over windows of
    /// five periods, so that a steady tone reads exactly.
    static let window = 500
    static let musicRMS = 0.2 / 2.0.squareRoot()
    static let attack = 480, hold = 9600, release = 24000

    /// Mic silent for 0.3 s, a 1 kHz burst of 0.3 peak (-13.5 dBFS RMS) for 0.6 s, then silence;
    /// music all along (2.1 s), after the rig's lead-in. Music is the first channel: the rig's
    /// reference path carries it.
    static func signal() -> (TestSignal, micStart: Int, micEnd: Int) {
        let lead = TestSignal.leadIn, frames = lead + Int(2.1 * rate)
        let micStart = lead + Int(0.3 * rate), micEnd = micStart + Int(0.6 * rate)
        let mic = (0..<frames).map { n in
            n >= micStart && n < micEnd ? Float(0.3 * sin(2 * Double.pi * 1000 * Double(n - micStart) / rate)) : 0
        }
        let music = (0..<frames).map { n in n < lead ? 0 : Float(0.2 * sin(2 * Double.pi * 480 * Double(n - lead) / rate)) }
        return (TestSignal(samples: [music, mic]), micStart, micEnd)
    }

    /// The quantum the graph runs at while the test plays: forced (`clock.force-quantum`), as
    /// the players' and recorders' own latencies would otherwise choose it.
    static let quantum = 1024

    func forceQuantum(_ q: Int) {
        let set = sandbox.run(["pw-metadata", "-n", "settings", "0", "clock.force-quantum", "\(q)"])
        #expect(set.succeeded, "pw-metadata: \(set.stderr)")
    }

    /// The rule of the fixture, or one lowering a cross-point: music goes to FR too (beside the
    /// mic), and the rule lowers music in FL only; FR must carry music and mic untouched.
    @Test(arguments: [false, true])
    func musicGoesDownUnderTheMicWithinTheAttackHoldsAndComesBackAlongTheRelease(crosspoint: Bool) throws {
        let (signal, micStart, micEnd) = Self.signal()
        let q = Self.quantum
        forceQuantum(q)
        defer { forceQuantum(0) }
        let fixtureRule = "mic lowers=music depth=-15 threshold=-30 attack=10 hold=200 release=500"
        if crosspoint {
            let rule = "mic lowers=matrix.music.FL depth=-15 threshold=-30 attack=10 hold=200 release=500"
            let set = sandbox.crosspoint("param", "xp-duck", "matrix.music.FR", "1", "duck", rule)
            #expect(set.succeeded, "\(set.stderr)")
            _ = try sandbox.waitFor("the cross-point rule") { graph in
                (graph.params(of: "xp-duck")["duck"].map { "\($0)" } ?? "").contains("lowers=matrix.music.FL")
            }
        }
        defer {
            if crosspoint { _ = sandbox.crosspoint("param", "xp-duck", "matrix.music.FR", "0", "duck", fixtureRule) }
        }
        // FR: the mic, and with the cross-point rule the music beside it, at unity.
        let fr = crosspoint ? zip(signal.channels[0], signal.channels[1]).map { $0 + $1 } : signal.channels[1]
        var recorded: Recording?
        // The meter, as a person watches it: each rule's reduction rides along with the levels.
        let meter = try NodeLevelsTests.Meter(sandbox, ["meter", "xp-duck", "--json", "--interval", "50"])
        try sandbox.playJudgedByTheControl("xp-duck") { last in
            let recording = try sandbox.playThrough(node: "xp-duck", signal: signal, sinkPositions: ["FL", "FR"])
            // FR is the mic untouched, and the reference path is the rig's control.
            let check = try Comparison(recording: recording.outputs([1]), expected: [fr])
            try check.requireTheControl(last)
            check.expectMatch(tolerance: 1e-4, crosspoint ? "music and the mic on FR, untouched" : "the mic on FR")
            recorded = recording
        }
        // The node adds no delay (FR matched the mic at the reference path's lag): FL is read at it.
        guard let recorded, let lag = try Comparison(recording: recorded.outputs([1]), expected: [fr]).referenceLag else {
            Issue.record("no recording of the mic")
            return
        }
        let fl = recorded.outputs[0]
        // FL's gain in dB over the window starting at `n` (in the signal's samples).
        func gain(at n: Int) -> Double {
            let from = n + lag
            guard from >= 0, from + Self.window <= fl.count else { return .nan }
            var sum = 0.0
            for k in from..<(from + Self.window) { sum += Double(fl[k]) * Double(fl[k]) }
            return 20 * log10((sum / Double(Self.window)).squareRoot() / Self.musicRMS)
        }
        let starts = stride(from: TestSignal.leadIn + 2400, to: signal.channels[0].count - 4800, by: 100).map { $0 }
        let gains = starts.map { (start: $0, db: gain(at: $0)) }
        let described = { gains.filter { $0.start % 2400 == 0 }.map { "\(($0.start - micStart) / 48)ms:\(String(format: "%.1f", $0.db))" }.joined(separator: " ") }

        // Before the mic's block: the music at unity. (The reduction glides over the block in which
        // the trigger rose, so it may begin up to a quantum before the mic's first sample.)
        for g in gains where g.start + Self.window <= micStart - q { #expect(abs(g.db) < 0.1, "before the mic, \(g): \(described())") }
        // The depth within the attack plus one quantum after the mic starts (a window later).
        let reached = gains.first { $0.start >= micStart && abs($0.db + 15) <= 0.5 }
        let limit = micStart + Self.attack + q
        #expect(reached.map { $0.start <= limit } == true,
                "the depth at \(reached.map { "\(($0.start - micStart) / 48) ms" } ?? "never"), at most \((limit - micStart) / 48) ms (quantum \(q)): \(described())")
        // Held at the depth while the mic plays and for the hold after.
        for g in gains where g.start >= limit && g.start + Self.window <= micEnd + Self.hold {
            #expect(abs(g.db + 15) <= 0.5, "held, \((g.start - micStart) / 48) ms: \(g.db) dB: \(described())")
        }
        // The release: a straight line in dB from -15 to 0 over 500 ms, starting when the block
        // after the mic's last one ends and the hold has passed (within a quantum of micEnd + hold).
        let releaseWindows = gains.filter { $0.start >= micEnd + Self.hold + q && $0.start + Self.window <= micEnd + Self.hold + Self.release }
        func worst(startingAt s: Int) -> Double {
            releaseWindows.map { g in
                let middle = Double(g.start + Self.window / 2 - s)
                let ideal = min(0, -15 + 15 * middle / Double(Self.release))
                return abs(g.db - ideal)
            }.max() ?? .infinity
        }
        let best = stride(from: micEnd + Self.hold, through: micEnd + Self.hold + q, by: 16).map { (s: $0, error: worst(startingAt: $0)) }
            .min { $0.error < $1.error }
        #expect(!releaseWindows.isEmpty && (best?.error ?? .infinity) <= 0.5,
                "the release against the rule's line: \(best.map { "at best \($0.error) dB, starting \(($0.s - micEnd) / 48) ms after the mic" } ?? "-"): \(described())")
        print("xp-duck\(crosspoint ? " (a cross-point)" : ""): the depth \(reached.map { "\(($0.start - micStart) / 48) ms" } ?? "never") after the mic (at most \((limit - micStart) / 48)); the release within \(best.map { String(format: "%.2f", $0.error) } ?? "-") dB of the rule's line")
        // The meter saw the rule at its depth, and at rest.
        let reductions = meter.readings.compactMap { ($0["duck"] as? [[String: Any]])?.first?["reduction_db"] as? Double }
        #expect(reductions.contains { abs($0 + 15) <= 0.1 } && reductions.contains(0), "the meter's reductions: \(reductions)")
        // Back at unity once released.
        for g in gains where g.start >= micEnd + Self.hold + Self.release + q {
            #expect(abs(g.db) < 0.1, "released, \((g.start - micStart) / 48) ms: \(g.db) dB: \(described())")
        }
        // No click: no step between samples steeper than the tone's own, plus what the glide adds.
        let toneSlope = Float(2 * Double.pi * 480 / Self.rate * 0.2)
        let from = TestSignal.leadIn + lag + 2400, to = min(fl.count, signal.channels[0].count + lag - 4800)
        var steepest: Float = 0
        for n in (from + 1)..<to { steepest = max(steepest, abs(fl[n] - fl[n - 1])) }
        #expect(steepest <= toneSlope * 1.02 + 2e-4, "a step of \(steepest), the tone's steepest \(toneSlope)")
    }

    @Test func rulesAreSetLiveAndBadOnesAreRefusedByNameWithTheNodeAsItWas() throws {
        let graph = try Graph(sandbox)
        let before = graph.params(of: "xp-duck")["duck"].map { "\($0)" } ?? ""
        #expect(before.contains("mic lowers=music depth=-15"), "the module argument's rule in Props: \(before)")
        let id = try #require(graph.nodeID("xp-duck"))
        for bad in ["mic lowers=mic", "mic lowers=guitar", "mic lowers=music depth=-99"] {
            let set = sandbox.run(["pw-cli", "set-param", "\(id)", "Props", "{ params = [ \"duck\" [ \"\(bad)\" ] ] }"])
            #expect(set.succeeded, "pw-cli: \(set.stderr)")
        }
        // Refused: the rule the node had stays; a good one after them is taken.
        let good = "mic lowers=music depth=-12 release=1s"
        let set = sandbox.run(["pw-cli", "set-param", "\(id)", "Props", "{ params = [ \"duck\" [ \"\(good)\" ] ] }"])
        #expect(set.succeeded, "pw-cli: \(set.stderr)")
        _ = try sandbox.waitFor("the new rule in Props") { graph in
            (graph.params(of: "xp-duck")["duck"].map { "\($0)" } ?? "").contains("depth=-12")
        }
        let after = "\(try Graph(sandbox).params(of: "xp-duck")["duck"] ?? "")"
        #expect(after.contains("release=1000"), "\(after)")
        // The rule's own keys, as a MIDI knob or an OSC slider sets them: by trigger and by
        // number; Props list them beside the rule, PropInfo describes them.
        let keys = sandbox.run(["pw-cli", "set-param", "\(id)", "Props", #"{ params = [ "duck.depth.mic" -20.0 "duck.on.0" false ] }"#])
        #expect(keys.succeeded, "pw-cli: \(keys.stderr)")
        let props = try sandbox.waitFor("the rule's keys in Props") { graph in
            let p = graph.params(of: "xp-duck")
            return sandbox.float(p["duck.depth.0"]) == -20 && p["duck.on.0"] as? Bool == false
        }.params(of: "xp-duck")
        #expect("\(props["duck"] ?? "")".contains("depth=-20 ") && "\(props["duck"] ?? "")".contains(" off"), "\(props["duck"] ?? "")")
        let info = sandbox.run(["pw-cli", "enum-params", "\(id)", "PropInfo"])
        #expect(info.stdout.contains("\"duck.depth.0\"") && info.stdout.contains("\"duck.on.0\""), "PropInfo: \(info.stdout.suffix(600))")
        let far = sandbox.run(["pw-cli", "set-param", "\(id)", "Props", #"{ params = [ "duck.depth.mic" -75.0 "duck.on.3" true ] }"#])
        #expect(far.succeeded)
        // Back as the other test expects it.
        let back = sandbox.run(["pw-cli", "set-param", "\(id)", "Props",
                                "{ params = [ \"duck\" [ \"mic lowers=music depth=-15 threshold=-30 attack=10 hold=200 release=500\" ] ] }"])
        #expect(back.succeeded)
        _ = try sandbox.waitFor("the rule back") { graph in
            (graph.params(of: "xp-duck")["duck"].map { "\($0)" } ?? "").contains("depth=-15")
        }
        // The refusals are in the daemon's log, each naming what was wrong.
        let log = sandbox.daemonLog
        for reason in ["lowers its own trigger mic", "guitar", "depth=-99 is outside -60 to 0 dB", "duck.depth.0", "there is no rule 3"] {
            #expect(log.contains(reason), "the log names '\(reason)'")
        }
    }

    @Test func theDuckCommandAddsListsSwitchesAndRemovesRules() throws {
        let rule = "mic lowers=music depth=-15 threshold=-30 attack=10 hold=200 release=500"
        defer { _ = sandbox.crosspoint("param", "xp-duck", "duck", rule) }
        func rules() throws -> String { "\(try Graph(sandbox).params(of: "xp-duck")["duck"] ?? "")" }

        let add = sandbox.crosspoint("duck", "add", "xp-duck", "mic", "--lowers", "out:FL", "--depth", "-6dB", "--release", "1s", "--detect", "peak")
        #expect(add.succeeded, "\(add.stderr)")
        _ = try sandbox.waitFor("the second rule") { _ in (try? rules())?.contains("lowers=out:FL") == true }
        let list = sandbox.crosspoint("duck", "list", "xp-duck")
        #expect(list.stdout.contains("0: in_mic lowers in_music by -15 dB above -30 dBFS rms"), "\(list.stdout)")
        #expect(list.stdout.contains("1: in_mic lowers out_FL by -6 dB above -40 dBFS peak; attack 20 ms, hold 300 ms, release 1000 ms"), "\(list.stdout)")
        let json = sandbox.crosspoint("duck", "list", "xp-duck", "--json")
        let listing = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let listed = listing?["rules"] as? [[String: Any]] ?? []
        #expect(listed.count == 2 && listed.last?["outputs"] as? [String] == ["FL"] && listed.last?["depth"] as? Double == -6, "\(json.stdout)")

        let shown = sandbox.crosspoint("show", "xp-duck").stdout
        #expect(shown.contains("ducking 0: mic lowers=music depth=-15 threshold=-30 attack=10 hold=200 release=500 detect=rms")
                && shown.contains("ducking 1: mic lowers=out:FL depth=-6"), "\(shown)")
        let off = sandbox.crosspoint("duck", "off", "xp-duck", "1")
        #expect(off.succeeded, "\(off.stderr)")
        _ = try sandbox.waitFor("rule 1 off") { _ in (try? rules())?.contains("detect=peak off") == true }
        // Bad input: refused by name, the rules as they were.
        for (arguments, says) in [(["add", "xp-duck", "mic", "--lowers", "mic"], "lowers its own trigger mic"),
                                  (["add", "xp-duck", "mic", "--lowers", "guitar"], "guitar"),
                                  (["add", "xp-duck", "mic", "--lowers", "music", "--attack", "9s"], "attack=9s is outside 0 to 5000 ms"),
                                  (["remove", "xp-duck", "7"], "there is no rule 7"),
                                  (["off", "xp-duck", "music"], "no rule is triggered by music")] {
            let refused = sandbox.run([crosspointExecutable, "duck"] + arguments, timeout: 30)
            #expect(!refused.succeeded && refused.stderr.contains(says), "\(arguments): \(refused.stderr)")
        }
        #expect(try rules().contains("detect=peak off"))
        let remove = sandbox.crosspoint("duck", "remove", "xp-duck", "1")
        #expect(remove.succeeded, "\(remove.stderr)")
        _ = try sandbox.waitFor("one rule again") { _ in (try? rules()).map { !$0.contains("out:FL") } == true }
        #expect(try rules().contains("mic lowers=music depth=-15"))
    }
}
