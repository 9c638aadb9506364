import CrosspointCore
import CrosspointPipeWire

/// The `targets` module argument: a list whose items are a target's line of text
/// (`"default outputs=FL,FR"`, as Props and the state file write it) or an object:
///
///     targets = [
///         { device = default  outputs = [ mon_FL mon_FR ] }
///         { device = alsa_output.usb-MOTU  outputs = [ FL FR ]  offset = 2 }
///     ]
extension NodeConfiguration {
    static let targetKeys = ["device", "outputs", "offset"]

    /// Each item as a line of text; the model checks the lines (`Mixer.setTargets`).
    static func targetTexts(_ value: SPAJSONValue) throws(ArgumentError) -> [String] {
        let example = "[ { device = default outputs = [ FL FR ] } ]"
        guard case let .array(items) = value else {
            throw ArgumentError(argument: "targets", reason: "must be a list of targets like \(example), got \(value)")
        }
        guard items.count <= OutputTarget.limit else {
            throw ArgumentError(argument: "targets", reason: "holds \(items.count) groups; at most \(OutputTarget.limit)")
        }
        var texts: [String] = []
        for (n, item) in items.enumerated() {
            func fail(_ reason: String) -> ArgumentError { ArgumentError(argument: "targets", reason: "target \(n): \(reason)") }
            switch item {
            case let .string(text):
                texts.append(text)
            case let .object(members):
                var device: String?, outputs: [String] = [], offset: Int?
                var seen = Set<String>()
                for (key, value) in members {
                    guard targetKeys.contains(key) else { throw fail("'\(key.prefix(40))' is not a target key (\(targetKeys.joinedBytes(separator: ", ")))") }
                    guard seen.insert(key).inserted else { throw fail("'\(key)' is given twice") }
                    switch (key, value) {
                    case let ("device", .string(name)) where !name.isEmpty && !name.contains(" "): device = name
                    case let ("outputs", .array(list)):
                        for entry in list {
                            switch entry {
                            case let .string(name) where !name.isEmpty && !name.contains(" ") && !name.contains(","): outputs.append(name)
                            case let .number(v) where v >= 0 && v < 256 && v == v.rounded(): outputs.append(String(Int(v)))
                            default: throw fail("outputs holds \(entry), not an output name or index")
                            }
                        }
                    case let ("offset", .number(v)) where v >= 0 && v <= 63 && v == v.rounded(): offset = Int(v)
                    default: throw fail("\(key) = \(value) is not a \(key == "offset" ? "number from 0 to 63" : key == "outputs" ? "list of outputs" : "node name or default")")
                    }
                }
                guard let device else { throw fail("has no device (a sink's node.name, or default)") }
                texts.append(device + (outputs.isEmpty ? "" : " outputs=" + outputs.joinedBytes(separator: ",")) + (offset.map { " offset=\($0)" } ?? ""))
            default:
                throw fail("is not an object like \(example) or a string: \(item)")
            }
        }
        return texts
    }
}
