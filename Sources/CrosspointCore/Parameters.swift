/// The one table of Crosspoint's parameters. PropInfo, Props, parsing, presets and the state
/// file (Preset.swift), MIDI mappings, the command line's help, completion and `show`, the
/// control surface's number fields (`GET /api/params`) and the README's parameter table are
/// all made from `Parameter.families`.

/// A family of keys that share a type, a range and a meaning (`matrix.<in>.<out>`).
public struct ParameterFamily: Sendable, Equatable {
    public enum ValueType: String, Sendable { case float = "Float", int = "Int", bool = "Bool", intArray = "Array of Int", names = "Array of String" }

    /// The key with placeholders, as documented: `matrix.<in>.<out>`.
    public let pattern: String
    public let type: ValueType
    /// The default value of a float or bool key (bools: 0 or 1).
    public let defaultValue: Double
    /// The accepted range of a float key.
    public let range: ClosedRange<Double>
    public let summary: String
    /// Whether the key can be read back. A write-only key (`levels.watch`, a request to the
    /// running node rather than part of its state) is in PropInfo but not in Props.
    public let access: Access
    /// The range in words, where the number range does not say it (`channel-map`).
    public let rangeNote: String?
    /// The default in words, where the type's usual one does not say it (`midi.map`).
    public let defaultNote: String?

    public enum Access: Sendable { case readWrite, writeOnly }

    /// What a float key's number means: a linear gain (the command line also takes dB), a
    /// time in milliseconds (the command line also takes `10ms`), a position from 0 to 1
    /// (`scene.morph`), or decibels (`duck.depth.<rule>`).
    public enum Unit: Sendable { case gain, milliseconds, fraction, decibels }
    public let unit: Unit

    /// How presets and the state file carry the key (Preset.swift), under its pattern without
    /// the placeholders: `gain.in` (one value per input), `matrix` (a row per input, a value
    /// per output), `ramp.ms`.
    public enum Carried: Sendable, Equatable {
        /// Not carried: a request (a write-only key), or what another key carries
        /// (`channel-map`: the matrix).
        case no
        /// The preset's shape (`inputs`, `outputs`, the channel names): a mixer is made of it,
        /// it is never applied to one.
        case shape
        /// Always written; a preset without it is refused.
        case required
        /// Always written; absent, the default.
        case always
        /// Written when it is not at its default; absent, the default (`delay.out`).
        case whenSet
        /// Written, with every key of its group, when one of them is not at its default; absent,
        /// left as the node has it (`midi` and `midi.map`: a preset saved without MIDI control
        /// leaves the node's be).
        case leftAlone(group: String)
    }
    public let carried: Carried

    /// Whether a MIDI control can move the key (MIDIMapping): a float follows a fader (a gain)
    /// or a knob over its range (milliseconds), a bool a button; false for what is set by a
    /// command (`midi`).
    public let midiMappable: Bool

    /// Whether a scene holds the key, and how a recall or a morph moves it (Scene.swift).
    public enum SceneRole: Sendable, Equatable {
        /// Not in a scene: the shape, devices, targets, MIDI, the ramp, requests.
        case no
        /// A gain, moved along `GainCurve`; `mutedBy` is the mute of the same index, if any
        /// (`gain.in.<in>`: `mute.in.<in>`), through which a recall fades rather than jumps.
        case gain(mutedBy: ParameterKind?)
        /// A mute, moved with the gain it mutes (`gain(mutedBy:)`).
        case mute
        /// Changed once, half-way (a delay: the node cross-fades it over `ramp.ms`).
        case halfWay
    }
    public let scene: SceneRole

    init(pattern: String, type: ValueType, defaultValue: Double, range: ClosedRange<Double>, summary: String,
         unit: Unit = .gain, access: Access = .readWrite, carried: Carried? = nil, midiMappable: Bool? = nil,
         scene: SceneRole = .no, rangeNote: String? = nil, defaultNote: String? = nil) {
        self.pattern = pattern
        self.unit = unit
        self.type = type
        self.defaultValue = defaultValue
        self.range = range
        self.summary = summary
        self.access = access
        self.carried = carried ?? (access == .writeOnly ? .no : .always)
        self.midiMappable = midiMappable ?? (access == .readWrite && (type == .float || type == .bool))
        self.scene = scene
        self.rangeNote = rangeNote
        self.defaultNote = defaultNote
    }
}

/// Every kind of key, in the order PropInfo lists them. Each builds its row of the table
/// here and nowhere else: adding a parameter is a case and its row, plus its behaviour
/// (`Mixer.value(of:)` and `Mixer.set(_:to:)`, and the mixer's own state and setter);
/// ARCHITECTURE.md, "Adding a key".
public enum ParameterKind: CaseIterable, Hashable, Sendable {
    case masterGain, inputGain, outputGain, crosspoint, inputMute, outputMute, outputDelay
    case channelMap, ramp, inputCount, outputCount, inputPositions, outputPositions, midiPorts, midiMap, midiLearn, devices, targets, ducking
    case duckDepth, duckOn
    case scenes, sceneSafe, morphScenes, morph, sceneRecall, levelsWatch

    public var family: ParameterFamily {
        switch self {
        case .masterGain:
            .init(pattern: "gain.master", type: .float, defaultValue: 1, range: Mixer.gainRange,
                  summary: "Master gain (linear) applied to every output", scene: .gain(mutedBy: nil))
        case .inputGain:
            .init(pattern: "gain.in.<in>", type: .float, defaultValue: 1, range: Mixer.gainRange,
                  summary: "Gain (linear) of one input, before the matrix", scene: .gain(mutedBy: .inputMute))
        case .outputGain:
            .init(pattern: "gain.out.<out>", type: .float, defaultValue: 1, range: Mixer.gainRange,
                  summary: "Gain (linear) of one output, after the matrix", scene: .gain(mutedBy: .outputMute))
        case .crosspoint:
            .init(pattern: "matrix.<in>.<out>", type: .float, defaultValue: 0, range: Mixer.gainRange,
                  summary: "Cross-point gain (linear) from an input to an output; negative flips polarity", carried: .required,
                  scene: .gain(mutedBy: nil))
        case .inputMute:
            .init(pattern: "mute.in.<in>", type: .bool, defaultValue: 0, range: 0...1, summary: "Mutes one input", scene: .mute)
        case .outputMute:
            .init(pattern: "mute.out.<out>", type: .bool, defaultValue: 0, range: 0...1, summary: "Mutes one output", scene: .mute)
        case .outputDelay:
            .init(pattern: "delay.out.<out>", type: .float, defaultValue: 0, range: Mixer.delayRange,
                  summary: "Delay of one output in milliseconds, to line up devices of different latency; a change cross-fades over ramp.ms",
                  unit: .milliseconds, carried: .whenSet, scene: .halfWay)
        case .channelMap:
            .init(pattern: "channel-map", type: .intArray, defaultValue: 0, range: -1...255,
                  summary: "Core Audio channel map, one input index (or -1) per output; replaces the matrix", carried: .no,
                  rangeNote: "-1 or an input index, per output")
        case .ramp:
            .init(pattern: "ramp.ms", type: .float, defaultValue: Mixer.defaultRampMilliseconds, range: Mixer.rampRange,
                  summary: "Time every gain change glides over, in milliseconds (0 = jump)", unit: .milliseconds)
        case .inputCount:
            .init(pattern: "inputs", type: .int, defaultValue: 2, range: 1...256,
                  summary: "Number of input ports; changed live, surviving ports keep their links and gains", carried: .shape)
        case .outputCount:
            .init(pattern: "outputs", type: .int, defaultValue: 2, range: 1...256,
                  summary: "Number of output ports; a removed port fades out before it goes", carried: .shape)
        case .inputPositions:
            .init(pattern: "input.position", type: .names, defaultValue: 0, range: 1...256,
                  summary: "Channel names of the inputs (their ports are in_<name>); sets the count too", carried: .shape)
        case .outputPositions:
            .init(pattern: "output.position", type: .names, defaultValue: 0, range: 1...256,
                  summary: "Channel names of the outputs (their ports are out_<name>); sets the count too", carried: .shape)
        case .midiPorts:
            .init(pattern: "midi", type: .bool, defaultValue: 0, range: 0...1,
                  summary: "MIDI control: a midi_in port for controllers and a midi_out port for their feedback; switched live",
                  carried: .leftAlone(group: "midi"), midiMappable: false)
        case .midiMap:
            .init(pattern: "midi.map", type: .names, defaultValue: 0, range: 0...Double(MIDISetup.mappingLimit),
                  summary: "MIDI mappings, one string each: CONTROL KEY [toggle or momentary] [nopickup], e.g. \"cc 1 7 gain.in.0\" (README: MIDI control)",
                  carried: .leftAlone(group: "midi"),
                  rangeNote: "0 to \(MIDISetup.mappingLimit) mappings; CONTROL is cc CH N, cc14 CH N, note CH N or bend CH (channels 1 to 16)",
                  defaultNote: "none")
        case .midiLearn:
            .init(pattern: MIDILearn.key, type: .names, defaultValue: 0, range: 0...1,
                  summary: "A request, not a setting (not in Props): the next MIDI control that moves on midi_in is mapped to this key (added to midi.map); [] stops, and learning stops by itself after 60 s",
                  access: .writeOnly, rangeNote: "[ KEY ] (a gain, cross-point, mute, delay or ramp.ms) or []")
        case .devices:
            .init(pattern: VirtualDevice.key, type: .names, defaultValue: 0, range: 0...Double(VirtualDevice.limit),
                  summary: "Virtual devices applications choose, one string each: sink or source, NAME [position=FL,FR] [channels=C,C] [default] [description=TEXT] (README: Crosspoint as your sound output); send or receive, NAME to= or from=ADDRESS:PORT [session=NAME] [format=S16BE] [latency=MS] [protocol=rtp/vban/aes67] [group=NAME] [ptp=PATH]: a stream over the network (README: Beyond one machine)",
                  carried: .leftAlone(group: VirtualDevice.key),
                  rangeNote: "0 to \(VirtualDevice.limit) devices; a sink or a receive feeds inputs, a source or a send carries outputs (new channels NAME_POSITION when channels= is absent)",
                  defaultNote: "none")
        case .targets:
            .init(pattern: OutputTarget.key, type: .names, defaultValue: 0, range: 0...Double(OutputTarget.limit),
                  summary: "Outputs that follow a device, one string each: DEVICE [outputs=C,C] [offset=N]; DEVICE is a sink's node.name or default (README: Crosspoint as your sound output)",
                  carried: .leftAlone(group: OutputTarget.key),
                  rangeNote: "0 to \(OutputTarget.limit) groups; each output in one group at most; by position, or from channel N with offset=N",
                  defaultNote: "none")
        case .ducking:
            .init(pattern: DuckingRule.key, type: .names, defaultValue: 0, range: 0...Double(DuckingRule.limit),
                  summary: "Ducking rules, one string each: TRIGGER[,TRIGGER] lowers=CHANNEL[,out:CHANNEL] [depth=DB] [threshold=DB] [knee=DB] [attack=MS] [hold=MS] [release=MS] [detect=rms or peak] [off]; while the trigger inputs are above the threshold the node lowers the channels named (README: Ducking)",
                  carried: .leftAlone(group: DuckingRule.key), midiMappable: false,
                  rangeNote: "0 to \(DuckingRule.limit) rules; depth -60 to 0 dB (default -12), threshold -90 to 0 dBFS (-40), knee 0 to 40 dB (0), attack 0 to 5000 ms (20), hold and release 0 to 10000 ms (300, 600)",
                  defaultNote: "none")
        case .duckDepth:
            .init(pattern: "duck.depth.<rule>", type: .float, defaultValue: -12, range: DuckingRule.depthRange,
                  summary: "The depth of one ducking rule in dB (its depth=), for a MIDI knob or an OSC slider; <rule> is its number in duck or its trigger",
                  unit: .decibels, carried: .no)
        case .duckOn:
            .init(pattern: "duck.on.<rule>", type: .bool, defaultValue: 1, range: 0...1,
                  summary: "Whether one ducking rule applies (false: kept, off), for a MIDI button; <rule> is its number in duck or its trigger",
                  carried: .no)
        case .scenes:
            .init(pattern: Scene.key, type: .names, defaultValue: 0, range: 0...Double(Scene.limit),
                  summary: "Scenes, one string each: NAME in=CHANNELS out=CHANNELS [mute] [KEY=VALUE ...], the gains, mutes, matrix and delays of a mix (README: Scenes); crosspoint scene store writes them",
                  carried: .leftAlone(group: Scene.key), midiMappable: false,
                  rangeNote: "0 to \(Scene.limit) scenes; a key absent from a scene is at its default",
                  defaultNote: "none")
        case .sceneSafe:
            .init(pattern: "scene.safe", type: .names, defaultValue: 0, range: 0...Double(Mixer.sceneSafeLimit),
                  summary: "Recall safes: keys a scene recall or morph leaves as they are, e.g. [ gain.in.mic gain.master ]",
                  carried: .leftAlone(group: Scene.key), midiMappable: false,
                  rangeNote: "0 to \(Mixer.sceneSafeLimit) keys of gains, mutes, cross-points or delays", defaultNote: "none")
        case .morphScenes:
            .init(pattern: "scene.morph.between", type: .names, defaultValue: 0, range: 0...2,
                  summary: "The two scenes scene.morph fades between, e.g. [ soundcheck show ]",
                  carried: .leftAlone(group: Scene.key), midiMappable: false,
                  rangeNote: "none, or two scenes of the same channels", defaultNote: "none")
        case .morph:
            .init(pattern: "scene.morph", type: .float, defaultValue: 0, range: 0...1,
                  summary: "The morph fader: 0 is the first scene of scene.morph.between, 1 the second; in between every gain is on its way (in dB, equal power where one end is silent); safes stay",
                  unit: .fraction, carried: .no)
        case .sceneRecall:
            .init(pattern: SceneRecall.key, type: .names, defaultValue: 0, range: 1...2,
                  summary: "A request, not a setting (not in Props): the node moves to the scene over the time given, every gain along its curve; a change made meanwhile to a key takes it out of the move",
                  access: .writeOnly, rangeNote: "[ NAME ] (at the ramp) or [ NAME TIME ], TIME 0 to 60 s (10s, 2500ms)")
        case .levelsWatch:
            .init(pattern: LevelWatch.key, type: .intArray, defaultValue: 0, range: 0...Double(Int32.max),
                  summary: "A request, not a setting (not in Props): the node publishes its levels in the node property crosspoint.levels every interval ms (at least 33) for 4 s; renew it to keep them coming, interval 0 stops",
                  access: .writeOnly, rangeNote: "[ watcher interval ]: a watcher number from 1 to 2147483647, an interval from 0 to 60000 ms")
        }
    }
}

extension ParameterKind {
    /// The kind of a key by its shape alone (`gain.in.FL` is an input gain, whatever the node's
    /// channels): for what is checked before a node is at hand (a MIDI mapping's key).
    public init?(key: String) {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        guard !parts.contains(where: \.isEmpty),
              let kind = ParameterKind.allCases.first(where: { $0.family.matching(parts) != nil }) else { return nil }
        self = kind
    }
}

// The patterns are read with the standard library alone (split on ".", whole components
// compared), not with `String.replacing` or `StringProtocol.contains(_:)`: those come from
// _StringProcessing, which would link it and _RegexParser (about 1 MB) into the module.
extension ParameterFamily {
    /// The pattern with its placeholders filled: `matrix.<in>.<out>` -> `matrix.0.1`.
    func key(input: Int, output: Int, rule: Int = 0) -> String {
        key(input: input.decimalText, output: output.decimalText, rule: rule.decimalText)
    }

    /// The pattern with its placeholders filled by the words given: `matrix.FL.MONO`.
    /// Written byte by byte into one string: Props name every key of the node on every change
    /// (4,096 cross-points of a 64x64 node), and a split and a join a key were a quarter of
    /// what a moving scene cost the daemon's main loop.
    func key(input: String, output: String, rule: String = "") -> String {
        let bytes = pattern.utf8
        var key = ""
        key.reserveCapacity(bytes.count + input.utf8.count + output.utf8.count + rule.utf8.count)
        var start = bytes.startIndex
        while let open = bytes[start...].firstIndex(of: UInt8(ascii: "<")) {
            guard let close = bytes[open...].firstIndex(of: UInt8(ascii: ">")) else { break }
            key += Substring(bytes[start..<open])
            let name = bytes[bytes.index(after: open)..<close]
            if name.elementsEqual("in".utf8) { key += input }
            else if name.elementsEqual("out".utf8) { key += output }
            else if name.elementsEqual("rule".utf8) { key += rule }
            else { key += Substring(bytes[open...close]) }
            start = bytes.index(after: close)
        }
        key += Substring(bytes[start...])
        return key
    }

    /// The pattern's placeholders in order (`<in>`, `<out>`): the shape of its values in a
    /// preset, a list per placeholder (`matrix`: a row per input, a value per output).
    /// (Patterns are ASCII: a placeholder is told by its first byte, not by `hasPrefix(_:)`, whose
    /// walk by Characters costs the daemon a block of the standard library's code.)
    var placeholders: [Substring] { pattern.split(separator: ".").filter(\.isPlaceholder) }

    /// The key presets and the state file give the family: its pattern without the placeholders
    /// (`gain.in.<in>` -> `gain.in`, `matrix.<in>.<out>` -> `matrix`).
    public var presetKey: String {
        pattern.split(separator: ".", omittingEmptySubsequences: false).filter { !$0.isPlaceholder }.joinedBytes(separator: ".")
    }

    /// The default as a value: a number, true or false, an empty list.
    public var defaultParameterValue: ParameterValue {
        switch type {
        case .float, .int: .number(defaultValue)
        case .bool: .bool(defaultValue != 0)
        case .names: .names([])
        case .intArray: .ints([])
        }
    }

    /// The pattern's components if `parts` (a key split on ".") has its shape: the same
    /// words, anything where the pattern has a placeholder.
    func matching(_ parts: [Substring]) -> [Substring]? {
        let pattern = self.pattern.split(separator: ".", omittingEmptySubsequences: false)
        guard pattern.count == parts.count,
              zip(pattern, parts).allSatisfy({ $0.0.isPlaceholder || $0.0 == $0.1 }) else { return nil }
        return pattern
    }

    /// Whether the pattern has an input index (`<in>`).
    public var hasInput: Bool { pattern.split(separator: ".").contains("<in>") }
    /// Whether the pattern has an output index (`<out>`).
    public var hasOutput: Bool { pattern.split(separator: ".").contains("<out>") }
    /// Whether the pattern names a ducking rule (`<rule>`: its number in `duck`, or its trigger).
    public var hasRule: Bool { pattern.split(separator: ".").contains("<rule>") }
}

/// A value as it arrives from PipeWire (an Int, Float, Double or Bool pod) or the command line.
public enum ParameterValue: Equatable, Sendable, CustomStringConvertible {
    case number(Double)
    case bool(Bool)
    case ints([Int])
    case names([String])

    public var description: String {
        switch self {
        case let .number(v): DecimalText.text(v)
        case let .bool(v): "\(v)"
        case let .ints(v): "[" + v.map { $0.decimalText }.joinedBytes(separator: ",") + "]"
        case let .names(v): "[" + v.joinedBytes(separator: " ") + "]"
        }
    }
}

/// One concrete key of one node: a kind and, where its pattern has them, an input and an
/// output index (`matrix.0.1` is `.crosspoint` with input 0 and output 1), or a ducking rule's
/// number (`duck.depth.0`).
public struct Parameter: Hashable, Sendable {
    public let kind: ParameterKind
    /// The input index, for kinds whose pattern has `<in>`; else 0.
    public let input: Int
    /// The output index, for kinds whose pattern has `<out>`; else 0.
    public let output: Int
    /// The ducking rule's number, for kinds whose pattern has `<rule>`; else 0.
    public let rule: Int

    public init(_ kind: ParameterKind, input: Int = 0, output: Int = 0, rule: Int = 0) {
        let family = kind.family
        self.init(kind, family.hasInput ? input : 0, family.hasOutput ? output : 0, family.hasRule ? rule : 0)
    }

    /// For indices already 0 where the pattern has no placeholder (a walk over a family's
    /// values: a 256 x 256 matrix is 65536 keys, and a family is built per `kind.family`).
    init(_ kind: ParameterKind, _ input: Int, _ output: Int, _ rule: Int = 0) {
        self.kind = kind
        self.input = input
        self.output = output
        self.rule = rule
    }

    public static let masterGain = Parameter(.masterGain)
    public static func inputGain(_ i: Int) -> Parameter { Parameter(.inputGain, input: i) }
    public static func outputGain(_ j: Int) -> Parameter { Parameter(.outputGain, output: j) }
    public static func crosspoint(input i: Int, output j: Int) -> Parameter { Parameter(.crosspoint, input: i, output: j) }
    public static func inputMute(_ i: Int) -> Parameter { Parameter(.inputMute, input: i) }
    public static func outputMute(_ j: Int) -> Parameter { Parameter(.outputMute, output: j) }
    public static func outputDelay(_ j: Int) -> Parameter { Parameter(.outputDelay, output: j) }
    public static let channelMap = Parameter(.channelMap)
    public static let ramp = Parameter(.ramp)
    public static let inputCount = Parameter(.inputCount)
    public static let outputCount = Parameter(.outputCount)
    public static let inputPositions = Parameter(.inputPositions)
    public static let outputPositions = Parameter(.outputPositions)
    public static let levelsWatch = Parameter(.levelsWatch)

    /// The table, in the order PropInfo lists it.
    public static let families: [ParameterFamily] = ParameterKind.allCases.map(\.family)

    /// The family of a key without placeholders (`inputs`, `ramp.ms`); nil for indexed keys.
    public static func family(ofKey key: String) -> ParameterFamily? {
        families.first { $0.pattern == key }
    }

    /// The canonical key, with indices: `matrix.0.1`.
    public var key: String { kind.family.key(input: input, output: output, rule: rule) }

    /// The key with the channel names of `mixer` for its indices (`matrix.FL.MONO`; a rule by
    /// its trigger where no other rule has it), as completion offers it.
    public func name(in mixer: Mixer) -> String {
        kind.family.key(input: mixer.inputChannels[input], output: mixer.outputChannels[output],
                        rule: kind.family.hasRule ? mixer.duckingRuleName(rule) : "")
    }

    /// Whether `mixer` has this key (its channel, its rule).
    public func exists(in mixer: Mixer) -> Bool {
        input < mixer.inputs && output < mixer.outputs && (!kind.family.hasRule || rule < mixer.ducking.count)
    }

    /// Parses a key by the patterns of the table; indices may be numbers or the channel
    /// names of `mixer` (`matrix.FL.MONO`, `gain.out.AUX3`).
    public init(key: String, in mixer: Mixer) throws(CrosspointError) {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        for kind in ParameterKind.allCases {
            guard let pattern = kind.family.matching(parts) else { continue }
            var input = 0, output = 0, rule = 0
            do throws(CrosspointError) {
                for (placeholder, part) in zip(pattern, parts) {
                    if placeholder == "<in>" { input = try mixer.inputIndex(part) }
                    if placeholder == "<out>" { output = try mixer.outputIndex(part) }
                    if placeholder == "<rule>" { rule = try mixer.duckingRuleIndex(part) }
                }
            } catch {
                throw .invalidValue(key: key, reason: error.description)
            }
            self.init(kind, input: input, output: output, rule: rule)
            return
        }
        throw .unknownKey(key)
    }

    /// Every concrete key of a mixer, in table order.
    public static func all(for mixer: Mixer) -> [Parameter] {
        ParameterKind.allCases.flatMap { all(of: $0, for: mixer) }
    }

    /// Every concrete key of one kind on `mixer`.
    public static func all(of kind: ParameterKind, for mixer: Mixer) -> [Parameter] {
        let family = kind.family
        if family.hasRule { return mixer.ducking.indices.map { Parameter(kind, 0, 0, $0) } }
        var keys: [Parameter] = []
        for i in family.hasInput ? 0..<mixer.inputs : 0..<1 {
            for j in family.hasOutput ? 0..<mixer.outputs : 0..<1 { keys.append(Parameter(kind, i, j)) }
        }
        return keys
    }

    /// A one-line description of this key on this mixer, naming its channels.
    public func summary(in mixer: Mixer) -> String {
        let family = kind.family
        let input = "input \(self.input) (\(mixer.inputChannels[self.input]))"
        let output = "output \(self.output) (\(mixer.outputChannels[self.output]))"
        if family.hasRule, rule < mixer.ducking.count { return "\(family.summary): rule \(rule) (\(mixer.ducking[rule].text))" }
        switch (family.hasInput, family.hasOutput) {
        case (true, true): return "\(family.summary): \(input) to \(output)"
        case (true, false): return "\(family.summary): \(input)"
        case (false, true): return "\(family.summary): \(output)"
        case (false, false): return family.summary
        }
    }
}

extension Mixer {
    /// The current value of a key. `channel-map` is empty when the matrix is not a pure routing.
    public func value(of p: Parameter) -> ParameterValue {
        switch p.kind {
        case .masterGain: .number(Double(masterGain))
        case .inputGain: .number(Double(inputGains[p.input]))
        case .outputGain: .number(Double(outputGains[p.output]))
        case .crosspoint: .number(Double(crosspoint(input: p.input, output: p.output)))
        case .inputMute: .bool(inputMutes[p.input])
        case .outputMute: .bool(outputMutes[p.output])
        case .outputDelay: .number(outputDelays[p.output])
        case .channelMap: .ints(channelMap?.sources ?? [])
        case .ramp: .number(rampMilliseconds)
        case .inputCount: .number(Double(inputs))
        case .outputCount: .number(Double(outputs))
        case .inputPositions: .names(inputChannels)
        case .outputPositions: .names(outputChannels)
        case .midiPorts: .bool(midi.ports)
        case .midiMap: .names(midi.texts)
        case .midiLearn: .names([])  // write-only: nothing to read back
        case .devices: .names(devices.map(\.text))
        case .targets: .names(targets.map(\.text))
        case .ducking: .names(ducking.map(\.text))
        case .scenes: .names(scenes.map(\.text))
        case .sceneSafe: .names(sceneSafes)
        case .morphScenes: .names(morphScenes)
        case .morph: .number(morphPosition)
        case .duckDepth: .number(p.rule < ducking.count ? ducking[p.rule].depth : ParameterKind.duckDepth.family.defaultValue)
        case .duckOn: .bool(p.rule < ducking.count ? ducking[p.rule].enabled : true)
        case .sceneRecall: .names([])  // write-only: nothing to read back
        case .levelsWatch: .ints([])  // write-only: nothing to read back
        }
    }

    /// Sets a key from a value as PipeWire delivers it. Numbers are accepted for gains, bools
    /// and the numbers 0 and 1 for mutes, an integer list for the channel map.
    public mutating func set(_ p: Parameter, to value: ParameterValue) throws(CrosspointError) {
        var key: String { p.key }  // for errors only: a preset sets every cross-point through here
        switch (p.kind, value) {
        case let (.masterGain, .number(v)): try setMasterGain(v)
        case let (.inputGain, .number(v)): try setInputGain(p.input, v)
        case let (.outputGain, .number(v)): try setOutputGain(p.output, v)
        case let (.crosspoint, .number(v)): try setCrosspoint(input: p.input, output: p.output, gain: v)
        case (.inputMute, _): try setInputMute(p.input, try Mixer.flag(value, key: key))
        case (.outputMute, _): try setOutputMute(p.output, try Mixer.flag(value, key: key))
        case let (.outputDelay, .number(v)): try setOutputDelay(p.output, milliseconds: v)
        case let (.channelMap, .ints(sources)): try apply(ChannelMap(sources))
        case let (.ramp, .number(v)): try setRamp(milliseconds: v)
        case let (.inputCount, .number(v)): try resize(inputs: try Mixer.count(v, key: key), outputs: outputs)
        case let (.outputCount, .number(v)): try resize(inputs: inputs, outputs: try Mixer.count(v, key: key))
        case let (.inputPositions, .names(names)): try setChannels(inputs: names)
        case let (.outputPositions, .names(names)): try setChannels(outputs: names)
        case (.midiPorts, _): setMIDIPorts(try Mixer.flag(value, key: key))
        case let (.midiMap, .names(texts)): try setMIDIMappings(texts)
        case (.midiMap, .ints([])): try setMIDIMappings([])  // an empty list reads as either
        case (.midiMap, _):
            throw .invalidValue(key: key, reason: "expects a list of mappings like [ \"cc 1 7 gain.in.0\" ], got \(value)")
        case let (.devices, .names(texts)): try setDevices(texts)
        case (.devices, .ints([])): try setDevices([])
        case let (.targets, .names(texts)): try setTargets(texts)
        case (.targets, .ints([])): try setTargets([])
        case let (.ducking, .names(texts)): try setDucking(texts)
        case (.ducking, .ints([])): try setDucking([])
        case (.ducking, _):
            throw .invalidValue(key: key, reason: "expects a list of rules like [ \"mic lowers=music_FL,music_FR depth=-15\" ], got \(value)")
        case let (.scenes, .names(texts)): try setScenes(texts)
        case (.scenes, .ints([])): try setScenes([])
        case (.scenes, _):
            throw .invalidValue(key: key, reason: "expects a list of scenes like [ \"show in=FL,FR out=FL,FR gain.in.FL=0.5\" ], got \(value)")
        case let (.sceneSafe, .names(keys)): try setSceneSafes(keys)
        case (.sceneSafe, .ints([])): try setSceneSafes([])
        case (.sceneSafe, _):
            throw .invalidValue(key: key, reason: "expects a list of keys like [ gain.in.mic gain.master ], got \(value)")
        case let (.morphScenes, .names(names)): try setMorphScenes(names)
        case (.morphScenes, .ints([])): try setMorphScenes([])
        case (.morphScenes, _):
            throw .invalidValue(key: key, reason: "expects two scene names like [ soundcheck show ], got \(value)")
        case let (.morph, .number(v)): try setMorph(v)
        case let (.duckDepth, .number(v)): try setDuckingDepth(p.rule, v)
        case (.duckOn, _): try setDuckingEnabled(p.rule, try Mixer.flag(value, key: key))
        case (.sceneRecall, _):
            let request = try SceneRecall(value)
            guard scene(named: request.name) != nil else {
                throw .invalidValue(key: key, reason: "there is no scene '\(request.name)'" + (scenes.isEmpty ? " (the node has none)" : " (it has \(scenes.map(\.name).joinedBytes(separator: ", ")))"))
            }
        case (.targets, _):
            throw .invalidValue(key: key, reason: "expects a list of targets like [ \"default outputs=FL,FR\" ], got \(value)")
        case (.devices, _):
            throw .invalidValue(key: key, reason: "expects a list of devices like [ \"sink game description=Game\" ], got \(value)")
        // A request to the running node: the node part that claims the key takes it out of a
        // set-param before the model sees the rest (NodePart.claimedKeys, NodeHost); here (a
        // client checking a change) the model checks it and is left as it is.
        case (.levelsWatch, _): _ = try LevelWatch(value)
        case (.midiLearn, _): _ = try MIDILearn(value)
        case (.inputPositions, _), (.outputPositions, _):
            throw .invalidValue(key: key, reason: "expects a list of channel names like [ FL FR ], got \(value)")
        case (.channelMap, _):
            throw .invalidValue(key: key, reason: "expects an array of integers, got \(value)")
        default:
            throw .invalidValue(key: key, reason: "expects a number, got \(value)")
        }
    }

    /// A channel count from a number as it arrives (a pod, an argument). `Int(exactly:)` and
    /// not `Int(_:)`: the latter traps on 1e20, and a trap here would kill the user's daemon.
    public static func count(_ value: Double, key: String) throws(CrosspointError) -> Int {
        guard value.isFinite else { throw .notFinite(key: key, value: value) }
        guard let count = Int(exactly: value), Mixer.channelLimit.contains(count) else {
            throw .invalidValue(key: key, reason: "must be a whole number from 1 to 256, got \(Gain.format(value))")
        }
        return count
    }

    /// A flag as it arrives: true, false, or the numbers 1 and 0.
    public static func flag(_ value: ParameterValue, key: String) throws(CrosspointError) -> Bool {
        switch value {
        case let .bool(b): return b
        case .number(0): return false
        case .number(1): return true
        default: throw .invalidValue(key: key, reason: "expects true or false, got \(value)")
        }
    }
}

extension Parameter {
    /// The parameter table as JSON, for the control surface (`GET /api/params`): per family its
    /// key, type, default, range (`min`, `max`), unit (`gain`, `ms`, `fraction` or `dB`, for a
    /// float) and meaning.
    public static var tableJSON: JSONValue {
        .array(families.filter { $0.access == .readWrite }.map { f in
            .object([("key", .string(f.pattern)), ("type", .string(f.type.rawValue)), ("default", .number(f.defaultValue)),
                     ("min", .number(f.range.lowerBound)), ("max", .number(f.range.upperBound)),
                     ("unit", f.type != .float ? .null : .string(f.unit.name)), ("meaning", .string(f.summary))])
        })
    }

    /// One row of the table as people read it (the README, `crosspoint params` and its
    /// `--json`): a family's key, type, default and range in words, and meaning.
    public struct TableRow: Sendable, Equatable {
        public let key: String
        public let type: String
        public let `default`: String
        public let range: String
        public let meaning: String
    }

    /// The parameter table's rows, one per family, in the table's order.
    public static var tableRows: [TableRow] {
        families.map { f in
            var def: String
            var range: String
            switch f.type {
            case .float:
                def = Gain.format(f.defaultValue)
                range = "\(Gain.format(f.range.lowerBound)) to \(Gain.format(f.range.upperBound))"
            case .int:
                def = "from the module arguments"
                range = "\(Gain.format(f.range.lowerBound)) to \(Gain.format(f.range.upperBound))"
            case .bool:
                def = f.defaultValue == 0 ? "false" : "true"
                range = "true, false"
            case .names:
                def = "from the module arguments"
                range = "1 to 256 names (ASCII letters, digits, _; not all digits)"
            case .intArray:
                def = "identity"
                range = "\(Gain.format(f.range.lowerBound)) to \(Gain.format(f.range.upperBound))"
            }
            if let note = f.rangeNote { range = note }
            if let note = f.defaultNote { def = note }
            if f.access == .writeOnly { def = "none (write-only)" }
            return TableRow(key: f.pattern, type: f.type.rawValue, default: def, range: range, meaning: f.summary)
        }
    }

    /// The parameter table as Markdown, for the README (`crosspoint params --markdown`).
    public static func markdownTable() -> String {
        var lines = ["| key | type | default | range | meaning |", "|---|---|---|---|---|"]
        for row in tableRows {
            lines.append("| `\(row.key)` | \(row.type) | \(row.default) | \(row.range) | \(row.meaning) |")
        }
        return lines.joinedBytes(separator: "\n")
    }
}

extension ParameterFamily.Unit {
    /// As `GET /api/params` names it.
    var name: String {
        switch self {
        case .gain: "gain"
        case .milliseconds: "ms"
        case .fraction: "fraction"
        case .decibels: "dB"
        }
    }
}

private extension Substring {
    /// Whether this word of a pattern is a placeholder (`<in>`, `<out>`).
    var isPlaceholder: Bool { utf8.first == UInt8(ascii: "<") }
}
