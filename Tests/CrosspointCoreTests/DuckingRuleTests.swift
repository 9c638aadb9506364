// Ducking rules (issue 31): their text, their checks against the node's channels, and what the
// renderer does with them: the trigger's level lowering other inputs or outputs by the depth
// within the attack, holding, releasing, the deepest rule winning, a plan change keeping a duck,
// and no allocation on the render thread.

import CAllocationCounter
import CrosspointCore
import CrosspointTestSupport
import Foundation
import Testing

@Suite("Ducking rules")
struct DuckingRuleTests {
    /// Inputs mic, music_FL, music_FR; outputs FL, FR: music on FL and FR, mic on both.
    static func desk() throws -> Mixer {
        var mixer = try Mixer(inputs: 3, outputs: 2, inputChannels: ["mic", "music_FL", "music_FR"], outputChannels: ["FL", "FR"])
        try mixer.setMatrix(rows: [[0, 0], [1, 0], [0, 1]])
        return mixer
    }

    @Test func aRuleReadsItsOptionsAndIsWrittenBackWhole() throws {
        let rule = try DuckingRule(text: "mic,1 lowers=music_FL,out:FR depth=-15dB threshold=-50 knee=6 attack=5ms hold=0.5s release=2s detect=peak off")
        #expect(rule.triggers == ["mic", "1"] && rule.inputs == ["music_FL"] && rule.outputs == ["FR"])
        #expect(rule.depth == -15 && rule.threshold == -50 && rule.knee == 6)
        #expect(rule.attack == 5 && rule.hold == 500 && rule.release == 2000 && rule.detect == .peak && !rule.enabled)
        #expect(try DuckingRule(text: rule.text) == rule)
        let plain = try DuckingRule(text: "mic lowers=music_FL")
        #expect(plain.text == "mic lowers=music_FL depth=-12 threshold=-40 attack=20 hold=300 release=600 detect=rms")
    }

    @Test func theTableCarriesRulesByChannelName() throws {
        var mixer = try Self.desk()
        try mixer.set(Parameter(.ducking), to: .names(["0 lowers=1,2,out:1 depth=-20"]))
        #expect(mixer.ducking.map(\.text) == ["mic lowers=music_FL,music_FR,out:FR depth=-20 threshold=-40 attack=20 hold=300 release=600 detect=rms"])
        #expect(mixer.value(of: Parameter(.ducking)) == .names(mixer.ducking.map(\.text)))
        try mixer.set(Parameter(.ducking), to: .ints([]))
        #expect(mixer.ducking.isEmpty)
    }

    @Test(arguments: [
        ("mic lowers=mic,music_FL", "lowers its own trigger mic"),
        ("mic lowers=guitar", "guitar"),
        ("mic lowers=out:SUB", "SUB"),
        ("mic lowers=music_FL depth=-70", "depth=-70 is outside -60 to 0 dB"),
        ("mic lowers=music_FL depth=3", "outside"),
        ("mic lowers=music_FL attack=6s", "attack=6s is outside 0 to 5000 ms"),
        ("mic lowers=music_FL threshold=loud", "threshold=loud is not a number"),
        ("mic lowers=music_FL release=nan", "not a number"),
        ("mic lowers=music_FL gain=2", "'gain' in"),
        ("mic depth=-10", "lowers nothing"),
        ("lowers=music_FL", "names no trigger"),
        ("mic,mic lowers=music_FL", "names a trigger twice"),
        ("mic lowers=music_FL,,music_FR", "empty channel to lower"),
        ("mic lowers=out:", "names no output"),
        ("mic lowers=music_FL detect=loudness", "rms or peak"),
        ("mic,0 lowers=music_FL", "names a trigger twice"),
        ("mic lowers=music_FL lowers=music_FR", "lowers= is given twice"),
        ("mic lowers=1,music_FL", "names a input to lower twice"),
        ("mic lowers=music_FL depth=-3 depth=-6", "depth= is given twice"),
        ("mic lowers=music_FL depth=1e999", "depth=1e999 is outside -60 to 0 dB"),
        ("mic lowers=music_FL depth=\u{301}-5", "is not a number"),
        ("mic lowers=out:\u{301}FL", "\u{301}FL"),
    ])
    func badRulesAreRefusedByNameAndChangeNothing(text: String, says: String) throws {
        var mixer = try Self.desk()
        try mixer.set(Parameter(.ducking), to: .names(["mic lowers=music_FR"]))
        let before = mixer
        do {
            try mixer.set(Parameter(.ducking), to: .names(["mic lowers=music_FL", text]))
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.description.contains(says), "\(error.description)")
            #expect(error.description.contains("duck"), "\(error.description)")
        }
        #expect(mixer == before)
    }

    @Test func tabsSeparateWordsToo() throws {
        #expect(try DuckingRule(text: "mic\tlowers=music_FL\tdepth=-6").depth == -6)
    }

    @Test func aDepthMadeZeroMidDuckStillComesBack() throws {
        let out = try Self.render(rules: ["mic lowers=music_FL depth=-15 attack=0 hold=0 release=100"], micSeconds: 1, seconds: 1) { rig, block in
            if block == 100 { rig.update { try $0.setDucking(["mic lowers=music_FL depth=0 attack=0 hold=0 release=100"]) } }
        }
        #expect(abs(out[99 * 64] - Float(0.5 * pow(10, -15.0 / 20))) < 1e-5)
        #expect(out[100 * 64 + 4800 + 128] == 0.5, "back at unity 100 ms after: \(out[100 * 64 + 4800 + 128])")
    }

    @Test func aRemovedRulesChannelsComeBackAt100DecibelsASecond() throws {
        let ducked = Float(0.5 * pow(10, -15.0 / 20))
        let out = try Self.render(rules: ["mic lowers=music_FL depth=-15 attack=0 hold=10000"], micSeconds: 1, seconds: 1, block: 32) { rig, block in
            if block == 200 { rig.update { try $0.setDucking([]) } }
        }
        #expect(abs(out[200 * 32 - 1] - ducked) < 1e-5)
        // 15 dB at 100 dB a second: 150 ms (7200 frames); half-way (-7.5 dB) at 75 ms.
        let halfway = 20 * log10(Double(out[200 * 32 + 3600]) / 0.5)
        #expect(abs(halfway + 7.5) < 0.2, "half-way: \(halfway) dB")
        #expect(out[200 * 32 + 7200 + 64] == 0.5)
    }

    @Test func aLoweredChannelRenamedMidDuckComesBackRatherThanJumping() throws {
        // music_FL is renamed while ducked: the rule (kept by name) no longer finds it, and the
        // channel comes back at 100 dB a second.
        let out = try Self.render(rules: ["mic lowers=music_FL depth=-15 attack=0 hold=10000"], micSeconds: 1, seconds: 1) { rig, block in
            if block == 100 { rig.update { try $0.setChannels(inputs: ["mic", "song_FL", "music_FR"]) } }
        }
        let after = Array(out[(99 * 64)...])
        let steps = zip(after, after.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        #expect(steps < 0.0002, "a step of \(steps) after the rename")
        #expect(out[100 * 64 + 7200 + 64] == 0.5)
    }

    @Test func aRuleWhoseChannelsAreGoneKeepsItsPlaceForTheMeter() throws {
        // Rule 0's trigger is renamed away; rule 1 still ducks, and its reduction is read as rule 1's.
        var mixer = try Self.desk()
        try mixer.setDucking(["mic lowers=music_FL", "music_FR lowers=music_FL depth=-9 attack=0"])
        try mixer.setChannels(inputs: ["voice", "music_FL", "music_FR"])
        let engine = MatrixMixer(mixer)
        var renderer = engine.renderer
        let bench = Bench(inputs: 3, outputs: 2, capacity: 256)
        bench.fillInput(2, with: 0.5)
        for _ in 0..<4 { bench.render(&renderer, frames: 256) }
        #expect(engine.duckingReductions == [0, -9])
    }

    @Test func seventeenRulesAreTooMany() throws {
        var mixer = try Self.desk()
        #expect(throws: CrosspointError.self) {
            try mixer.set(Parameter(.ducking), to: .names(Array(repeating: "mic lowers=music_FL", count: 17)))
        }
    }

    /// A rig of the desk: the mic a 1 kHz sine at `micLevel` (peak) for `micSeconds`, then
    /// silence; music a steady 0.5 on both inputs. Returns output FL (music_FL), block by block.
    static func render(rules: [String], micLevel: Float = 0.5, micSeconds: Double, seconds: Double, block: Int = 64,
                       output: Int = 0, matrix: [[Double]]? = nil, change: ((Rig, Int) -> Void)? = nil) throws -> [Float] {
        var mixer = try desk()
        if let matrix { try mixer.setMatrix(rows: matrix) }
        try mixer.setDucking(rules)
        let frames = Int(seconds * 48000)
        let rig = Rig(mixer, capacity: frames)
        let micFrames = Int(micSeconds * 48000)
        for n in 0..<frames {
            rig.bench.input(0)[n] = n < micFrames ? micLevel * Float(sin(2 * Double.pi * 1000 * Double(n) / 48000)) : 0
        }
        rig.bench.fillInput(1, with: 0.5)
        rig.bench.fillInput(2, with: 0.5)
        // Block by block over the bench's one continuous stretch, `change` after each block.
        var done = 0, blocks = 0
        while done < frames {
            let count = min(block, frames - done)
            let ins = (0..<3).map { UnsafePointer(rig.bench.input($0) + done) as UnsafePointer<Float>? }
            let outs = (0..<2).map { rig.bench.output($0) + done as UnsafeMutablePointer<Float>? }
            ins.withUnsafeBufferPointer { i in outs.withUnsafeBufferPointer { o in rig.renderer.render(frameCount: count, inputs: i, outputs: o) } }
            done += count
            blocks += 1
            change?(rig, blocks)
        }
        return rig.bench.samples(output: output, frames: frames)
    }

    @Test func theTriggerLowersWithinTheAttackHoldsAndReleases() throws {
        // Mic at -9 dBFS RMS (peak 0.5) for 0.5 s; -15 dB, attack 10 ms, hold 200 ms, release 500 ms.
        let out = try Self.render(rules: ["mic lowers=music_FL depth=-15 threshold=-30 attack=10 hold=200 release=500"],
                                  micSeconds: 0.5, seconds: 1.5)
        let ducked = Float(0.5 * pow(10, -15.0 / 20))
        // Within the attack plus one block, the depth, exactly.
        let arrived = out.firstIndex { abs($0 - ducked) < 1e-5 }
        #expect(arrived.map { $0 <= 480 + 64 } == true, "reached \(ducked) at frame \(arrived.map { "\($0)" } ?? "never")")
        // Never below the depth, never a step larger than the attack's slope allows per sample.
        #expect(out.allSatisfy { $0 >= ducked - 1e-6 && $0 <= 0.5 + 1e-6 })
        let steps = zip(out, out.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        // The steepest glide: the first block of the attack (15 dB over 480 frames, a block 2 dB).
        let firstBlock = 1 - Float(pow(10, -15.0 * 64 / 480 / 20))
        #expect(steps <= 0.5 * firstBlock / 64 * 1.01, "a step of \(steps)")
        // Holding: still at the depth 150 ms after the mic stopped (frame 24000 + 7200).
        #expect(abs(out[24000 + 7200] - ducked) < 1e-5)
        // Released: back at 0.5 by 0.5 + 0.2 + 0.5 s plus a block, and in a straight line in dB between.
        #expect(abs(out[Int(1.2 * 48000) + 128] - 0.5) < 1e-6)
        let midway = Int((0.5 + 0.2 + 0.25) * 48000)
        let midwayDecibels = 20 * log10(Double(out[midway]) / 0.5)
        #expect(abs(midwayDecibels + 7.5) < 0.5, "half-way through the release: \(midwayDecibels) dB")
    }

    @Test func aCrosspointIsLoweredInItsOutputAloneAndComesBack() throws {
        // music_FL goes to FL and FR, music_FR to FR; the rule lowers music_FL in FL only.
        let matrix: [[Double]] = [[0, 0], [1, 1], [0, 1]]
        var rules = ["mic lowers=matrix.music_FL.FL depth=-15 attack=0 hold=10000"]
        func run(output: Int) throws -> [Float] {
            rules = ["mic lowers=matrix.music_FL.FL depth=-15 attack=0 hold=10000"]
            return try Self.render(rules: rules, micSeconds: 0.2, seconds: 0.6, output: output, matrix: matrix) { rig, block in
                if block == 300 { rig.update { try $0.setDucking([]) } }  // the rule goes
            }
        }
        let fl = try run(output: 0), fr = try run(output: 1)
        let ducked = Float(0.5 * pow(10, -15.0 / 20))
        #expect(abs(fl[10000] - ducked) < 1e-6, "\(fl[10000]) for \(ducked)")
        #expect(abs(fl[299 * 64] - ducked) < 1e-6, "held")
        // FR carries music_FL at unity all along: not touched, bit for bit.
        #expect(fr.allSatisfy { $0 == 1 }, "FR \(fr.min() ?? 0) to \(fr.max() ?? 0)")
        // Back at 100 dB a second after the rule went, without a step.
        #expect(fl[300 * 64 + 7200 + 64] == 0.5)
        let steps = zip(fl, fl.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        #expect(steps < 0.01, "a step of \(steps)")
        // With the input lowered too (another rule), the two multiply: each is its own thing.
        let both = try Self.render(rules: ["mic lowers=matrix.music_FL.FL depth=-6 attack=0", "mic lowers=music_FL depth=-6 attack=0"],
                                   micSeconds: 0.3, seconds: 0.3, matrix: matrix)
        #expect(abs(both[10000] - Float(0.5 * pow(10, -12.0 / 20))) < 1e-5, "\(both[10000])")
    }

    @Test func crosspointsAreWrittenByTheirKeysAndResolvedByName() throws {
        var mixer = try Self.desk()
        try mixer.setDucking(["0 lowers=matrix.1.0,matrix.music_FR.FR,out:1 depth=-9"])
        let rule = try #require(mixer.ducking.first)
        #expect(rule.crosspoints == [.init(input: "music_FL", output: "FL"), .init(input: "music_FR", output: "FR")])
        #expect(rule.text.hasPrefix("mic lowers=out:FR,matrix.music_FL.FL,matrix.music_FR.FR depth=-9"), "\(rule.text)")
        #expect(try DuckingRule(text: rule.text) == rule)
        #expect(rule.indices(in: mixer).crosspoints == [.init(input: 1, output: 0), .init(input: 2, output: 1)])
        for (text, says) in [("mic lowers=matrix.music_FL", "is not a cross-point: matrix.IN.OUT"),
                             ("mic lowers=matrix.music_FL.FL.FR", "is not a cross-point"),
                             ("mic lowers=matrix..FL", "is not a cross-point"),
                             ("mic lowers=matrix.mic.FL", "lowers its own trigger matrix.mic.FL"),
                             ("mic lowers=matrix.guitar.FL", "guitar"),
                             ("mic lowers=matrix.music_FL.SUB", "SUB"),
                             ("mic lowers=matrix.music_FL.FL,matrix.1.0", "names a cross-point twice")] {
            let before = mixer
            do {
                try mixer.setDucking([text])
                Issue.record("'\(text)' was accepted")
            } catch {
                #expect(error.description.contains(says) && error.description.contains("duck"), "\(error.description)")
            }
            #expect(mixer == before)
        }
    }

    @Test func aRulesDepthAndSwitchAreKeysByNumberOrTrigger() throws {
        var mixer = try Self.desk()
        try mixer.setDucking(["mic lowers=music_FL depth=-15", "music_FR lowers=mic", "music_FR lowers=music_FL"])
        // By number, by trigger (by name or index), read back, the rule's text following.
        try mixer.set(try Parameter(key: "duck.depth.mic", in: mixer), to: .number(-20))
        try mixer.set(try Parameter(key: "duck.on.0", in: mixer), to: .bool(false))
        #expect(mixer.ducking[0].text == "mic lowers=music_FL depth=-20 threshold=-40 attack=20 hold=300 release=600 detect=rms off")
        try mixer.set(try Parameter(key: "duck.on.2", in: mixer), to: .number(0))
        #expect(try Parameter(key: "duck.depth.0", in: mixer) == Parameter(key: "duck.depth.mic", in: mixer))
        #expect(mixer.value(of: Parameter(.duckDepth, rule: 0)) == .number(-20) && mixer.value(of: Parameter(.duckOn, rule: 1)) == .bool(true))
        #expect(mixer.value(of: Parameter(.duckOn, rule: 2)) == .bool(false))
        // Named as completion offers them: the trigger where it is one rule's alone.
        #expect(Parameter.all(of: .duckDepth, for: mixer).map { $0.name(in: mixer) } == ["duck.depth.mic", "duck.depth.1", "duck.depth.2"])
        #expect(Parameter(.duckOn, rule: 1).exists(in: mixer) && !Parameter(.duckOn, rule: 3).exists(in: mixer))
        // Refused by name, nothing changed.
        let before = mixer
        for (key, value, says) in [("duck.depth.3", ParameterValue.number(-6), "there is no rule 3 (the rules are numbered 0 to 2)"),
                                   ("duck.depth.music_FR", .number(-6), "2 rules are triggered by music_FR: name one by its number (1, 2)"),
                                   ("duck.on.guitar", .bool(true), "no rule is triggered by 'guitar' (the triggers are mic; music_FR; music_FR)"),
                                   ("duck.depth.0", .number(-61), "-61"), ("duck.depth.0", .number(1), "outside"),
                                   ("duck.depth.0", .number(.nan), "duck.depth.0"), ("duck.on.0", .number(0.5), "true or false")] {
            do {
                try mixer.set(try Parameter(key: key, in: mixer), to: value)
                Issue.record("\(key) \(value) was accepted")
            } catch {
                #expect(error.description.contains(says), "\(key): \(error.description)")
            }
        }
        #expect(mixer == before)
        var none = try Self.desk()
        #expect(throws: CrosspointError.self) { try none.set(Parameter(.duckDepth, rule: 0), to: .number(-6)) }
        #expect(Parameter.all(of: .duckOn, for: none).isEmpty)
    }

    @Test func aRuleSwitchedOffMidDuckComesBackAlongItsReleaseWithoutHolding() throws {
        let ducked = Float(0.5 * pow(10, -15.0 / 20))
        let out = try Self.render(rules: ["mic lowers=music_FL depth=-15 attack=0 hold=10000 release=300"], micSeconds: 1, seconds: 1) { rig, block in
            if block == 200 { rig.update { try $0.setDuckingEnabled(0, false) } }
        }
        #expect(abs(out[199 * 64] - ducked) < 1e-5)
        // Back at 0.5 within the release (300 ms) and a block, though the mic still plays.
        #expect(out[200 * 64 + 14400 + 64] == 0.5, "\(out[200 * 64 + 14400 + 64])")
        let steps = zip(out, out.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        #expect(steps < 0.01, "a step of \(steps)")
    }

    @Test func aMIDIKnobTurnsADepthAndANoteSwitchesARule() throws {
        var mixer = try Self.desk()
        try mixer.setDucking(["mic lowers=music_FL depth=-15"])
        try mixer.setMIDIMappings(["cc 1 20 duck.depth.mic nopickup", "note 1 60 duck.on.mic"])
        var mapper = MIDIMapper(mixer.midi.mappings)
        func play(_ message: MIDIMessage) throws {
            for change in mapper.changes(for: MIDIRecord(message: message, presses: 1), in: mixer) { try mixer.set(change.parameter, to: change.value) }
        }
        try play(.controlChange(channel: 0, controller: 20, value: 0))
        #expect(mixer.ducking[0].depth == -60, "the knob's bottom: the range's")
        try play(.controlChange(channel: 0, controller: 20, value: 127))
        #expect(mixer.ducking[0].depth == 0)
        try play(.noteOn(channel: 0, note: 60, velocity: 100))
        #expect(!mixer.ducking[0].enabled, "toggled off")
        // A mapping to a rule the node does not have is refused by name.
        #expect(throws: CrosspointError.self) { try mixer.setMIDIMappings(["cc 1 21 duck.depth.music_FL"]) }
    }

    @Test func aQuietTriggerLowersNothingAndAnOffRuleNothingEither() throws {
        let quiet = try Self.render(rules: ["mic lowers=music_FL threshold=-10"], micLevel: 0.1, micSeconds: 0.3, seconds: 0.4)
        #expect(quiet.allSatisfy { $0 == 0.5 })
        let off = try Self.render(rules: ["mic lowers=music_FL off"], micSeconds: 0.3, seconds: 0.4)
        #expect(off.allSatisfy { $0 == 0.5 })
    }

    @Test func theDeepestRuleWinsNotTheSum() throws {
        let out = try Self.render(rules: ["mic lowers=music_FL depth=-6 attack=0", "mic lowers=out:FL depth=-10 attack=0",
                                          "mic lowers=music_FL depth=-10 attack=0"],
                                  micSeconds: 0.3, seconds: 0.3)
        // Input music_FL at -10 (the deeper of its two rules) and output FL at -10: -20 in all.
        let expected = Float(0.5 * pow(10, -20.0 / 20))
        #expect(abs(out[10000] - expected) < 1e-5, "\(out[10000]) for \(expected)")
    }

    @Test func aChangeElsewhereKeepsTheDuckAndARemovedRuleComesBack() throws {
        let ducked = Float(0.5 * pow(10, -15.0 / 20))
        var rules = ["mic lowers=music_FL depth=-15 attack=0 hold=10000"]
        let out = try Self.render(rules: rules, micSeconds: 0.2, seconds: 0.8) { rig, block in
            if block == 200 {  // mid-hold: a cross-point elsewhere changes
                rig.update { try $0.setCrosspoint(input: 0, output: 1, gain: 0.3) }
            } else if block == 300 {  // the rule goes
                rules = []
                rig.update { try $0.setDucking(rules) }
            }
        }
        #expect(abs(out[200 * 64 + 640] - ducked) < 1e-5, "kept across the change: \(out[200 * 64 + 640])")
        #expect(abs(out[299 * 64] - ducked) < 1e-5)
        // Back at 100 dB a second: 15 dB in 150 ms (7200 frames).
        #expect(out[300 * 64 + 7200 + 64] == 0.5, "back after 150 ms")
        let steps = zip(out, out.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        #expect(steps < 0.01, "a step of \(steps)")
    }

    @Test func aDepthChangedMidDuckMovesOnFromWhereItIs() throws {
        // Ducked at -15 dB (attack 0), then the depth becomes -12: after the hold (300 ms), the gain
        // rises to -12 dB at the release's pace and never passes it (no return to unity and back).
        let at15 = Float(0.5 * pow(10, -15.0 / 20)), at12 = Float(0.5 * pow(10, -12.0 / 20))
        let out = try Self.render(rules: ["mic lowers=music_FL depth=-15 attack=0 release=300"], micSeconds: 1, seconds: 1) { rig, block in
            if block == 200 { rig.update { try $0.setDucking(["mic lowers=music_FL depth=-12 attack=0 release=300"]) } }
        }
        #expect(abs(out[199 * 64] - at15) < 1e-5)
        let after = out[(200 * 64)...]
        #expect(after.allSatisfy { $0 >= at15 - 1e-6 && $0 <= at12 + 1e-6 }, "between -15 and -12 dB: \(after.min() ?? 0) to \(after.max() ?? 0)")
        #expect(abs(out[400 * 64] - at15) < 1e-5, "held at -15 dB: \(out[400 * 64])")
        #expect(abs(out[600 * 64] - at12) < 1e-5, "at -12 dB: \(out[600 * 64])")
    }

    @Test func renderingRulesAllocatesNothing() throws {
        try warmUpRenderPaths()
        var mixer = try Self.desk()
        try mixer.setDucking(["mic lowers=music_FL,out:FR,matrix.music_FR.FR depth=-15 attack=5", "music_FR lowers=mic detect=peak"])
        let matrix = MatrixMixer(mixer)
        var renderer = matrix.renderer
        let bench = Bench(inputs: 3, outputs: 2, capacity: 256)
        var rng = SplitMix64(seed: 7)
        bench.fillInputs(&rng, frames: 256)
        let ins = UnsafeBufferPointer(bench.inputPointers), outs = UnsafeBufferPointer(bench.outputPointers)
        _ = countedRender(&renderer, frames: 256, ins, outs)  // warm up
        var allocations = 0, frees = 0
        for block in 0..<2000 {
            if block % 50 == 7 {
                try matrix.update { m throws(CrosspointError) in
                    try m.setCrosspoint(input: 1, output: 0, gain: Double(block % 3) / 2)
                    if block % 150 == 7 { try m.setDucking(block % 300 == 7 ? [] : ["mic lowers=music_FL depth=-15 attack=5"]) }
                }
            }
            let (a, f) = countedRender(&renderer, frames: block % 2 == 0 ? 256 : 37, ins, outs)
            allocations += a
            frees += f
        }
        #expect(allocations == 0 && frees == 0, "\(allocations) allocations, \(frees) frees")
        #expect(matrix.duckingReductions.count == matrix.mixer.ducking.count)
    }
}
