// Fuzz target (c): the state file, fed bytes, as `StateStore.load` reads `state.json`
// (`StateStore.decode`, for nodes configured as the shipped drop-in, a 4x3 and a 2x2), then
// what the node does with a state it accepts: the mixer, its render plan and a few blocks,
// the links, and the next save (which must load back as the same state). The same bytes are
// also read as a preset, as `crosspoint load` does.
//
// Build and run: scripts/fuzz. Seeds: Tests/Fuzz/corpus/state (CROSSPOINT_FUZZ_WRITE_SEEDS=DIR
// makes this binary write its generated ones to DIR).
import CrosspointCore
import CrosspointNode
import FoundationEssentials
import Glibc

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzState(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    for configured in fuzzShapes {
        switch StateStore.decode(bytes, configured: configured) {
        case let .success(state):
            let mixer: Mixer
            do { mixer = try Mixer(preset: state.mixer) } catch { fatalError("an accepted state does not apply: \(error)") }
            let engine = MatrixMixer(configured)
            engine.replace(with: mixer)
            renderBlocks(engine, inputs: mixer.inputs, outputs: mixer.outputs)
            let links = Set(state.links)
            for link in links where link.description.isEmpty { fatalError("a link with no description") }
            let next = NodeState(configured: NodeState.fingerprint(configured), mixer: mixer.preset,
                                 links: links.sorted { $0.description < $1.description })
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            guard let saved = try? encoder.encode(next) else { fatalError("an accepted state does not encode") }
            guard case let .success(again) = StateStore.decode(Array(saved), configured: configured), again == next else {
                fatalError("a saved state does not load back as itself")
            }
        case let .failure(problem):
            if problem.description.isEmpty { fatalError("an empty reason") }
        }
    }
    if let preset = try? JSONDecoder().decode(Preset.self, from: Data(bytes)) {
        _ = try? Mixer(preset: preset)
        for shape in fuzzShapes {
            var mixer = shape
            if (try? mixer.apply(preset)) != nil { _ = preset.channelNameDifferences(from: mixer) }
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzStateInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    if let directory = seedDirectory {
        writeStateSeeds(directory)
        exit(0)
    }
    return 0
}

/// Seeds: states as the node saves them (the same encoder and options), for each configured
/// shape, with changed gains, a changed shape, renamed channels and links; and presets.
func writeStateSeeds(_ directory: String) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    var count = 0
    func write<T: Encodable>(_ value: T, _ name: String) {
        guard let data = try? encoder.encode(value) else { fatalError("seed \(name)") }
        writeSeed(Array(data), directory, name)
        count += 1
    }
    let links = [
        RememberedLink(port: "out_MONO", peerNode: "alsa_output.usb-1.analog", peerPort: "playback_FL"),
        RememberedLink(port: "in_FL", peerNode: "player", peerPort: "output_FL"),
    ]
    do {
        for (k, configured) in fuzzShapes.enumerated() {
            let fingerprint = NodeState.fingerprint(configured)
            write(NodeState(configured: fingerprint, mixer: configured.preset, links: []), "state-\(k)-as-configured")
            var changed = configured
            try changed.setMasterGain(0.8)
            try changed.setInputGain(0, -0.5)
            try changed.setOutputMute(0, true)
            try changed.setCrosspoint(input: 0, output: 0, gain: 0.3)
            try changed.setRamp(milliseconds: 0)
            try changed.setOutputDelay(changed.outputs - 1, milliseconds: 12.5)
            // Two scenes, a safe and the fader's ends (issue 31).
            try changed.setScenes([Scene(name: "before", of: configured).text, Scene(name: "after", of: changed).text])
            try changed.setSceneSafes(["gain.master"])
            try changed.setMorphScenes(["before", "after"])
            write(NodeState(configured: fingerprint, mixer: changed.preset, links: links), "state-\(k)-changed-with-links")
            var resized = configured
            try resized.resize(inputs: 6, outputs: 3)
            try resized.setChannels(outputs: ["FL", "FR", "LFE"])
            write(NodeState(configured: fingerprint, mixer: resized.preset, links: links), "state-\(k)-resized")
            write(changed.preset, "preset-\(k)")
        }
    } catch {
        fatalError("state seeds: \(error)")
    }
    print("wrote \(count) seeds to \(directory)")
}
