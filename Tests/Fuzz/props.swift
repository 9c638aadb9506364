// Fuzz target (a): the walk of an incoming Props pod and the application of its entries,
// fed raw pod bytes, as `param_changed` hands a set-param from any client to the node.
// For each input: `PropsCodec.entries(bytes:)`; then, on mixers of a few shapes, what the
// node does with the entries (`Mixer.apply`, the fade-out mixer of leaving ports, the render
// plan and a few rendered blocks), then the Props (and PropInfo) the node republishes, which
// must walk back to the same state.
//
// Build and run: scripts/fuzz. Seeds: Tests/Fuzz/corpus/props (CROSSPOINT_FUZZ_WRITE_SEEDS=DIR
// makes this binary write its generated ones to DIR).
import CFuzzSupport
import CPipeWire
import CrosspointCore
import CrosspointPipeWire
import Glibc

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProps(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    guard let entries = PropsCodec.entries(bytes: UnsafeRawBufferPointer(start: data, count: size)) else { return 0 }
    for shape in fuzzShapes { exercise(entries, on: shape) }
    return 0
}

/// What FilterNode.propsChanged, commit, syncPorts and publish do, without a daemon.
func exercise(_ entries: [PropsCodec.Entry], on start: Mixer) {
    var mixer = start
    let (changed, warnings) = mixer.apply(entries)
    for warning in warnings where warning.isEmpty { fatalError("an empty warning") }
    if !changed && mixer != start { fatalError("apply changed the mixer but said it did not") }
    // Nothing changed: the node republishes the state it had, which the seeds cover.
    guard changed else { return }

    let engine = MatrixMixer(start)
    renderBlocks(engine, inputs: start.inputs, outputs: start.outputs, blocks: 1)
    // Leaving ports first render as muted channels, then go.
    if mixer.inputs < start.inputs || mixer.outputs < start.outputs {
        var fading = mixer
        do {
            try fading.resize(inputs: max(mixer.inputs, start.inputs), outputs: max(mixer.outputs, start.outputs))
            for i in mixer.inputs..<fading.inputs { try fading.setInputMute(i, true) }
            for j in mixer.outputs..<fading.outputs { try fading.setOutputMute(j, true) }
        } catch {
            fatalError("the fade-out mixer: \(error)")
        }
        engine.replace(with: fading)
        renderBlocks(engine, inputs: fading.inputs, outputs: fading.outputs)
    }
    engine.replace(with: mixer)
    renderBlocks(engine, inputs: mixer.inputs, outputs: mixer.outputs)

    // Republished: PropInfo when the shape changed, and Props, which must read back as the state.
    let shapeChanged = (mixer.inputs, mixer.outputs) != (start.inputs, start.outputs)
    PropsCodec.withParams(for: mixer, includingInfo: shapeChanged) { params in
        guard let last = params.last, let props = last else { fatalError("no Props pod was built") }
        guard let back = PropsCodec.entries(of: props) else { fatalError("the node's own Props do not walk") }
        var again = mixer
        _ = again.apply(back)
        // Props carries ramp.ms as a Float.
        if Float(again.rampMilliseconds) == Float(mixer.rampMilliseconds) {
            try? again.setRamp(milliseconds: mixer.rampMilliseconds)
        }
        if again != mixer { fatalError("the node's own Props do not read back as its state") }
    }

    // A change as the crosspoint command sends it: the entries that had a key, rebuilt.
    let rebuilt = entries.compactMap { entry -> PropsEntry? in
        guard let key = entry.key else { return nil }
        return switch entry.value {
        case let .number(v): PropsEntry(key: key, value: .number(v))
        case let .bool(b): PropsEntry(key: key, value: .bool(b))
        case let .numbers(list): PropsEntry(key: key, value: .ints(list.map { Int(exactly: $0.rounded()) ?? 0 }))
        case let .strings(names): PropsEntry(key: key, value: .names(names))
        case .invalid: nil
        }
    }
    let buffer = PodBuffer(size: 4096 + rebuilt.reduce(0) { $0 + PropsCodec.podBytes($1) })
    guard let pod = PropsCodec.build(rebuilt, tail: .change(mute: mixer.masterMute), in: buffer) else {
        fatalError("a change of \(rebuilt.count) entries did not fit its buffer")
    }
    guard let walked = PropsCodec.entries(of: pod), walked.count >= rebuilt.count else {
        fatalError("a change built here does not walk back")
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzPropsInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    if let directory = seedDirectory {
        writePropsSeeds(directory)
        exit(0)
    }
    return 0
}

/// Seeds: the node's own Props for each shape (as the encoder builds them), changes as the
/// crosspoint command builds them, and pods exactly as pw-cli 0.3.65 builds them from the
/// text of a set-param, hostile ones included (an extra value of every pod type).
func writePropsSeeds(_ directory: String) {
    func bytes(_ pod: UnsafePointer<spa_pod>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: pod, count: 8 + Int(pod.pointee.size)))
    }
    var count = 0
    func seed(_ pod: UnsafePointer<spa_pod>?, _ name: String) {
        guard let pod else { fatalError("seed \(name) was not built") }
        writeSeed(bytes(pod), directory, name)
        count += 1
    }
    for (k, shape) in fuzzShapes.enumerated() {
        PropsCodec.withParams(for: shape, includingInfo: false) { seed($0.last!, "encoder-state-\(k)") }
    }
    let changes: [(String, [PropsEntry], Bool?)] = [
        ("gains", [PropsEntry(key: "matrix.0.0", value: .number(0.5)), PropsEntry(key: "gain.in.1", value: .number(-2)),
                   PropsEntry(key: "gain.out.0", value: .number(0.25)), PropsEntry(key: "gain.master", value: .number(1.5))], nil),
        ("mutes", [PropsEntry(key: "mute.in.0", value: .bool(true)), PropsEntry(key: "mute.out.0", value: .bool(false))], true),
        ("map", [PropsEntry(key: "channel-map", value: .ints([1, 0]))], nil),
        ("counts", [PropsEntry(key: "inputs", value: .number(6)), PropsEntry(key: "outputs", value: .number(3)),
                    PropsEntry(key: "ramp.ms", value: .number(0))], false),
        ("names", [PropsEntry(key: "input.position", value: .names(["FL", "FR", "LFE"])),
                   PropsEntry(key: "output.position", value: .names(["MONO"]))], nil),
        ("by-name", [PropsEntry(key: "matrix.FL.MONO", value: .number(1)), PropsEntry(key: "gain.in.FR", value: .number(0))], nil),
        ("midi", [PropsEntry(key: "midi", value: .bool(true)),
                  PropsEntry(key: "midi.map", value: .names(["cc 1 7 gain.in.0", "cc14 2 0 gain.master nopickup",
                                                             "note 1 60 mute.out.0 momentary", "bend 9 matrix.0.0"])),
                  PropsEntry(key: "midi.learn", value: .names(["gain.out.0"]))], nil),
        ("devices", [PropsEntry(key: "devices", value: .names(["sink game description=Game", "sink chat position=MONO default",
                                                             "source stream-mix channels=0,FR description=Stream mix"]))], nil),
        ("network", [PropsEntry(key: "devices", value: .names(["send stage to=239.69.150.10:5004 protocol=aes67 format=L24 ptp=/var/run/ptp4lro",
                                                             "receive box from=239.69.2.1:5004 protocol=aes67 latency=3 group=pipewire.ptp0",
                                                             "send vm to=192.168.1.20:6980 protocol=vban session=Stream1 group=x"]))], nil),
        ("duck", [PropsEntry(key: "duck", value: .names(["0 lowers=1,out:0 depth=-15 threshold=-30 attack=10 hold=200 release=1s",
                                                         "FR lowers=FL,matrix.FL.MONO detect=peak knee=6 off"])),
                  PropsEntry(key: "duck.depth.0", value: .number(-20)), PropsEntry(key: "duck.on.FR", value: .bool(false))], nil),
        ("scenes", [PropsEntry(key: "scenes", value: .names(["show in=FL,FR out=MONO mute gain.in.FL=0.5 matrix.FR.MONO=-0.25 mute.out.MONO=true delay.out.MONO=12",
                                                             "soundcheck in=FL,FR out=MONO"])),
                    PropsEntry(key: "scene.safe", value: .names(["gain.in.FL", "gain.master"])),
                    PropsEntry(key: "scene.morph.between", value: .names(["show", "soundcheck"])),
                    PropsEntry(key: "scene.morph", value: .number(0.5)),
                    PropsEntry(key: "scene.recall", value: .names(["show", "10s"]))], nil),
        ("delays", [PropsEntry(key: "delay.out.0", value: .number(12.5)), PropsEntry(key: "delay.out.FR", value: .number(1000)),
                    PropsEntry(key: "delay.out.1", value: .number(0))], nil),
    ]
    for (name, entries, mute) in changes {
        let buffer = PodBuffer(size: 8192)
        seed(PropsCodec.build(entries, tail: .change(mute: mute), in: buffer), "encoder-change-\(name)")
    }
    let pwCli: [(String, String)] = [
        ("matrix", #"{ params = [ "matrix.0.0" 0.5 "matrix.FR.MONO" 0.25 ] }"#),
        ("map", #"{ params = [ "channel-map" [ 1 0 ] ] }"#),
        ("map-pair34", #"{ params = [ "channel-map" [ -1 -1 0 1 ] ] }"#),
        ("mute", #"{ params = [ "mute.in.1" true "gain.master" 0.8 ] }"#),
        ("delay", #"{ params = [ "delay.out.1" 180.0 "delay.out.FL" 0 ] }"#),
        ("midi", #"{ params = [ "midi" true "midi.map" [ "cc 1 7 gain.in.0" "note 1 60 mute.in.FL momentary" ] ] }"#),
        ("devices", #"{ params = [ "devices" [ "sink game description=Game" "source mix position=FL,FR,FC channels=a,b,0" ] ] }"#),
        ("network", #"{ params = [ "devices" [ "send stage to=239.69.150.10:5004 protocol=aes67 ptp=/run/ptp" "receive box session=stage protocol=aes67 group=pipewire.ptp0" ] ] }"#),
        ("targets", #"{ params = [ "targets" [ "default outputs=0" "alsa_output.usb outputs=FR offset=2" ] ] }"#),
        ("duck", #"{ params = [ "duck" [ "FL lowers=FR,out:MONO depth=-15dB attack=5ms hold=0.2s" "1 lowers=0 depth=-99" ] ] }"#),
        ("duck-keys", #"{ params = [ "duck" [ "FL lowers=matrix.FR.MONO" ] "duck.depth.FL" -20.0 "duck.on.0" false "duck.depth.7" -6.0 ] }"#),
        ("scenes", #"{ params = [ "scenes" [ "a in=FL,FR out=MONO gain.in.FL=0.5" "b in=FL,FR out=MONO matrix.FL.MONO=1" ] "scene.morph.between" [ a b ] "scene.morph" 0.25 "scene.recall" [ b 2500ms ] ] }"#),
        ("volume", "{ volume = 0.5 }"),
        ("standard", "{ volume = 0.5 mute = true channelVolumes = [ 0.5 1.0 0.25 ] }"),
        ("counts", #"{ params = [ "inputs" 6 "outputs" 2 ] }"#),
        ("positions", #"{ params = [ "output.position" [ "FL" "FR" "RL" ] "input.position" [ MONO ] ] }"#),
        ("ramp", #"{ params = [ "ramp.ms" 250 ] }"#),
        // Values that once killed the daemon, and their kin.
        ("huge-inputs", #"{ params = [ "inputs" 1e20 ] }"#),
        ("huge-outputs", #"{ params = [ "outputs" -1e20 "outputs" 9.3e18 ] }"#),
        ("int-min", #"{ params = [ "inputs" -9.223372e18 "outputs" -9223372036854775808 ] }"#),
        ("huge-map", #"{ params = [ "channel-map" [ 1e20 0 ] "channel-map" [ -1e20 0 ] ] }"#),
        ("not-finite", #"{ params = [ "gain.master" 1e39 "ramp.ms" -1e39 "matrix.0.0" nan ] }"#),
        // Every other shape of value: strings, nested lists, mixed lists, null, objects.
        ("wrong-types", #"{ params = [ "matrix.0.0" "loud" "mute.in.0" 0.5 "inputs" [ 2 ] "channel-map" [ [ 0 ] ] ] }"#),
        ("mixed-list", #"{ params = [ "input.position" [ "FL" 1 ] "output.position" [ ] "channel-map" [ "a" ] ] }"#),
        ("null-and-object", #"{ params = [ "gain.master" null "matrix.0.0" { a = 1 } 42 1 "gain.out.1" ] }"#),
        ("bad-keys", #"{ params = [ "matrix.-0.0" 1 "matrix.01.0" 1 "matrix.+1.0" 1 "gain.in.9" 1 "no.such.key" 1 "" 1 ] }"#),
        ("long-map", #"{ params = [ "channel-map" [ 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 ] ] }"#),
        ("channelVolumes", "{ channelVolumes = [ 1 1 ] mute = 3 volume = true }"),
        ("params-not-struct", "{ params = 5 }"),
    ]
    var buffer = [UInt8](repeating: 0, count: 1024)  // pw-cli's own buffer size
    for (name, text) in pwCli {
        let size = buffer.withUnsafeMutableBytes { fuzz_props_pod_from_json(text, $0.baseAddress, UInt32($0.count)) }
        guard size > 0 else { fatalError("pw-cli-like seed \(name): \(size)") }
        writeSeed(Array(buffer.prefix(Int(size))), directory, "pw-cli-\(name)")
        count += 1
    }
    // Pods no JSON makes: a Long, a Double, an Id, a Choice, a Rectangle, an Array of Longs
    // and of Doubles, an empty Array, a Bytes and a nested Object as values; a zero-size array
    // child; a Props object with an unknown property.
    let hostile = PodBuffer(size: 8192)
    var object = spa_pod_frame(), params = spa_pod_frame(), nested = spa_pod_frame(), choice = spa_pod_frame()
    spa_pod_builder_push_object(&hostile.builder, &object, UInt32(SPA_TYPE_OBJECT_Props), SPA_PARAM_Props.rawValue)
    spa_pod_builder_prop(&hostile.builder, SPA_PROP_params.rawValue, 0)
    spa_pod_builder_push_struct(&hostile.builder, &params)
    spa_pod_builder_string(&hostile.builder, "inputs"); spa_pod_builder_long(&hostile.builder, Int64.min)
    spa_pod_builder_string(&hostile.builder, "outputs"); spa_pod_builder_double(&hostile.builder, 1e300)
    spa_pod_builder_string(&hostile.builder, "gain.master"); spa_pod_builder_id(&hostile.builder, 7)
    spa_pod_builder_string(&hostile.builder, "matrix.0.0")
    spa_pod_builder_push_choice(&hostile.builder, &choice, SPA_CHOICE_Range.rawValue, 0)
    spa_pod_builder_float(&hostile.builder, 0.5); spa_pod_builder_float(&hostile.builder, 0); spa_pod_builder_float(&hostile.builder, 1)
    spa_pod_builder_pop(&hostile.builder, &choice)
    spa_pod_builder_string(&hostile.builder, "ramp.ms"); spa_pod_builder_rectangle(&hostile.builder, 640, 480)
    spa_pod_builder_string(&hostile.builder, "channel-map")
    let longs: [Int64] = [Int64.max, Int64.min]
    spa_pod_builder_array(&hostile.builder, 8, UInt32(SPA_TYPE_Long), 2, longs)
    spa_pod_builder_string(&hostile.builder, "channel-map")
    let doubles: [Double] = [1e300, -.infinity]
    spa_pod_builder_array(&hostile.builder, 8, UInt32(SPA_TYPE_Double), 2, doubles)
    spa_pod_builder_string(&hostile.builder, "channel-map")
    spa_pod_builder_array(&hostile.builder, 4, UInt32(SPA_TYPE_Int), 0, nil)
    spa_pod_builder_string(&hostile.builder, "mute.in.0"); spa_pod_builder_bytes(&hostile.builder, "\u{1}\u{2}", 2)
    spa_pod_builder_string(&hostile.builder, "input.position")
    spa_pod_builder_push_object(&hostile.builder, &nested, UInt32(SPA_TYPE_OBJECT_Props), SPA_PARAM_Props.rawValue)
    spa_pod_builder_prop(&hostile.builder, SPA_PROP_volume.rawValue, 0); spa_pod_builder_float(&hostile.builder, 1)
    spa_pod_builder_pop(&hostile.builder, &nested)
    spa_pod_builder_string(&hostile.builder, "matrix.0.0"); spa_pod_builder_none(&hostile.builder)
    spa_pod_builder_pop(&hostile.builder, &params)
    spa_pod_builder_prop(&hostile.builder, SPA_PROP_volume.rawValue, 0); spa_pod_builder_long(&hostile.builder, -1)
    spa_pod_builder_prop(&hostile.builder, SPA_PROP_mute.rawValue, 0); spa_pod_builder_double(&hostile.builder, -9.223372036854775808e18)
    spa_pod_builder_prop(&hostile.builder, SPA_PROP_channelVolumes.rawValue, 0)
    spa_pod_builder_array(&hostile.builder, 0, UInt32(SPA_TYPE_Float), 0, nil)
    spa_pod_builder_prop(&hostile.builder, 0x7fff_0000, 0); spa_pod_builder_int(&hostile.builder, 1)
    let pod = spa_pod_builder_pop(&hostile.builder, &object)
    seed(pod.map { UnsafePointer($0.assumingMemoryBound(to: spa_pod.self)) }, "hostile-every-type")
    print("wrote \(count) seeds to \(directory)")
}
