import CrosspointCore

/// How levels leave a node: the node property `crosspoint.levels`, compact JSON that any
/// PipeWire client reads from the node's info (`pw-cli info`, `pw-dump -m`, `pw-mon`):
///
///     {"seq":42,"interval":50,"frames":2400,"inputs":[[-12.0,-15.0],[null,null]],"outputs":[[-18.0,-21.0]]}
///
/// Each channel, in port order, is `[peak, rms]` in dBFS (null: silence). `seq` counts the
/// node's readings, `interval` is the time between them in milliseconds, `frames` the frames
/// measured (0: the node did not run, nothing being linked to it). The property is an empty
/// string when nobody watches. Both sides use this one codec.
public enum LevelsCodec {
    /// The node property that carries the levels.
    public static let property = CrosspointProperty.levels

    /// The property's text for a reading.
    public static func text(_ reading: LevelReading) -> String {
        func channels(_ levels: [Level]) -> String {
            "[" + levels.map { "[\(Level.json($0.peak)),\(Level.json($0.rms))]" }.joinedBytes(separator: ",") + "]"
        }
        let ducking = reading.ducking.isEmpty ? ""
            : ",\"duck\":[" + reading.ducking.map { Level.json($0) }.joinedBytes(separator: ",") + "]"
        return "{\"seq\":\(reading.sequence),\"interval\":\(reading.interval),\"frames\":\(reading.frames),"
            + "\"inputs\":\(channels(reading.inputs)),\"outputs\":\(channels(reading.outputs))\(ducking)}"
    }

    /// The reading a property's text holds; nil for an empty text (nobody watches) or text that
    /// is not a reading. Read with libspa's JSON tokenizer; every value is checked.
    public static func reading(_ text: String) -> LevelReading? {
        guard !text.isEmpty, case let .object(pairs)? = SPAJSONValue(parsing: text) else { return nil }
        func value(_ key: String) -> SPAJSONValue? { pairs.first { $0.0 == key }?.1 }
        func whole(_ key: String) -> Int? {
            guard case let .number(n)? = value(key), n >= 0 else { return nil }
            return Int(exactly: n)
        }
        func decibels(_ value: SPAJSONValue) -> Double?? {
            switch value {
            case .null: return .some(nil)
            case let .number(n) where abs(n) <= Level.beyondMeasure: return .some(n)
            default: return nil
            }
        }
        func channels(_ key: String) -> [Level]? {
            guard case let .array(items)? = value(key), items.count <= Mixer.channelLimit.upperBound else { return nil }
            var levels: [Level] = []
            for item in items {
                guard case let .array(pair) = item, pair.count == 2,
                      let peak = decibels(pair[0]), let rms = decibels(pair[1]) else { return nil }
                levels.append(Level(peak: peak, rms: rms))
            }
            return levels
        }
        guard let sequence = whole("seq"), let interval = whole("interval"), let frames = whole("frames"),
              let inputs = channels("inputs"), let outputs = channels("outputs") else { return nil }
        // Each ducking rule's reduction, if the node has rules: numbers from -60 to 0 dB. A field
        // that is not that is left out; the levels still count.
        var ducking: [Double] = []
        if case let .array(items)? = value("duck"), items.count <= DuckingRule.limit {
            for item in items {
                guard case let .number(n) = item, n <= 0, n >= DuckingRule.depthRange.lowerBound else { ducking = []; break }
                ducking.append(n)
            }
        }
        return LevelReading(sequence: sequence, interval: interval, frames: frames, inputs: inputs, outputs: outputs, ducking: ducking)
    }
}

extension LevelWatch {
    /// The `levels.watch` request a set-param's entry carries, checked.
    package init(_ entry: PropsCodec.Entry) throws(CrosspointError) {
        self = try LevelWatch(try Mixer.parameterValue(entry.value, key: LevelWatch.key))
    }
}
