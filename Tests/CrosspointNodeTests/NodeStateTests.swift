// The state file's format: a file saved before the parameter table drove presets loads as
// it was and is saved back byte for byte; a state of a mixer with every key set loads back
// as itself (the node writes `NodeState.json`, reads with `StateStore.decode`).

import CrosspointCore
import CrosspointNode
import CrosspointTestSupport
import Testing

@Suite("State file format")
struct NodeStateTests {
    /// The node these states are saved for: 2 inputs and a sink's 2 channels, 3 outputs.
    static let configured = try! Mixer(inputs: 4, outputs: 3, inputChannels: ["FL", "FR", "game_FL", "game_FR"],
                                       outputChannels: ["L", "R", "SUB"])

    @Test("A state saved before loads as it was, and the node saves it back byte for byte")
    func earlierStatesLoad() throws {
        guard case let .success(state) = StateStore.decode(Array(EarlierFiles.state.utf8), configured: NodeStateTests.configured) else {
            Issue.record("the state does not load")
            return
        }
        let mixer = try Mixer(preset: state.mixer)
        #expect(mixer.masterGain == 0.8 && mixer.masterMute && mixer.inputMutes == [false, true, false, false])
        #expect(mixer.outputDelays == [0, 0, 12.345] && mixer.rampMilliseconds == 37.5 && mixer.crosspoint(input: 1, output: 2) == -0.70794576)
        #expect(mixer.midi.texts.count == 2 && mixer.devices.count == 1 && mixer.targets.count == 1)
        #expect(state.links.count == 2 && state.links[0].seen == 1764000000 && state.links[1].seen == nil)
        // Saved back: the same bytes, but for the keys of the table added since (written too).
        var preset = mixer.preset
        preset.values = preset.values.filter { kind, _ in EarlierFiles.state.contains("\"\(kind.family.presetKey)\":") }
        let saved = NodeState(configured: state.configured, mixer: preset, links: state.links)
        #expect(saved.json.text == EarlierFiles.state)
    }

    @Test("A state of a mixer with every key of the table set loads back as itself")
    func everyKeyLoadsBack() throws {
        var mixer = NodeStateTests.configured
        for p in Parameter.all(for: mixer) where p.kind.family.access == .readWrite && ![.shape, .no].contains(p.kind.family.carried) {
            let family = p.kind.family
            switch family.type {
            case .bool: try mixer.set(p, to: .bool(family.defaultValue == 0))
            case .float: try mixer.set(p, to: .number(family.range.lowerBound + (family.range.upperBound - family.range.lowerBound) * 0.3))
            default: continue
            }
        }
        let state = NodeState(configured: NodeState.fingerprint(NodeStateTests.configured), mixer: mixer.preset, links: [])
        guard case let .success(loaded) = StateStore.decode(Array(state.json.text.utf8), configured: NodeStateTests.configured) else {
            Issue.record("the state does not load")
            return
        }
        #expect(loaded == state)
        #expect(try Mixer(preset: loaded.mixer) == mixer)
    }
}
