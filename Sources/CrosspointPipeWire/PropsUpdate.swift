import CrosspointCore

extension Mixer {
    /// Applies the entries of an incoming Props pod in order. A bad entry (unknown key, wrong
    /// type, NaN, out of range) changes nothing and yields a warning naming it; the others
    /// still apply. The standard `volume`, `mute` and `channelVolumes` set the master gain,
    /// the master mute and the output gains.
    public mutating func apply(_ entries: [PropsCodec.Entry]) -> (changed: Bool, warnings: [String]) {
        var warnings: [String] = []
        let before = self
        var shapeChanges = 0
        for entry in entries {
            guard let key = entry.key else {
                warnings.append("Props params: a key is not a string; params are pairs of \"key\" value")
                continue
            }
            // Each change of shape costs O(inputs x outputs): a pod of 40,000 of them (1.3 MB)
            // kept the daemon's main loop busy for seconds.
            if Mixer.shapeKeys.contains(key) {
                shapeChanges += 1
                guard shapeChanges <= Mixer.shapeChangeLimit else { continue }
            }
            do throws(CrosspointError) {
                switch key {
                case "volume":
                    try setMasterGain(try Mixer.number(entry.value, key: key))
                case "mute":
                    setMasterMute(try Mixer.flag(try Mixer.parameterValue(entry.value, key: key), key: key))
                case "channelVolumes":
                    guard case let .numbers(volumes) = entry.value else {
                        throw .invalidValue(key: key, reason: "expects a list of gains, got \(entry.value.text)")
                    }
                    guard volumes.count == outputs else {
                        throw .shapeMismatch("channelVolumes has \(volumes.count) entries but the node has \(outputs) outputs")
                    }
                    var next = self
                    for (j, v) in volumes.enumerated() { try next.setOutputGain(j, v) }
                    self = next
                default:
                    let parameter = try Parameter(key: key, in: self)
                    try set(parameter, to: try Mixer.parameterValue(entry.value, key: key))
                }
            } catch {
                warnings.append(error.description)
            }
        }
        // One line per refused entry, up to a point: a pod of 100,000 bad keys is not 100,000 log lines.
        if warnings.count > Mixer.warningLimit {
            let more = warnings.count - Mixer.warningLimit
            warnings.removeLast(more)
            warnings.append("... and \(more) more refused entries in this set-param")
        }
        if shapeChanges > Mixer.shapeChangeLimit {
            warnings.append("\(shapeChanges - Mixer.shapeChangeLimit) changes of inputs, outputs or their positions refused: one set-param takes at most \(Mixer.shapeChangeLimit); send more in separate calls")
        }
        return (self != before, warnings)
    }

    /// The keys that change the shape, and how many of them one set-param may carry.
    static let shapeKeys: Set<String> = ["inputs", "outputs", "input.position", "output.position"]
    public static let shapeChangeLimit = 16
    /// How many refused entries of one set-param are named one by one.
    public static let warningLimit = 64

    static func number(_ value: PropsCodec.RawValue, key: String) throws(CrosspointError) -> Double {
        guard case let .number(v) = value else {
            throw .invalidValue(key: key, reason: "expects a number, got \(value.text)")
        }
        return v
    }

    package static func parameterValue(_ value: PropsCodec.RawValue, key: String) throws(CrosspointError) -> ParameterValue {
        switch value {
        case let .number(v): return .number(v)
        case let .bool(b): return .bool(b)
        case let .numbers(list):
            var ints: [Int] = []
            for n in list {
                // Int(exactly:) refuses 1e20 where Int(_:) would trap inside the daemon.
                guard let int = Int(exactly: n) else {
                    throw .invalidValue(key: key, reason: "\(Gain.format(n)) in the list is not a whole number")
                }
                ints.append(int)
            }
            return .ints(ints)
        case let .strings(names):
            return .names(names)
        case let .invalid(what):
            throw .invalidValue(key: key, reason: "got \(what)")
        }
    }
}

extension PropsCodec.RawValue {
    var text: String {
        switch self {
        case let .number(v): Gain.format(v)
        case let .bool(b): "\(b)"
        case let .numbers(list): "[" + list.map(Gain.format).joinedBytes(separator: ",") + "]"
        case let .strings(list): "[" + list.joinedBytes(separator: " ") + "]"
        case let .invalid(what): what
        }
    }
}
