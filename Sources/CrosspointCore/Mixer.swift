/// The state of a matrix mixer with N inputs and M outputs: what a user sets, nothing of
/// how it is rendered.
///
///     out[j] = master * outGain[j] * sum_i( inGain[i] * matrix[i][j] * in[i] )
///
/// All gains are linear, as in PipeWire; a negative gain flips polarity. A mute zeroes its
/// term. Every setter validates first and changes nothing when it throws.
public struct Mixer: Equatable, Sendable {
    /// How many inputs or outputs a mixer may have.
    public static let channelLimit = 1...256
    /// The range of every gain (linear): ±20 dB, negative flips polarity.
    public static let gainRange: ClosedRange<Double> = -10...10
    /// The range of the ramp time in milliseconds.
    public static let rampRange: ClosedRange<Double> = 0...1000
    /// The longest channel name (ASCII letters, digits and `_`).
    public static let channelNameLimit = 63
    /// The ramp time of a new mixer.
    public static let defaultRampMilliseconds = 10.0

    public private(set) var inputs: Int
    public private(set) var outputs: Int
    /// Channel names of the inputs and outputs (`FL`, `MONO`, `AUX3`): the ports' `audio.channel`.
    public private(set) var inputChannels: [String]
    public private(set) var outputChannels: [String]
    public private(set) var masterGain: Float = 1
    public private(set) var masterMute = false
    public private(set) var inputGains: [Float]
    public private(set) var outputGains: [Float]
    public private(set) var inputMutes: [Bool]
    public private(set) var outputMutes: [Bool]
    /// Cross-point gains, row-major: `matrix[input * outputs + output]`.
    public private(set) var matrix: [Float]
    public private(set) var rampMilliseconds = Mixer.defaultRampMilliseconds
    /// MIDI control: the ports and the mappings (`midi`, `midi.map`; MIDISetup.swift).
    public internal(set) var midi = MIDISetup()
    /// Virtual devices: sinks feeding inputs, sources fed by outputs (`devices`; VirtualDevices.swift).
    public internal(set) var devices: [VirtualDevice] = []
    /// Output groups that follow a device (`targets`; OutputTargets.swift).
    public internal(set) var targets: [OutputTarget] = []
    /// Ducking rules: inputs whose level lowers other inputs or outputs (`duck`; DuckingRule.swift).
    public internal(set) var ducking: [DuckingRule] = []
    /// Scenes, recall safes and the morph fader (`scenes`, `scene.safe`, `scene.morph.between`,
    /// `scene.morph`; Scene.swift, Scenes.swift).
    public internal(set) var scenes: [Scene] = []
    public internal(set) var sceneSafes: [String] = []
    public internal(set) var morphScenes: [String] = []
    public internal(set) var morphPosition = 0.0
    /// The delay of each output in milliseconds, 0 to 1000 (`delay.out.<out>`; OutputDelay.swift).
    public internal(set) var outputDelays: [Double]

    /// A mixer that passes audio with no gain set; see `defaultMatrix`.
    public init(inputs: Int, outputs: Int, inputChannels: [String]? = nil, outputChannels: [String]? = nil)
        throws(CrosspointError)
    {
        guard Mixer.channelLimit.contains(inputs) else { throw .channelCount(what: "inputs", value: inputs) }
        guard Mixer.channelLimit.contains(outputs) else { throw .channelCount(what: "outputs", value: outputs) }
        let inNames = inputChannels ?? Mixer.defaultChannels(count: inputs)
        let outNames = outputChannels ?? Mixer.defaultChannels(count: outputs)
        try Mixer.checkChannels(inNames, count: inputs, what: "input")
        try Mixer.checkChannels(outNames, count: outputs, what: "output")
        self.inputs = inputs
        self.outputs = outputs
        self.inputChannels = inNames
        self.outputChannels = outNames
        inputGains = Array(repeating: 1, count: inputs)
        outputGains = Array(repeating: 1, count: outputs)
        inputMutes = Array(repeating: false, count: inputs)
        outputMutes = Array(repeating: false, count: outputs)
        outputDelays = Array(repeating: 0, count: outputs)
        matrix = Mixer.defaultMatrix(inputs: inputs, outputs: outputs)
    }

    /// Default channel names: `MONO` for one channel, `FL FR` for two, `AUX0...` otherwise.
    public static func defaultChannels(count: Int) -> [String] {
        switch count {
        case 1: ["MONO"]
        case 2: ["FL", "FR"]
        default: (0..<count).map { "AUX\($0)" }
        }
    }

    /// The matrix of a fresh mixer, chosen so that audio passes without anyone setting a gain:
    /// equal counts give the identity; one output from N inputs the average (1/N each, so a
    /// correlated full-scale input does not clip); one input to M outputs that input on every
    /// output at unity; any other shape the identity on the first min(N, M) channels.
    public static func defaultMatrix(inputs: Int, outputs: Int) -> [Float] {
        var m = [Float](repeating: 0, count: inputs * outputs)
        if outputs == 1 {
            for i in 0..<inputs { m[i] = 1 / Float(inputs) }
        } else if inputs == 1 {
            for j in 0..<outputs { m[j] = 1 }
        } else {
            for k in 0..<min(inputs, outputs) { m[k * outputs + k] = 1 }
        }
        return m
    }

    // MARK: Reading

    public func crosspoint(input: Int, output: Int) -> Float { matrix[input * outputs + output] }

    /// The gain actually applied from `input` to `output`, mutes and all gains included.
    public func effectiveGain(input: Int, output: Int) -> Float {
        if masterMute || inputMutes[input] || outputMutes[output] { return 0 }
        return masterGain * outputGains[output] * inputGains[input] * matrix[input * outputs + output]
    }

    /// The matrix as a channel map, if it is a pure routing (see `ChannelMap.init?(matrix:)`).
    public var channelMap: ChannelMap? { ChannelMap(matrix: matrix, inputs: inputs, outputs: outputs) }

    // MARK: Index resolution

    /// Resolves an input given as an index (`"1"`) or a channel name (`"FR"`).
    public func inputIndex(_ token: some StringProtocol) throws(CrosspointError) -> Int {
        try Mixer.resolve(token, names: inputChannels, what: "input")
    }

    /// Resolves an output given as an index (`"3"`) or a channel name (`"AUX3"`).
    public func outputIndex(_ token: some StringProtocol) throws(CrosspointError) -> Int {
        try Mixer.resolve(token, names: outputChannels, what: "output")
    }

    static func resolve(_ token: some StringProtocol, names: [String], what: String) throws(CrosspointError) -> Int {
        // Indices are plain decimal: `0`, `12`; `-1` is out of range, `-0`, `+1` and `01` are
        // not indices (nor channel names, which never start with a sign or a digit run alone).
        let signed = token.first == "-" || token.first == "+"
        let digits = signed ? Substring(token.dropFirst()) : Substring(token)
        // Digits told by their bytes, not Unicode's property tables (BENCHMARKS.md, "Footprint").
        if !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard digits == "0" || digits.first != "0", token.first != "+", !(signed && digits == "0"),
                  let index = Int(String(token)) else {
                throw .invalidValue(key: what, reason: "'\(token)' is not an index; write indices as plain numbers (0, 1, 12)")
            }
            guard names.indices.contains(index) else {
                throw .indexOutOfRange(what: what, index: index, count: names.count)
            }
            return index
        }
        if let index = names.firstIndex(where: { $0 == token }) { return index }
        if let index = names.firstIndex(where: { $0.lowercased() == token.lowercased() }) { return index }
        throw .unknownChannel(what: what, name: String(token))
    }

    // MARK: Changing

    public mutating func setMasterGain(_ gain: Double) throws(CrosspointError) {
        masterGain = try Mixer.checkGain(gain, key: "gain.master")
    }

    public mutating func setMasterMute(_ mute: Bool) { masterMute = mute }

    public mutating func setInputGain(_ input: Int, _ gain: Double) throws(CrosspointError) {
        try check(input: input)
        inputGains[input] = try Mixer.checkGain(gain, key: "gain.in.\(input)")
    }

    public mutating func setOutputGain(_ output: Int, _ gain: Double) throws(CrosspointError) {
        try check(output: output)
        outputGains[output] = try Mixer.checkGain(gain, key: "gain.out.\(output)")
    }

    public mutating func setInputMute(_ input: Int, _ mute: Bool) throws(CrosspointError) {
        try check(input: input)
        inputMutes[input] = mute
    }

    public mutating func setOutputMute(_ output: Int, _ mute: Bool) throws(CrosspointError) {
        try check(output: output)
        outputMutes[output] = mute
    }

    public mutating func setCrosspoint(input: Int, output: Int, gain: Double) throws(CrosspointError) {
        try check(input: input)
        try check(output: output)
        matrix[input * outputs + output] = try Mixer.checkGain(gain, key: "matrix.\(input).\(output)")
    }

    /// Replaces the whole matrix: one row per input, each one gain per output.
    public mutating func setMatrix(rows: [[Double]]) throws(CrosspointError) {
        guard rows.count == inputs else {
            throw .shapeMismatch("matrix has \(rows.count) rows but the node has \(inputs) inputs (one row per input)")
        }
        var new = [Float](repeating: 0, count: inputs * outputs)
        for (i, row) in rows.enumerated() {
            guard row.count == outputs else {
                throw .shapeMismatch(
                    "matrix row \(i) has \(row.count) gains but the node has \(outputs) outputs (one gain per output)")
            }
            for (j, gain) in row.enumerated() {
                new[i * outputs + j] = try Mixer.checkGain(gain, key: "matrix.\(i).\(j)")
            }
        }
        matrix = new
    }

    /// Replaces the matrix with the routing a channel map describes.
    public mutating func apply(_ map: ChannelMap) throws(CrosspointError) {
        try map.validate(inputs: inputs, outputs: outputs)
        matrix = try map.matrix(inputs: inputs)
    }

    /// Changes the shape, channels added or removed at the end. Surviving channels keep their
    /// names, gains, mutes and cross-points; a new channel is named `AUX<index>` (unless that
    /// name is taken) and its cross-points take the default matrix of the new shape.
    public mutating func resize(inputs newInputs: Int, outputs newOutputs: Int) throws(CrosspointError) {
        guard Mixer.channelLimit.contains(newInputs) else { throw .channelCount(what: "inputs", value: newInputs) }
        guard Mixer.channelLimit.contains(newOutputs) else { throw .channelCount(what: "outputs", value: newOutputs) }
        func names(_ old: [String], _ count: Int) -> [String] {
            var result = Array(old.prefix(count))
            var index = result.count
            while result.count < count {
                let name = "AUX\(index)"
                if !result.contains(name) { result.append(name) }
                index += 1
            }
            return result
        }
        func resized<T>(_ old: [T], _ count: Int, _ fill: T) -> [T] {
            Array(old.prefix(count)) + Array(repeating: fill, count: max(0, count - old.count))
        }
        let defaults = Mixer.defaultMatrix(inputs: newInputs, outputs: newOutputs)
        var newMatrix = defaults
        for i in 0..<min(inputs, newInputs) {
            for j in 0..<min(outputs, newOutputs) { newMatrix[i * newOutputs + j] = matrix[i * outputs + j] }
        }
        inputChannels = names(inputChannels, newInputs)
        outputChannels = names(outputChannels, newOutputs)
        inputGains = resized(inputGains, newInputs, 1)
        outputGains = resized(outputGains, newOutputs, 1)
        inputMutes = resized(inputMutes, newInputs, false)
        outputMutes = resized(outputMutes, newOutputs, false)
        outputDelays = resized(outputDelays, newOutputs, 0)
        matrix = newMatrix
        inputs = newInputs
        outputs = newOutputs
    }

    /// Sets the channel names of the inputs (or outputs): as many channels as names, resized as
    /// `resize` does, then named.
    public mutating func setChannels(inputs names: [String]) throws(CrosspointError) {
        var next = self
        try next.resize(inputs: names.count, outputs: outputs)
        try Mixer.checkChannels(names, count: names.count, what: "input")
        next.inputChannels = names
        self = next
    }

    public mutating func setChannels(outputs names: [String]) throws(CrosspointError) {
        var next = self
        try next.resize(inputs: inputs, outputs: names.count)
        try Mixer.checkChannels(names, count: names.count, what: "output")
        next.outputChannels = names
        self = next
    }

    public mutating func setRamp(milliseconds: Double) throws(CrosspointError) {
        guard milliseconds.isFinite else { throw .notFinite(key: "ramp.ms", value: milliseconds) }
        guard Mixer.rampRange.contains(milliseconds) else {
            throw .outOfRange(key: "ramp.ms", value: milliseconds, range: Mixer.rampRange)
        }
        rampMilliseconds = milliseconds
    }

    // MARK: Checks

    func check(input: Int) throws(CrosspointError) {
        guard (0..<inputs).contains(input) else { throw .indexOutOfRange(what: "input", index: input, count: inputs) }
    }

    func check(output: Int) throws(CrosspointError) {
        guard (0..<outputs).contains(output) else {
            throw .indexOutOfRange(what: "output", index: output, count: outputs)
        }
    }

    /// The key is made only for an error: a preset or a scene's step sets thousands of gains.
    static func checkGain(_ gain: Double, key: @autoclosure () -> String) throws(CrosspointError) -> Float {
        guard gain.isFinite else { throw .notFinite(key: key(), value: gain) }
        guard gainRange.contains(gain) else { throw .outOfRange(key: key(), value: gain, range: gainRange) }
        return Float(gain)
    }

    /// An ASCII letter or digit, as a UTF-8 byte.
    static func isASCIILetterOrDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// Checks channel names: as many as `count`, each a valid name, none twice.
    public static func checkChannels(_ names: [String], count: Int, what: String) throws(CrosspointError) {
        guard names.count == count else {
            throw .shapeMismatch("\(what).position names \(names.count) channels but the node has \(count) \(what)s")
        }
        var seen = Set<String>()
        for name in names {
            // ASCII letters, digits and _ told by their bytes, not Unicode's property tables
            // (BENCHMARKS.md, "Footprint").
            guard (1...channelNameLimit).contains(name.utf8.count),
                  name.utf8.allSatisfy({ isASCIILetterOrDigit($0) || $0 == UInt8(ascii: "_") }) else {
                throw .invalidValue(
                    key: "\(what).position",
                    reason: "'\(name.prefix(80))' is not a channel name (1 to \(channelNameLimit) ASCII letters, digits and _)")
            }
            guard !name.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw .invalidValue(key: "\(what).position", reason: "'\(name)' is a number, which would read as an index; name channels with a letter")
            }
            guard seen.insert(name).inserted else {
                throw .invalidValue(key: "\(what).position", reason: "'\(name)' appears twice")
            }
        }
    }
}
