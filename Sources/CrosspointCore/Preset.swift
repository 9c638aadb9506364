/// Everything a user sets on a mixer, as a file: `crosspoint save` writes one, `crosspoint
/// load` applies one, and a node keeps its state in the same form (the state file's `mixer`).
///
/// The JSON keys are the parameter table's, each family under its pattern without the
/// placeholders (`ParameterFamily.presetKey`), as the table's `carried` says:
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
/// A key with an input index is a list of one value per input (`gain.in`), with an output
/// index one per output (`gain.out`, `delay.out`), with both a row per input of one value per
/// output (`matrix`); each value typed as the table types it. Gains are linear (negative flips
/// polarity), written as the shortest decimal of their Float. `format`, `version`, `inputs`,
/// `outputs` and `matrix` are required; a missing `input.position`/`output.position` means the
/// default channel names, any other missing key its default (gains 1, mutes false, the default
/// ramp, no delay), except those a preset writes only when they are set and leaves alone when
/// they are absent (`midi` and `midi.map`, `devices`, `targets`: a preset saved without them
/// does not undo them). `delay.out` is written only when an output is delayed. `mute.master`
/// is the master mute, PipeWire's own `mute` (no key of the table): written after
/// `gain.master`, false when absent.
///
/// One path reads and writes it, made from the table: `json` and `init(json:)` (the node's
/// state file: plain Swift, no Foundation; `crosspoint load`, after Foundation's strict
/// decoder), and `Codable` through them (`crosspoint save`, `show --json`). A key added to
/// the table is carried without a change here.
/// Applying a preset checks every value with the mixer's own setters (`Mixer.set`), so an
/// error names the parameter key (`gain.in.1: 12.0 is outside -10.0...10.0`) and changes nothing.
public struct Preset: Equatable, Sendable {
    public static let formatTag = "crosspoint-preset"
    public static let currentVersion = 1
    /// The master mute: PipeWire's standard `mute`, not a key of the parameter table.
    public static let masterMuteKey = "mute.master"

    public var format: String
    public var version: Int
    /// The shape (the table's `inputs`, `outputs`, `input.position`, `output.position`).
    public var inputs: Int
    public var outputs: Int
    public var inputChannels: [String]
    public var outputChannels: [String]
    public var masterMute: Bool
    /// The values of the table's keys, by kind; a kind the preset leaves out is absent.
    public var values: [ParameterKind: PresetValue]

    /// The kinds that give a preset its shape, in table order.
    static let shapeKinds = ParameterKind.allCases.filter { $0.family.carried == .shape }
    /// The kinds a preset carries, in the order it writes, reads and applies them: the table's,
    /// with the keys of channels together where the first of them stands, those of the inputs,
    /// then of the outputs, then the matrix (a file reads input strips, output strips, the
    /// matrix; as presets always have).
    static let carriedKinds: [ParameterKind] = {
        let carried = ParameterKind.allCases.filter { ![.no, .shape].contains($0.family.carried) }
        let channels = carried.filter { $0.family.hasInput || $0.family.hasOutput }
        let grouped = channels.filter { !$0.family.hasOutput } + channels.filter { !$0.family.hasInput }
            + channels.filter { $0.family.hasInput && $0.family.hasOutput }
        return carried.flatMap { kind in
            !channels.contains(kind) ? [kind] : kind == channels.first ? grouped : []
        }
    }()

    /// The state of `mixer`. Gains are written as the shortest decimal that reads back as the
    /// same Float (`0.3`, not `0.30000001192092896`).
    public init(_ mixer: Mixer) {
        format = Preset.formatTag
        version = Preset.currentVersion
        inputs = mixer.inputs
        outputs = mixer.outputs
        inputChannels = mixer.inputChannels
        outputChannels = mixer.outputChannels
        masterMute = mixer.masterMute
        values = [:]
        var groups: [(kind: ParameterKind, value: PresetValue, group: String)] = []
        var groupsSet = Set<String>()
        for kind in Preset.carriedKinds {
            let family = kind.family
            var atDefault = true
            let value = PresetValue(kind, family, of: mixer, atDefault: &atDefault)
            switch family.carried {
            case .whenSet where atDefault: break
            case let .leftAlone(group):
                groups.append((kind, value, group))
                if !atDefault { groupsSet.insert(group) }
            default: values[kind] = value
            }
        }
        for (kind, value, group) in groups where groupsSet.contains(group) { values[kind] = value }
    }

    /// Checks the tag, the version, that the table's required keys are there and that every
    /// list has the length the preset's shape asks for.
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
        for (kind, names, count, noun) in [(ParameterKind.inputPositions, inputChannels, inputs, "input"),
                                           (.outputPositions, outputChannels, outputs, "output")] where names.count != count {
            throw .shapeMismatch("\(kind.family.presetKey) has \(Preset.counted(names.count, "entry", "entries")) "
                + "but the preset has \(Preset.counted(count, noun))")
        }
        for kind in Preset.carriedKinds {
            let family = kind.family
            guard let value = values[kind] else {
                guard family.carried != .required else {
                    throw .invalidValue(key: family.presetKey, reason: "is missing from the preset")
                }
                continue
            }
            try check(value, family.placeholders[...], family.presetKey, rows: [])
        }
    }

    /// Checks that `value` is a list of one entry per input or output for each placeholder;
    /// `rows` are the indices of the lists it is in (`matrix row 1`), for the error.
    private func check(_ value: PresetValue, _ placeholders: ArraySlice<Substring>, _ key: String, rows: [Int]) throws(CrosspointError) {
        var what: String { ([key] + rows.map { "row \($0)" }).joinedBytes(separator: " ") }
        guard let placeholder = placeholders.first else {
            guard case .value = value else { throw .shapeMismatch("\(what) is a list but the preset has one value there") }
            return
        }
        let (count, noun) = placeholder == "<in>" ? (inputs, "input") : (outputs, "output")
        guard case let .list(items) = value else {
            throw .shapeMismatch("\(what) is one value but the preset has one per \(noun)")
        }
        guard items.count == count else {
            throw .shapeMismatch("\(what) has \(Preset.counted(items.count, "entry", "entries")) but the preset has \(Preset.counted(count, noun))")
        }
        for (k, item) in items.enumerated() {
            if placeholders.count > 1 {
                try check(item, placeholders.dropFirst(), key, rows: rows + [k])
            } else if case .list = item {  // values (checked by the mixer's setters) there, not lists
                throw .shapeMismatch("\(what) holds a list where the preset has one value")
            }
        }
    }

    /// `1 entry`, `2 entries`; `1 input`, `2 inputs`.
    static func counted(_ n: Int, _ one: String, _ many: String? = nil) -> String {
        "\(n) \(n == 1 ? one : many ?? one + "s")"
    }

    /// Names the channels whose names differ from `mixer`'s (a preset of the right shape still
    /// applies; the caller may want to warn), or nil when they all match.
    public func channelNameDifferences(from mixer: Mixer) -> String? {
        var differences: [String] = []
        for (what, mine, theirs) in [("input", inputChannels, mixer.inputChannels), ("output", outputChannels, mixer.outputChannels)]
        where mine != theirs {
            differences.append("\(what)s are [\(mine.joinedBytes(separator: " "))] in the preset, [\(theirs.joinedBytes(separator: " "))] on the node")
        }
        return differences.isEmpty ? nil : differences.joinedBytes(separator: "; ")
    }

    /// The shortest decimal that reads back as the same Float (`0.3`, not `0.30000001192092896`).
    public static func decimal(_ value: Float) -> Double { DecimalText.decimal(value) }
}

/// One key's values in a preset: a value, or a list with one entry per input or per output for
/// each placeholder of its pattern, in order (`matrix.<in>.<out>`: a row per input, a value
/// per output).
public indirect enum PresetValue: Equatable, Sendable {
    case value(ParameterValue)
    case list([PresetValue])

    /// The values of `kind` (whose family is `family`) on `mixer`; `atDefault` is made false
    /// when one of them is not the family's default.
    init(_ kind: ParameterKind, _ family: ParameterFamily, of mixer: Mixer, atDefault: inout Bool) {
        let placeholders = family.placeholders
        let defaultValue = family.defaultParameterValue
        // A gain is a Float in the mixer: its shortest decimal. Other numbers (milliseconds) as they are.
        let isGain = family.type == .float && family.unit == .gain
        func values(_ depth: Int, _ input: Int, _ output: Int) -> PresetValue {
            guard depth < placeholders.count else {
                var value = mixer.value(of: Parameter(kind, input, output))
                if isGain, case let .number(v) = value { value = .number(Preset.decimal(Float(v))) }
                if value != defaultValue { atDefault = false }
                return .value(value)
            }
            return placeholders[depth] == "<in>" ? .list((0..<mixer.inputs).map { values(depth + 1, $0, output) })
                : .list((0..<mixer.outputs).map { values(depth + 1, input, $0) })
        }
        self = values(0, 0, 0)
    }
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

    /// Sets everything the preset holds, key by key through `set(_:to:)` in the order a preset
    /// writes them; a key it leaves out is set to its default, or left as it is
    /// (`ParameterFamily.carried`).
    /// The preset must have this mixer's shape; channel names are not changed (see
    /// `Preset.channelNameDifferences`). Changes nothing when it throws.
    public mutating func apply(_ preset: Preset) throws(CrosspointError) {
        try preset.validateShape()
        guard preset.inputs == inputs, preset.outputs == outputs else {
            throw .shapeMismatch(
                "the preset is for \(preset.inputs) inputs x \(preset.outputs) outputs but the node has \(inputs) x \(outputs)")
        }
        var next = self
        next.setMasterMute(preset.masterMute)
        for kind in Preset.carriedKinds {
            let family = kind.family
            if let value = preset.values[kind] {
                try next.set(kind, family.placeholders[...], value, 0, 0)
            } else if case .leftAlone = family.carried {
                continue
            } else {
                let value = family.defaultParameterValue
                for p in Parameter.all(of: kind, for: next) { try next.set(p, to: value) }
            }
        }
        self = next
    }

    /// Sets a key's values, a list for each placeholder left (checked by `validateShape`).
    private mutating func set(_ kind: ParameterKind, _ placeholders: ArraySlice<Substring>, _ value: PresetValue,
                              _ input: Int, _ output: Int) throws(CrosspointError) {
        switch value {
        case let .value(v): try set(Parameter(kind, input, output), to: v)
        case let .list(items):
            let isInput = placeholders.first == "<in>"
            for (k, item) in items.enumerated() {
                try set(kind, placeholders.dropFirst(), item, isInput ? k : input, isInput ? output : k)
            }
        }
    }
}

// MARK: JSON

extension Preset {
    /// The keys of a preset, in the order they are written.
    public static let keys = ["format", "version"] + shapeKinds.map(\.family.presetKey)
        + carriedKinds.flatMap { $0 == .masterGain ? [$0.family.presetKey, masterMuteKey] : [$0.family.presetKey] }

    /// The keys in words, for the command line's help: each in the order a preset writes it,
    /// what the keys of channels hold, which are required, what a missing one means. Lines of
    /// at most 78 characters, the list indented.
    public static var keysInWords: String {
        func holds(_ kind: ParameterKind) -> String? {
            switch (kind.family.hasInput, kind.family.hasOutput) {
            case (true, true): "a row per input, one value per output"
            case (true, false): "one per input"
            case (false, true): "one per output"
            case (false, false): nil
            }
        }
        var words = ["format \"\(formatTag)\"", "version \(currentVersion)"] + shapeKinds.map(\.family.presetKey)
        words[words.count - 1] += " (channel names)"
        for (n, kind) in carriedKinds.enumerated() {
            words.append(kind.family.presetKey)
            if kind == .masterGain { words.append(masterMuteKey) }
            if let what = holds(kind), n + 1 == carriedKinds.count || holds(carriedKinds[n + 1]) != what {
                words[words.count - 1] += " (\(what))"
            }
        }
        var lines: [String] = []
        for (n, word) in words.enumerated() {
            let item = word + (n + 1 == words.count ? "." : ",")
            if let last = lines.last, last.count + 1 + item.count <= 78 { lines[lines.count - 1] += " " + item } else { lines.append("  " + item) }
        }
        let required = ["format", "version"] + shapeKinds.filter { $0.family.type == .int }.map(\.family.presetKey)
            + carriedKinds.filter { $0.family.carried == .required }.map(\.family.presetKey)
        let leftAlone = carriedKinds.filter { if case .leftAlone = $0.family.carried { true } else { false } }.map(\.family.presetKey)
        return lines.joinedBytes(separator: "\n") + "\nGains are linear. \(list(required, "and")) are required; a missing key is its "
            + "default (`crosspoint params`), but a missing \(list(leftAlone, "or")) leaves the node's as it is."
    }

    /// `a, b and c`.
    static func list(_ words: [String], _ conjunction: String) -> String {
        words.count < 2 ? words.joinedBytes() : words.dropLast().joinedBytes(separator: ", ") + " \(conjunction) " + words[words.count - 1]
    }

    /// The preset as JSON (the file `crosspoint save` writes, the `mixer` of a state file).
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("format", .string(format)), ("version", .number(Double(version)))]
        for kind in Preset.shapeKinds {
            let value: ParameterValue = switch kind {
            case .inputCount: .number(Double(inputs))
            case .outputCount: .number(Double(outputs))
            case .inputPositions: .names(inputChannels)
            default: .names(outputChannels)
            }
            members.append((kind.family.presetKey, value.json))
        }
        for kind in Preset.carriedKinds {
            if let value = values[kind] { members.append((kind.family.presetKey, value.json)) }
            if kind == .masterGain { members.append((Preset.masterMuteKey, .bool(masterMute))) }
        }
        return .object(members)
    }

    /// Reads a preset from JSON: `format`, `version`, `inputs`, `outputs` and the table's
    /// required keys (`matrix`) must be there; an unknown key, a value of the wrong type or a
    /// list longer than a node can have is refused, naming the key. The shape is checked by
    /// `validateShape` (and so by `Mixer(preset:)`).
    public init(json: JSONValue, what: String = "preset") throws(CrosspointError) {
        let m = try json.members(of: what, known: Preset.keys)
        func required(_ key: String) throws(CrosspointError) -> JSONValue {
            guard let value = m[key] else { throw .invalidValue(key: key, reason: "is missing from the \(what)") }
            return value
        }
        let limit = Mixer.channelLimit.upperBound
        let (inputsKey, outputsKey) = (ParameterKind.inputCount.family.presetKey, ParameterKind.outputCount.family.presetKey)
        format = try required("format").string("format")
        version = try required("version").int("version")
        inputs = try required(inputsKey).int(inputsKey)
        outputs = try required(outputsKey).int(outputsKey)
        for kind in Preset.carriedKinds where kind.family.carried == .required { _ = try required(kind.family.presetKey) }
        // Defaults for what is left out; a count outside 1...256 is refused by `validateShape`.
        func names(_ kind: ParameterKind, _ count: Int) throws(CrosspointError) -> [String] {
            let key = kind.family.presetKey
            return try m[key]?.list(key, limit: limit) { v, k throws(CrosspointError) in try v.string(k) }
                ?? Mixer.defaultChannels(count: min(max(count, 0), limit))
        }
        inputChannels = try names(.inputPositions, inputs)
        outputChannels = try names(.outputPositions, outputs)
        masterMute = try m[Preset.masterMuteKey]?.bool(Preset.masterMuteKey) ?? false
        values = [:]
        for kind in Preset.carriedKinds {
            let family = kind.family
            guard let value = m[family.presetKey] else { continue }
            values[kind] = try PresetValue(json: value, key: family.presetKey, family: family, depth: family.placeholders.count)
        }
    }
}

extension PresetValue {
    /// The values as JSON: a list for each placeholder, each value as the table types it.
    var json: JSONValue {
        switch self {
        case let .value(v): v.json
        case let .list(items): .array(items.map(\.json))
        }
    }

    /// Reads a key's values: `depth` lists (one per placeholder, at most a node's channels),
    /// then values of the family's type.
    init(json: JSONValue, key: String, family: ParameterFamily, depth: Int) throws(CrosspointError) {
        guard depth > 0 else {
            self = .value(try ParameterValue(json: json, key: key, family: family))
            return
        }
        self = .list(try json.list(key, limit: Mixer.channelLimit.upperBound) { item, k throws(CrosspointError) in
            try PresetValue(json: item, key: k, family: family, depth: depth - 1)
        })
    }
}

extension ParameterValue {
    /// The value as JSON: a number, true or false, a list of numbers or of strings.
    public var json: JSONValue {
        switch self {
        case let .number(v): .number(v)
        case let .bool(v): .bool(v)
        case let .ints(v): .array(v.map { .number(Double($0)) })
        case let .names(v): .array(v.map(JSONValue.string))
        }
    }

    /// A value of the family's type from JSON, refused with `key` when it is not one; a list
    /// of names holds at most the top of the family's range (`midi.map`, `devices`).
    init(json: JSONValue, key: String, family: ParameterFamily) throws(CrosspointError) {
        switch family.type {
        case .float: self = .number(try json.double(key))
        case .int: self = .number(Double(try json.int(key)))
        case .bool: self = .bool(try json.bool(key))
        case .names:
            let limit = Int(family.range.upperBound)
            self = .names(try json.list(key, limit: limit) { v, k throws(CrosspointError) in try v.string(k) })
        case .intArray: self = .ints(try json.list(key, limit: Mixer.channelLimit.upperBound) { v, k throws(CrosspointError) in try v.int(k) })
        }
    }
}

// MARK: Codable, through JSON

extension Preset: Codable {
    /// Reads the preset as `init(json:)` does; its errors are `CrosspointError`s naming the key.
    public init(from decoder: any Decoder) throws { try self.init(json: JSONValue(from: decoder)) }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}
