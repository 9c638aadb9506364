// Scenes in the model (issue 31): what a scene holds (the table's scene role), a morph's ends
// exact, mutes that fade through their gain, delays half-way, recall safes, and a scene of
// another shape applied by channel name.

import CrosspointCore
import Foundation
import Testing

@Suite("Scenes") struct SceneTests {
    /// A 2x2 stereo mixer, straight through.
    static func stereo() throws -> Mixer {
        var m = try Mixer(inputs: 2, outputs: 2, inputChannels: ["FL", "FR"], outputChannels: ["FL", "FR"])
        try m.setMatrix(rows: [[1, 0], [0, 1]])
        return m
    }

    @Test func aSceneHoldsTheMixNotTheShapeTheDevicesOrTheRamp() throws {
        var m = try Self.stereo()
        try m.setRamp(milliseconds: 40)
        let scene = Scene(name: "a", of: m)
        #expect(Scene.kinds == [.masterGain, .inputGain, .outputGain, .crosspoint, .inputMute, .outputMute, .outputDelay])
        let counts: [Int] = scene.values.map(\.count)
        #expect(counts == [1, 2, 2, 4, 2, 2, 2])
        #expect(scene.inputs == ["FL", "FR"] && scene.outputs == ["FL", "FR"])
    }

    @Test func aMorphEndsExactlyOnEachSceneAndMovesGainsAlongTheCurve() throws {
        let m = try Self.stereo()
        var other = m
        try other.setInputGain(0, 0.01)
        try other.setCrosspoint(input: 0, output: 1, gain: 0.5)  // fades in
        try other.setCrosspoint(input: 1, output: 1, gain: 0)    // fades out
        try other.setOutputDelay(1, milliseconds: 10)
        let a = Scene(name: "a", of: m), b = Scene(name: "b", of: other)
        let atB = try m.morphed(from: a, to: b, at: 1), atA = try other.morphed(from: a, to: b, at: 0)
        #expect(Scene(name: "b", of: atB) == b)
        #expect(Scene(name: "a", of: atA) == a)
        let half = try m.morphed(from: a, to: b, at: 0.5)
        #expect(abs(Double(half.inputGains[0]) - 0.1) < 1e-6)                      // -20 dB, half-way in dB
        #expect(abs(Double(half.crosspoint(input: 0, output: 1)) - 0.5 * 0.5.squareRoot()) < 1e-6)  // equal power in
        #expect(abs(Double(half.crosspoint(input: 1, output: 1)) - 0.5.squareRoot()) < 1e-6)        // and out
        let before = try m.morphed(from: a, to: b, at: 0.49)
        #expect(half.outputDelays[1] == 10 && before.outputDelays[1] == 0)
    }

    @Test func aMuteFadesThroughItsGainAndIsSetAtTheEnd() throws {
        let m = try Self.stereo()
        var muted = m
        try muted.setOutputMute(0, true)
        muted.setMasterMute(true)
        let open = Scene(name: "open", of: m), closed = Scene(name: "closed", of: muted)
        let quarter = try m.morphed(from: open, to: closed, at: 0.25)
        #expect(!quarter.outputMutes[0] && abs(Double(quarter.outputGains[0]) - cos(0.25 * .pi / 2)) < 1e-6)
        #expect(!quarter.masterMute && abs(Double(quarter.masterGain) - cos(0.25 * .pi / 2)) < 1e-6)
        let end = try m.morphed(from: open, to: closed, at: 1)
        #expect(end.outputMutes[0] && end.outputGains[0] == 1 && end.masterMute && end.masterGain == 1)
        // And back: unmuted at once, the gain rising from zero.
        let back = try muted.morphed(from: closed, to: open, at: 0.25)
        #expect(!back.outputMutes[0] && abs(Double(back.outputGains[0]) - sin(0.25 * .pi / 2)) < 1e-6)
        // Muted on both sides: it stays muted all the way.
        var quieter = muted
        try quieter.setOutputGain(0, 0.5)
        let both = try muted.morphed(from: closed, to: Scene(name: "q", of: quieter), at: 0.5)
        #expect(both.outputMutes[0])
    }

    @Test func recallSafesAreLeftAsTheNodeHasThem() throws {
        var m = try Self.stereo()
        let a = Scene(name: "a", of: m)
        var other = m
        try other.setInputGain(0, 0.25)
        try other.setMasterGain(0.5)
        let b = Scene(name: "b", of: other)
        try m.setInputGain(0, 0.8)  // the presenter's microphone, moved since
        let recalled = try m.morphed(from: a, to: b, at: 1, keeping: [.inputGain(0), .masterGain])
        #expect(recalled.inputGains[0] == 0.8 && recalled.masterGain == 1)
    }

    @Test func aSceneOfAnotherShapeAppliesWhereTheChannelNamesMatch() throws {
        var wide = try Mixer(inputs: 3, outputs: 2, inputChannels: ["FL", "FR", "MIC"], outputChannels: ["FL", "FR"])
        try wide.setInputGain(2, 0.5)
        try wide.setInputGain(1, 0.25)
        let scene = Scene(name: "wide", of: wide)
        let m = try Self.stereo()
        let unmatched = scene.unmatched(on: m)
        #expect(unmatched.inputs == ["MIC"] && unmatched.outputs.isEmpty)
        #expect(Scene.describe(unmatched: unmatched) == "input MIC")
        let recalled = try m.morphed(from: Scene(name: "now", of: m), to: scene, at: 1)
        #expect(recalled.inputGains == [1, 0.25])
    }

    // MARK: Scenes as keys of the node (scenes, scene.safe, scene.morph.between, scene.morph, scene.recall)

    @Test func aSceneLineReadsBackExactlyAndWritesOnlyWhatIsNotAtItsDefault() throws {
        var m = try Self.stereo()
        try m.setInputGain(0, 0.3)
        try m.setCrosspoint(input: 0, output: 1, gain: -0.123456789)
        try m.setOutputMute(1, true)
        try m.setOutputDelay(0, milliseconds: 12.5)
        m.setMasterMute(true)
        let scene = Scene(name: "show", of: m)
        #expect(scene.text == "show in=FL,FR out=FL,FR mute gain.in.FL=0.3 matrix.FL.FL=1 matrix.FL.FR=-0.12345679 matrix.FR.FR=1 mute.out.FR=true delay.out.FL=12.5")
        let back = try Scene(text: scene.text)
        #expect(back == scene)
        // Recalled, it gives the mixer exactly the values it was taken from.
        var other = try Self.stereo()
        try other.setScenes([scene.text])
        try other.recall("show")
        #expect(Scene(name: "show", of: other) == scene)
        #expect(other.crosspoint(input: 0, output: 1) == m.crosspoint(input: 0, output: 1))
        // Renamed: the line written once, under the new name, reads back as the same scene.
        let renamed = scene.renamed("encore")
        #expect(renamed.text == "encore" + scene.text.dropFirst("show".count))
        #expect(try Scene(text: renamed.text) == renamed && renamed.name == "encore" && renamed.values == scene.values)
    }

    @Test func badSceneLinesAreRefusedByWhatIsWrong() throws {
        func refusal(_ text: String) -> String {
            do { _ = try Scene(text: text); return "accepted" } catch { return error.description }
        }
        #expect(refusal("") .contains("empty scene"))
        #expect(refusal("a b in=FL out=FL").contains("'b' is not KEY=VALUE"))
        #expect(refusal("sh/ow in=FL out=FL").contains("not a scene name"))
        #expect(refusal("show out=FL").contains("gives no in= or out="))
        #expect(refusal("show in=FL,FL out=FL").contains("appears twice"))
        #expect(refusal("show in=FL out=FL in=FR").contains("in= is given twice"))
        #expect(refusal("show in=FL out=FL gain.in.MIC=1").contains("names an input the scene's in= does not list"))
        #expect(refusal("show in=FL out=FL ramp.ms=5").contains("not a key a scene holds"))
        #expect(refusal("show in=FL out=FL gain.in.FL=11").contains("outside -10 to 10"))
        #expect(refusal("show in=FL out=FL gain.in.FL=nan").contains("is not a number"))
        #expect(refusal("show in=FL out=FL mute.in.FL=maybe").contains("not true or false"))
        #expect(refusal("show in=FL out=FL gain.in.FL=1 gain.in.FL=0.5").contains("given twice"))
        var m = try Self.stereo()
        let before = m
        #expect(throws: CrosspointError.self) { try m.setScenes(["a in=FL out=FL", "a in=FR out=FR"]) }
        #expect(throws: CrosspointError.self) { try m.setScenes((0...Scene.limit).map { "s\($0) in=FL out=FL" }) }
        #expect(throws: CrosspointError.self) { try m.setSceneSafes(["ramp.ms"]) }
        #expect(throws: CrosspointError.self) { try m.setMorphScenes(["a", "b"]) }  // no such scenes
        #expect(throws: CrosspointError.self) { try m.setMorph(0.5) }  // nothing to morph between
        try m.setMorph(0)  // where the fader is: nothing moves
        #expect(throws: CrosspointError.self) { try m.morph(to: 0) }  // but a move to it needs ends
        #expect(m == before, "nothing changed")
    }

    @Test func theMorphFaderMovesBetweenTwoScenesAndLeavesTheSafes() throws {
        var m = try Self.stereo()
        let soundcheck = Scene(name: "soundcheck", of: m)
        var show = m
        try show.setInputGain(0, 0.1)
        try show.setInputGain(1, 0.5)
        try show.setMasterGain(0.5)
        try m.setScenes([soundcheck.text, Scene(name: "show", of: show).text])
        try m.setSceneSafes(["gain.in.FR"])
        try m.setMorphScenes(["soundcheck", "show"])
        try m.setInputGain(1, 0.8)  // the presenter's microphone, set by hand
        try m.set(Parameter(.morph), to: .number(0.5))
        #expect(m.morphPosition == 0.5 && m.value(of: Parameter(.morph)) == .number(0.5))
        #expect(abs(Double(m.inputGains[0]) - 0.1.squareRoot()) < 1e-6, "half-way in dB")
        #expect(m.inputGains[1] == 0.8, "a safe stays")
        try m.setMorph(1)
        #expect(m.inputGains[0] == 0.1 && m.masterGain == 0.5 && m.inputGains[1] == 0.8)
        try m.setMorph(0)
        #expect(m.inputGains[0] == 1 && m.masterGain == 1)
        // The fader where it is moves nothing (Props sent back as read); morph(to:) moves anyway.
        try m.setInputGain(0, 0.5)
        try m.setMorph(0)
        #expect(m.inputGains[0] == 0.5)
        try m.morph(to: 0)
        #expect(m.inputGains[0] == 1)
        // A scene of other channels cannot be an end of the fader.
        let wide = try Mixer(inputs: 3, outputs: 2, inputChannels: ["FL", "FR", "MIC"], outputChannels: ["FL", "FR"])
        try m.setScenes(m.scenes.map(\.text) + [Scene(name: "wide", of: wide).text])
        #expect(throws: CrosspointError.self) { try m.setMorphScenes(["show", "wide"]) }
        do {
            try m.setMorphScenes(["show", "wide"])
        } catch {
            #expect(error.description.contains("different shapes"), "\(error)")
        }
    }

    @Test func aRecallRequestNamesAScene_AndATimeUpToAMinute() throws {
        #expect(try SceneRecall(.names(["show"])) == SceneRecall(name: "show"))
        #expect(try SceneRecall(.names(["show", "10s"])).milliseconds == 10_000)
        #expect(try SceneRecall(.names(["show", "2500ms"])).milliseconds == 2500)
        #expect(try SceneRecall(.names(["show", "2500"])).milliseconds == 2500)
        #expect(try SceneRecall(.names(["show", "0.5s"])).milliseconds == 500)
        #expect(throws: CrosspointError.self) { try SceneRecall(.names(["show", "61s"])) }
        #expect(throws: CrosspointError.self) { try SceneRecall(.names(["show", "soon"])) }
        #expect(throws: CrosspointError.self) { try SceneRecall(.names([])) }
        #expect(throws: CrosspointError.self) { try SceneRecall(.ints([1])) }
        // A client checking the request against the node's mixer learns of a missing scene.
        var m = try Self.stereo()
        do {
            try m.set(Parameter(.sceneRecall), to: .names(["nowhere"]))
            Issue.record("accepted a missing scene")
        } catch {
            #expect(error.description.contains("no scene 'nowhere'"), "\(error)")
        }
        try m.setScenes(["here in=FL,FR out=FL,FR"])
        try m.set(Parameter(.sceneRecall), to: .names(["here", "1s"]))
    }

    @Test func aMorphLeavesTheKeysSomeoneElseMoved() throws {
        let m = try Self.stereo()
        var target = m
        try target.setInputGain(0, 0.1)
        try target.setInputGain(1, 0.1)
        let morph = SceneMorph(from: Scene(name: "", of: m), to: Scene(name: "t", of: target), on: m)
        var step = m
        try morph.apply(at: 0.5, to: &step)
        var touched = step
        try touched.setInputGain(1, 0.9)
        let moved = morph.moved(between: step, and: touched)
        #expect(moved == [.inputGain(1)])
        var end = touched
        try morph.leaving(moved).apply(at: 1, to: &end)
        #expect(end.inputGains == [0.1, 0.9])
    }

    // MARK: MIDI recalls a scene

    @Test func aNoteOrAProgramChangeMappedToSceneRecallAsksForTheScene() throws {
        var setup = MIDISetup()
        try setup.setMappings(["program 1 5 scene.recall show 10s", "note 2 60 scene.recall soundcheck"])
        #expect(setup.texts == ["program 1 5 scene.recall show 10000ms", "note 2 60 scene.recall soundcheck"])
        // Refused: a fader recalling, a recall without a scene, a program moving a gain, a bad time.
        for bad in ["cc 1 7 scene.recall show", "note 1 60 scene.recall", "program 1 5 gain.in.0", "note 1 60 scene.recall show 2min",
                    "program 1 128 scene.recall show", "program 1 5 scene.recall show 10s extra"] {
            var other = MIDISetup()
            #expect(throws: CrosspointError.self, "\(bad)") { try other.setMappings([bad]) }
        }
        // The parser reads a program change (two bytes, running status too).
        var parser = MIDIParser()
        let messages = [0xC0, 5, 7, 0xC1, 0].compactMap { parser.feed(UInt8($0)) }
        #expect(messages == [.programChange(channel: 0, program: 5), .programChange(channel: 0, program: 7), .programChange(channel: 1, program: 0)])
        // Through the inbox and the mapper: a press asks for the scene, a release nothing;
        // another program or channel nothing.
        let inbox = MIDIInbox.make()
        defer { inbox.free() }
        var mapper = MIDIMapper(setup.mappings)
        var m = try Self.stereo()
        try m.setScenes(["show in=FL,FR out=FL,FR", "soundcheck in=FL,FR out=FL,FR"])
        func asked(_ messages: [MIDIMessage]) -> [ParameterValue] {
            for message in messages { inbox.receive(message) }
            return inbox.collect().flatMap { mapper.changes(for: $0, in: m) }.filter { $0.parameter.kind == .sceneRecall }.map(\.value)
        }
        #expect(asked([.programChange(channel: 0, program: 5)]) == [.names(["show", "10000ms"])])
        #expect(asked([.programChange(channel: 0, program: 6), .programChange(channel: 2, program: 5)]).isEmpty)
        #expect(asked([.noteOn(channel: 1, note: 60, velocity: 90)]) == [.names(["soundcheck"])])
        #expect(asked([.noteOff(channel: 1, note: 60)]).isEmpty)
        // What it asks for is a request the node's part takes: checked like a set-param's.
        try m.set(Parameter(.sceneRecall), to: .names(["show", "10000ms"]))
        // No feedback for a recall.
        #expect(mapper.feedback(for: m).isEmpty)
    }
}
