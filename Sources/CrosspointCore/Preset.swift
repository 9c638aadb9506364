/// Everything a user sets on a mixer, as a file: `crosspoint save` writes one, `crosspoint
/// load` applies one, and a node can keep its state in the same form.
///
/// The JSON keys are the module arguments' and the parameter table's:
///
///     {
///       "format": "crosspoint-preset",
///       "version": 1,
///       "inputs": 2,
///       "outputs": 1,
///       "input.position": ["FL", "FR"],
///       "output.position": ["MONO"],
///       "gain.master": 1,
///       "mute.master": false,
///       "gain.in": [1, 1],
///       "mute.in": [false, false],
///       "gain.out": [1],
///       "mute.out": [false],
///       "matrix": [[0.5], [0.5]],
///       "ramp.ms": 10
///     }
///
/// Gains are linear (negative flips polarity), `matrix` has one row per input and one gain
/// per output in each row. `format`, `version`, `inputs`, `outputs` and `matrix` are
/// required; a missing `input.position`/`output.position` means the default channel names,
/// missing gains 1, missing mutes false, a missing `ramp.ms` the default ramp.
/// `midi` and `midi.map` (MIDI control, MIDISetup.swift) are written only when MIDI control is
/// set up; a preset without them leaves the node's MIDI control as it is. `devices` (virtual
/// devices, VirtualDevices.swift) likewise: written only when there are some, absent leaves them.
/// `delay.out` (one delay in milliseconds per output) is written only when an output is
/// delayed; absent means no delay.
/// Applying a preset checks every value with the mixer's own setters, so an error names the
/// parameter key (`gain.in.1: 12.0 is outside -10.0...10.0`) and changes nothing.
public struct Preset: Codable, Equatable, Sendable {
    public static let formatTag = "crosspoint-preset"
    public static let currentVersion = 1

    public var format: String
    public var version: Int
    public var inputs: Int
    public var outputs: Int
    public var inputChannels: [String]
    public var outputChannels: [String]
    public var masterGain: Double
    public var masterMute: Bool
    public var inputGains: [Double]
    public var inputMutes: [Bool]
    public var outputGains: [Double]
    public var outputMutes: [Bool]
    /// Delays of the outputs in milliseconds (`delay.out`): nil is none.
    public var outputDelays: [Double]?
    /// One row per input, one gain per output.
    public var matrix: [[Double]]
    public var rampMilliseconds: Double
    /// MIDI control (`midi`, `midi.map`): nil leaves it as it is.
    public var midiPorts: Bool?
    public var midiMappings: [String]?
    /// Virtual devices (`devices`): nil leaves them as they are.
    public var devices: [String]?
    /// Output groups that follow a device (`targets`): nil leaves them as they are.
    public var targets: [String]?

    enum CodingKeys: String, CodingKey {
        case format, version, inputs, outputs
        case inputChannels = "input.position", outputChannels = "output.position"
        case masterGain = "gain.master", masterMute = "mute.master"
        case inputGains = "gain.in", inputMutes = "mute.in"
        case outputGains = "gain.out", outputMutes = "mute.out", outputDelays = "delay.out"
        case matrix
        case rampMilliseconds = "ramp.ms"
        case midiPorts = "midi", midiMappings = "midi.map"
        case devices, targets
    }

    /// The state of `mixer`. Gains are written as the shortest decimal that reads back as the
    /// same Float (`0.3`, not `0.30000001192092896`).
    public init(_ mixer: Mixer) {
        format = Preset.formatTag
        version = Preset.currentVersion
        inputs = mixer.inputs
        outputs = mixer.outputs
        inputChannels = mixer.inputChannels
        outputChannels = mixer.outputChannels
        masterGain = Preset.decimal(mixer.masterGain)
        masterMute = mixer.masterMute
        inputGains = mixer.inputGains.map(Preset.decimal)
        inputMutes = mixer.inputMutes
        outputGains = mixer.outputGains.map(Preset.decimal)
        outputMutes = mixer.outputMutes
        if mixer.hasDelays { outputDelays = mixer.outputDelays }
        matrix = (0..<mixer.inputs).map { i in
            (0..<mixer.outputs).map { j in Preset.decimal(mixer.crosspoint(input: i, output: j)) }
        }
        rampMilliseconds = mixer.rampMilliseconds
        if mixer.midi != MIDISetup() {
            midiPorts = mixer.midi.ports
            midiMappings = mixer.midi.texts
        }
        if !mixer.devices.isEmpty { devices = mixer.devices.map(\.text) }
        if !mixer.targets.isEmpty { targets = mixer.targets.map(\.text) }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        format = try c.decode(String.self, forKey: .format)
        version = try c.decode(Int.self, forKey: .version)
        inputs = try c.decode(Int.self, forKey: .inputs)
        outputs = try c.decode(Int.self, forKey: .outputs)
        matrix = try c.decode([[Double]].self, forKey: .matrix)
        // Defaults for what is left out; a count outside 1...256 is refused by `validateShape`.
        let limit = Mixer.channelLimit.upperBound
        let (n, m) = (min(max(inputs, 0), limit), min(max(outputs, 0), limit))
        inputChannels = try c.decodeIfPresent([String].self, forKey: .inputChannels) ?? Mixer.defaultChannels(count: n)
        outputChannels = try c.decodeIfPresent([String].self, forKey: .outputChannels) ?? Mixer.defaultChannels(count: m)
        masterGain = try c.decodeIfPresent(Double.self, forKey: .masterGain) ?? 1
        masterMute = try c.decodeIfPresent(Bool.self, forKey: .masterMute) ?? false
        inputGains = try c.decodeIfPresent([Double].self, forKey: .inputGains) ?? Array(repeating: 1, count: n)
        inputMutes = try c.decodeIfPresent([Bool].self, forKey: .inputMutes) ?? Array(repeating: false, count: n)
        outputGains = try c.decodeIfPresent([Double].self, forKey: .outputGains) ?? Array(repeating: 1, count: m)
        outputMutes = try c.decodeIfPresent([Bool].self, forKey: .outputMutes) ?? Array(repeating: false, count: m)
        outputDelays = try c.decodeIfPresent([Double].self, forKey: .outputDelays)
        rampMilliseconds = try c.decodeIfPresent(Double.self, forKey: .rampMilliseconds) ?? Mixer.defaultRampMilliseconds
        midiPorts = try c.decodeIfPresent(Bool.self, forKey: .midiPorts)
        midiMappings = try c.decodeIfPresent([String].self, forKey: .midiMappings)
        devices = try c.decodeIfPresent([String].self, forKey: .devices)
        targets = try c.decodeIfPresent([String].self, forKey: .targets)
    }

    /// Checks the tag, the version and that every list has the length the preset's shape asks for.
    public func validateShape() throws(CrosspointError) {
        guard format == Preset.formatTag else {
            throw .invalidValue(key: "format", reason: "is '\(format)'; a Crosspoint preset says '\(Preset.formatTag)'")
        }
        guard version >= 1, version <= Preset.currentVersion else {
            throw .invalidValue(
                key: "version", reason: "\(version) is not a preset version this Crosspoint reads (1 to \(Preset.currentVersion))")
        }
        guard Mixer.channelLimit.contains(inputs) else { throw .channelCount(what: "inputs", value: inputs) }
        guard Mixer.channelLimit.contains(outputs) else { throw .channelCount(what: "outputs", value: outputs) }
        for (key, count, expected, what) in [
            ("input.position", inputChannels.count, inputs, "inputs"), ("output.position", outputChannels.count, outputs, "outputs"),
            ("gain.in", inputGains.count, inputs, "inputs"), ("mute.in", inputMutes.count, inputs, "inputs"),
            ("gain.out", outputGains.count, outputs, "outputs"), ("mute.out", outputMutes.count, outputs, "outputs"),
            ("delay.out", outputDelays?.count ?? outputs, outputs, "outputs"),
            ("matrix", matrix.count, inputs, "inputs"),
        ] where count != expected {
            throw .shapeMismatch("\(key) has \(count) entries but the preset has \(expected) \(what)")
        }
    }

    /// Names the channels whose names differ from `mixer`'s (a preset of the right shape still
    /// applies; the caller may want to warn), or nil when they all match.
    public func channelNameDifferences(from mixer: Mixer) -> String? {
        var differences: [String] = []
        for (what, mine, theirs) in [("input", inputChannels, mixer.inputChannels), ("output", outputChannels, mixer.outputChannels)]
        where mine != theirs {
            differences.append("\(what)s are [\(mine.joined(separator: " "))] in the preset, [\(theirs.joined(separator: " "))] on the node")
        }
        return differences.isEmpty ? nil : differences.joined(separator: "; ")
    }

    /// The shortest decimal that reads back as the same Float (`0.3`, not `0.30000001192092896`).
    public static func decimal(_ value: Float) -> Double { Double("\(value)") ?? Double(value) }
}

extension Mixer {
    /// Everything set on this mixer, as a preset.
    public var preset: Preset { Preset(self) }

    /// A mixer of the preset's shape and channel names, with its state.
    public init(preset: Preset) throws(CrosspointError) {
        try preset.validateShape()
        self = try Mixer(inputs: preset.inputs, outputs: preset.outputs,
                         inputChannels: preset.inputChannels, outputChannels: preset.outputChannels)
        try apply(preset)
    }

    /// Sets everything the preset holds. The preset must have this mixer's shape; channel names
    /// are not changed (see `Preset.channelNameDifferences`). Changes nothing when it throws.
    public mutating func apply(_ preset: Preset) throws(CrosspointError) {
        try preset.validateShape()
        guard preset.inputs == inputs, preset.outputs == outputs else {
            throw .shapeMismatch(
                "the preset is for \(preset.inputs) inputs x \(preset.outputs) outputs but the node has \(inputs) x \(outputs)")
        }
        var next = self
        try next.setMasterGain(preset.masterGain)
        next.setMasterMute(preset.masterMute)
        for i in 0..<inputs {
            try next.setInputGain(i, preset.inputGains[i])
            try next.setInputMute(i, preset.inputMutes[i])
        }
        for j in 0..<outputs {
            try next.setOutputGain(j, preset.outputGains[j])
            try next.setOutputMute(j, preset.outputMutes[j])
            try next.setOutputDelay(j, milliseconds: preset.outputDelays?[j] ?? 0)
        }
        try next.setMatrix(rows: preset.matrix)
        try next.setRamp(milliseconds: preset.rampMilliseconds)
        if let ports = preset.midiPorts { next.setMIDIPorts(ports) }
        if let mappings = preset.midiMappings { try next.setMIDIMappings(mappings) }
        if let devices = preset.devices { try next.setDevices(devices) }
        if let targets = preset.targets { try next.setTargets(targets) }
        self = next
    }
}

// MARK: JSON

extension Preset {
    /// The keys of a preset, in the order they are written.
    public static let keys = [
        "format", "version", "inputs", "outputs", "input.position", "output.position", "gain.master", "mute.master",
        "gain.in", "mute.in", "gain.out", "mute.out", "delay.out", "matrix", "ramp.ms", "midi", "midi.map",
        "devices", "targets",
    ]

    /// The preset as JSON (the file `crosspoint save` writes, the `mixer` of a state file).
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("format", .string(format)), ("version", .number(Double(version))),
            ("inputs", .number(Double(inputs))), ("outputs", .number(Double(outputs))),
            ("input.position", .array(inputChannels.map(JSONValue.string))),
            ("output.position", .array(outputChannels.map(JSONValue.string))),
            ("gain.master", .number(masterGain)), ("mute.master", .bool(masterMute)),
            ("gain.in", .array(inputGains.map(JSONValue.number))), ("mute.in", .array(inputMutes.map(JSONValue.bool))),
            ("gain.out", .array(outputGains.map(JSONValue.number))), ("mute.out", .array(outputMutes.map(JSONValue.bool))),
        ]
        if let outputDelays { members.append(("delay.out", .array(outputDelays.map(JSONValue.number)))) }
        members += [
            ("matrix", .array(matrix.map { .array($0.map(JSONValue.number)) })),
            ("ramp.ms", .number(rampMilliseconds)),
        ]
        if let midiPorts { members.append(("midi", .bool(midiPorts))) }
        if let midiMappings { members.append(("midi.map", .array(midiMappings.map(JSONValue.string)))) }
        if let devices { members.append(("devices", .array(devices.map(JSONValue.string)))) }
        if let targets { members.append(("targets", .array(targets.map(JSONValue.string)))) }
        return .object(members)
    }

    /// Reads a preset from JSON: `format`, `version`, `inputs`, `outputs` and `matrix` are
    /// required, the rest default as the type's documentation says; an unknown key, a value of
    /// the wrong type or a list longer than a node can have is refused, naming the key. The
    /// shape is checked by `validateShape` (and so by `Mixer(preset:)`).
    public init(json: JSONValue, what: String = "preset") throws(CrosspointError) {
        let m = try json.members(of: what, known: Preset.keys)
        func required(_ key: String) throws(CrosspointError) -> JSONValue {
            guard let value = m[key] else { throw .invalidValue(key: key, reason: "is missing from the \(what)") }
            return value
        }
        let limit = Mixer.channelLimit.upperBound
        format = try required("format").string("format")
        version = try required("version").int("version")
        inputs = try required("inputs").int("inputs")
        outputs = try required("outputs").int("outputs")
        matrix = try required("matrix").list("matrix", limit: limit) { row, key throws(CrosspointError) in
            try row.list(key, limit: limit) { v, k throws(CrosspointError) in try v.double(k) }
        }
        let (n, m2) = (min(max(inputs, 0), limit), min(max(outputs, 0), limit))
        func names(_ key: String, _ count: Int) throws(CrosspointError) -> [String] {
            try m[key]?.list(key, limit: limit) { v, k throws(CrosspointError) in try v.string(k) } ?? Mixer.defaultChannels(count: count)
        }
        func doubles(_ key: String, _ count: Int, _ fill: Double) throws(CrosspointError) -> [Double] {
            try m[key]?.list(key, limit: limit) { v, k throws(CrosspointError) in try v.double(k) } ?? Array(repeating: fill, count: count)
        }
        func bools(_ key: String, _ count: Int) throws(CrosspointError) -> [Bool] {
            try m[key]?.list(key, limit: limit) { v, k throws(CrosspointError) in try v.bool(k) } ?? Array(repeating: false, count: count)
        }
        inputChannels = try names("input.position", n)
        outputChannels = try names("output.position", m2)
        masterGain = try m["gain.master"]?.double("gain.master") ?? 1
        masterMute = try m["mute.master"]?.bool("mute.master") ?? false
        inputGains = try doubles("gain.in", n, 1)
        inputMutes = try bools("mute.in", n)
        outputGains = try doubles("gain.out", m2, 1)
        outputMutes = try bools("mute.out", m2)
        outputDelays = try m["delay.out"]?.list("delay.out", limit: limit) { v, k throws(CrosspointError) in try v.double(k) }
        rampMilliseconds = try m["ramp.ms"]?.double("ramp.ms") ?? Mixer.defaultRampMilliseconds
        midiPorts = try m["midi"]?.bool("midi")
        midiMappings = try m["midi.map"]?.list("midi.map", limit: MIDISetup.mappingLimit) { v, k throws(CrosspointError) in try v.string(k) }
        devices = try m["devices"]?.list("devices", limit: VirtualDevice.limit) { v, k throws(CrosspointError) in try v.string(k) }
        targets = try m["targets"]?.list("targets", limit: OutputTarget.limit) { v, k throws(CrosspointError) in try v.string(k) }
    }
}
