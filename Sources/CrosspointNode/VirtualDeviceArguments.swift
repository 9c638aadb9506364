import CrosspointCore
import CrosspointPipeWire

/// The `devices` module argument: a list whose items are either a device's line of text
/// (`"sink game description=Game"`, as Props and the state file write it) or an object, easier
/// to read in a drop-in:
///
///     devices = [
///         { type = sink  name = game  description = "Game"  position = [ FL FR ] }
///         { type = source  name = stream-mix  description = "Stream mix"  channels = [ stream_FL stream_FR ] }
///         { type = sink  name = mono  position = [ MONO ]  default = true }
///         { type = send  name = stream-out  to = "239.69.1.10:5004"  channels = [ stream_FL stream_FR ] }
///         { type = receive  name = guest  from = "0.0.0.0:5004"  latency = 20 }
///     ]
///
/// A `send` or `receive` takes the options of its line (NetworkStreams.swift) as keys:
/// `to`, `from`, `session`, `format`, `latency` (ms), `protocol`, `group`, `ptp`.
extension NodeConfiguration {
    static let deviceKeys = ["type", "name", "description", "position", "channels", "default"] + networkKeys
    static let networkKeys = NetworkStream.options

    /// Each item as a line of text; the model checks the lines (`Mixer.setDevices`).
    static func deviceTexts(_ value: SPAJSONValue) throws(ArgumentError) -> [String] {
        let example = "[ { type = sink name = game description = \"Game\" } ]"
        guard case let .array(items) = value else {
            throw ArgumentError(argument: "devices", reason: "must be a list of devices like \(example), got \(value)")
        }
        guard items.count <= VirtualDevice.limit else {
            throw ArgumentError(argument: "devices", reason: "holds \(items.count) devices; at most \(VirtualDevice.limit)")
        }
        var texts: [String] = []
        for (n, item) in items.enumerated() {
            switch item {
            case let .string(text):
                texts.append(text)
            case let .object(members):
                texts.append(try deviceText(members, n))
            default:
                throw ArgumentError(argument: "devices", reason: "device \(n) is not an object like \(example) or a string: \(item)")
            }
        }
        return texts
    }

    private static func deviceText(_ members: [(String, SPAJSONValue)], _ n: Int) throws(ArgumentError) -> String {
        func fail(_ reason: String) -> ArgumentError { ArgumentError(argument: "devices", reason: "device \(n): \(reason)") }
        var fields: [String: SPAJSONValue] = [:]
        for (key, value) in members {
            guard deviceKeys.contains(key) else { throw fail("'\(key.prefix(40))' is not a device key (\(deviceKeys.joinedBytes(separator: ", ")))") }
            guard fields.updateValue(value, forKey: key) == nil else { throw fail("'\(key)' is given twice") }
        }
        func word(_ key: String) throws(ArgumentError) -> String? {
            guard let value = fields[key] else { return nil }
            guard case let .string(text) = value, !text.isEmpty, !text.contains(" ") else {
                throw fail("\(key) must be one word, got \(value)")
            }
            return text
        }
        func list(_ key: String) throws(ArgumentError) -> String? {
            guard let value = fields[key] else { return nil }
            guard case let .array(items) = value, !items.isEmpty else { throw fail("\(key) must be a list like [ FL FR ], got \(value)") }
            var words: [String] = []
            for item in items {
                switch item {
                case let .string(text) where !text.isEmpty && !text.contains(" ") && !text.contains(","): words.append(text)
                case let .number(v) where v >= 0 && v < 256 && v == v.rounded(): words.append(String(Int(v)))
                default: throw fail("\(key) holds \(item), not a name or an index")
                }
            }
            return words.joinedBytes(separator: ",")
        }
        guard let name = try word("name") else { throw fail("has no name") }
        var text = "\(try word("type") ?? "sink") \(name)"
        if let positions = try list("position") { text += " position=\(positions)" }
        if let channels = try list("channels") { text += " channels=\(channels)" }
        for key in networkKeys {
            if key == "latency", case let .number(ms)? = fields[key] {
                guard ms >= 0, ms < 100_000, ms == ms.rounded() else { throw fail("latency must be whole milliseconds, got \(ms)") }
                text += " latency=\(Int(ms))"
            } else if let value = try word(key) {
                text += " \(key)=\(value)"
            }
        }
        if let value = fields["default"] {
            guard case let .bool(on) = value else { throw fail("default must be true or false, got \(value)") }
            if on { text += " default" }
        }
        if let value = fields["description"] {
            guard case let .string(description) = value else { throw fail("description must be a string, got \(value)") }
            text += " description=\(description)"
        }
        return text
    }
}
