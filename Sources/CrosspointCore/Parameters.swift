/// The one table of Crosspoint's parameters. PropInfo, Props, parsing, the command line's
/// help and the README's parameter table are all made from `Parameter.families`.

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
}

/// A value as it arrives from PipeWire (an Int, Float, Double or Bool pod) or the command line.
public enum ParameterValue: Equatable, Sendable, CustomStringConvertible {
    case number(Double)
    case bool(Bool)
    case ints([Int])
    case names([String])

    public var description: String {
        switch self {
        case let .number(v): "\(v)"
        case let .bool(v): "\(v)"
        case let .ints(v): "[" + v.map(String.init).joined(separator: ",") + "]"
        case let .names(v): "[" + v.joined(separator: " ") + "]"
        }
    }
}

/// One concrete key of one node: `matrix.0.1`, `gain.master`.
public enum Parameter: Hashable, Sendable {
    case masterGain
    case inputGain(Int)
    case outputGain(Int)
    case crosspoint(input: Int, output: Int)
    case inputMute(Int)
    case outputMute(Int)
    case channelMap
    case ramp
    case inputCount
    case outputCount
    case inputPositions
    case outputPositions

    /// The table, in the order PropInfo lists it.
    public static let families: [ParameterFamily] = [
        .init(pattern: "gain.master", type: .float, defaultValue: 1, range: Mixer.gainRange,
              summary: "Master gain (linear) applied to every output"),
        .init(pattern: "gain.in.<in>", type: .float, defaultValue: 1, range: Mixer.gainRange,
              summary: "Gain (linear) of one input, before the matrix"),
        .init(pattern: "gain.out.<out>", type: .float, defaultValue: 1, range: Mixer.gainRange,
              summary: "Gain (linear) of one output, after the matrix"),
        .init(pattern: "matrix.<in>.<out>", type: .float, defaultValue: 0, range: Mixer.gainRange,
              summary: "Cross-point gain (linear) from an input to an output; negative flips polarity"),
        .init(pattern: "mute.in.<in>", type: .bool, defaultValue: 0, range: 0...1,
              summary: "Mutes one input"),
        .init(pattern: "mute.out.<out>", type: .bool, defaultValue: 0, range: 0...1,
              summary: "Mutes one output"),
        .init(pattern: "channel-map", type: .intArray, defaultValue: 0, range: -1...255,
              summary: "Core Audio channel map, one input index (or -1) per output; replaces the matrix"),
        .init(pattern: "ramp.ms", type: .float, defaultValue: Mixer.defaultRampMilliseconds, range: Mixer.rampRange,
              summary: "Time every gain change glides over, in milliseconds (0 = jump)"),
        .init(pattern: "inputs", type: .int, defaultValue: 2, range: 1...256,
              summary: "Number of input ports; changed live, surviving ports keep their links and gains"),
        .init(pattern: "outputs", type: .int, defaultValue: 2, range: 1...256,
              summary: "Number of output ports; a removed port fades out before it goes"),
        .init(pattern: "input.position", type: .names, defaultValue: 0, range: 1...256,
              summary: "Channel names of the inputs (their ports are in_<name>); sets the count too"),
        .init(pattern: "output.position", type: .names, defaultValue: 0, range: 1...256,
              summary: "Channel names of the outputs (their ports are out_<name>); sets the count too"),
    ]

    public var family: ParameterFamily {
        switch self {
        case .masterGain: Parameter.families[0]
        case .inputGain: Parameter.families[1]
        case .outputGain: Parameter.families[2]
        case .crosspoint: Parameter.families[3]
        case .inputMute: Parameter.families[4]
        case .outputMute: Parameter.families[5]
        case .channelMap: Parameter.families[6]
        case .ramp: Parameter.families[7]
        case .inputCount: Parameter.families[8]
        case .outputCount: Parameter.families[9]
        case .inputPositions: Parameter.families[10]
        case .outputPositions: Parameter.families[11]
        }
    }

    /// The canonical key, with indices: `matrix.0.1`.
    public var key: String {
        switch self {
        case .masterGain: "gain.master"
        case let .inputGain(i): "gain.in.\(i)"
        case let .outputGain(j): "gain.out.\(j)"
        case let .crosspoint(i, j): "matrix.\(i).\(j)"
        case let .inputMute(i): "mute.in.\(i)"
        case let .outputMute(j): "mute.out.\(j)"
        case .channelMap: "channel-map"
        case .ramp: "ramp.ms"
        case .inputCount: "inputs"
        case .outputCount: "outputs"
        case .inputPositions: "input.position"
        case .outputPositions: "output.position"
        }
    }

    /// Parses a key; indices may be numbers or the channel names of `mixer`
    /// (`matrix.FL.MONO`, `gain.out.AUX3`).
    public init(key: String, in mixer: Mixer) throws(CrosspointError) {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        do {
            switch (parts.first, parts.count) {
            case ("gain", 2) where parts[1] == "master": self = .masterGain
            case ("gain", 3) where parts[1] == "in": self = .inputGain(try mixer.inputIndex(parts[2]))
            case ("gain", 3) where parts[1] == "out": self = .outputGain(try mixer.outputIndex(parts[2]))
            case ("mute", 3) where parts[1] == "in": self = .inputMute(try mixer.inputIndex(parts[2]))
            case ("mute", 3) where parts[1] == "out": self = .outputMute(try mixer.outputIndex(parts[2]))
            case ("matrix", 3):
                self = .crosspoint(input: try mixer.inputIndex(parts[1]), output: try mixer.outputIndex(parts[2]))
            case ("channel-map", 1): self = .channelMap
            case ("ramp", 2) where parts[1] == "ms": self = .ramp
            case ("inputs", 1): self = .inputCount
            case ("outputs", 1): self = .outputCount
            case ("input", 2) where parts[1] == "position": self = .inputPositions
            case ("output", 2) where parts[1] == "position": self = .outputPositions
            default: throw CrosspointError.unknownKey(key)
            }
        } catch let error as CrosspointError {
            if case .unknownKey = error { throw error }
            throw .invalidValue(key: key, reason: error.description)
        } catch {
            throw .unknownKey(key)
        }
    }

    /// Every concrete key of a mixer, in table order.
    public static func all(for mixer: Mixer) -> [Parameter] {
        var keys: [Parameter] = [.masterGain]
        keys += (0..<mixer.inputs).map { .inputGain($0) }
        keys += (0..<mixer.outputs).map { .outputGain($0) }
        for i in 0..<mixer.inputs { for j in 0..<mixer.outputs { keys.append(.crosspoint(input: i, output: j)) } }
        keys += (0..<mixer.inputs).map { .inputMute($0) }
        keys += (0..<mixer.outputs).map { .outputMute($0) }
        keys += [.channelMap, .ramp, .inputCount, .outputCount, .inputPositions, .outputPositions]
        return keys
    }

    /// A one-line description of this key on this mixer, naming its channels.
    public func summary(in mixer: Mixer) -> String {
        switch self {
        case let .inputGain(i), let .inputMute(i): "\(family.summary): input \(i) (\(mixer.inputChannels[i]))"
        case let .outputGain(j), let .outputMute(j): "\(family.summary): output \(j) (\(mixer.outputChannels[j]))"
        case let .crosspoint(i, j):
            "Cross-point gain (linear) from input \(i) (\(mixer.inputChannels[i])) to output \(j) (\(mixer.outputChannels[j]))"
        default: family.summary
        }
    }
}

extension Mixer {
    /// The current value of a key. `channel-map` is empty when the matrix is not a pure routing.
    public func value(of parameter: Parameter) -> ParameterValue {
        switch parameter {
        case .masterGain: .number(Double(masterGain))
        case let .inputGain(i): .number(Double(inputGains[i]))
        case let .outputGain(j): .number(Double(outputGains[j]))
        case let .crosspoint(i, j): .number(Double(crosspoint(input: i, output: j)))
        case let .inputMute(i): .bool(inputMutes[i])
        case let .outputMute(j): .bool(outputMutes[j])
        case .channelMap: .ints(channelMap?.sources ?? [])
        case .ramp: .number(rampMilliseconds)
        case .inputCount: .number(Double(inputs))
        case .outputCount: .number(Double(outputs))
        case .inputPositions: .names(inputChannels)
        case .outputPositions: .names(outputChannels)
        }
    }

    /// Sets a key from a value as PipeWire delivers it. Numbers are accepted for gains, bools
    /// and the numbers 0 and 1 for mutes, an integer list for the channel map.
    public mutating func set(_ parameter: Parameter, to value: ParameterValue) throws(CrosspointError) {
        let key = parameter.key
        switch (parameter, value) {
        case let (.masterGain, .number(v)): try setMasterGain(v)
        case let (.inputGain(i), .number(v)): try setInputGain(i, v)
        case let (.outputGain(j), .number(v)): try setOutputGain(j, v)
        case let (.crosspoint(i, j), .number(v)): try setCrosspoint(input: i, output: j, gain: v)
        case let (.inputMute(i), _): try setInputMute(i, try Mixer.flag(value, key: key))
        case let (.outputMute(j), _): try setOutputMute(j, try Mixer.flag(value, key: key))
        case let (.channelMap, .ints(sources)): try apply(ChannelMap(sources))
        case let (.ramp, .number(v)): try setRamp(milliseconds: v)
        case let (.inputCount, .number(v)): try resize(inputs: try Mixer.count(v, key: key), outputs: outputs)
        case let (.outputCount, .number(v)): try resize(inputs: inputs, outputs: try Mixer.count(v, key: key))
        case let (.inputPositions, .names(names)): try setChannels(inputs: names)
        case let (.outputPositions, .names(names)): try setChannels(outputs: names)
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

    static func flag(_ value: ParameterValue, key: String) throws(CrosspointError) -> Bool {
        switch value {
        case let .bool(b): return b
        case .number(0): return false
        case .number(1): return true
        default: throw .invalidValue(key: key, reason: "expects true or false, got \(value)")
        }
    }
}

extension Parameter {
    /// The parameter table as Markdown, for the README (`crosspoint params --markdown`).
    public static func markdownTable() -> String {
        var lines = ["| key | type | default | range | meaning |", "|---|---|---|---|---|"]
        for f in families {
            let def: String
            let range: String
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
                range = "1 to 256 names (letters, digits, _)"
            case .intArray:
                def = "identity"
                range = "-1 or an input index, per output"
            }
            lines.append("| `\(f.pattern)` | \(f.type.rawValue) | \(def) | \(range) | \(f.summary) |")
        }
        return lines.joined(separator: "\n")
    }
}
