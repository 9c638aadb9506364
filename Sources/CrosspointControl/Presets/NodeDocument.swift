import CrosspointCore

/// A node as `show --json` prints it and `save` writes it: a preset (the keys `load` applies)
/// plus what describes the node (`id`, `name`, `description`, each port's name and links),
/// which `load` accepts and ignores. One schema for both.
package struct NodeDocument: Encodable {
    package let preset: Preset
    package let id: UInt32
    package let name: String
    package let description: String
    package let inputPorts: [String]
    package let outputPorts: [String]
    package let inputLinks: [[String]]
    package let outputLinks: [[String]]
    /// The sinks an output group may follow (not the node's own devices): name and description.
    package var sinks: [[String]] = []
    /// What plays into (or records from) each of the node's virtual devices, by device name.
    package var deviceStreams: [String: [String]] = [:]
    /// What the node says of each of its virtual devices, by device name (its property
    /// `crosspoint.devices`): `ready (node 42)`, `being made`, `waiting (node 57 has this name)`.
    package var deviceStatus: [String: String] = [:]
    /// Where the morph fader is (`scene.morph`: not a preset's, the gains carry what it made).
    package var morph: Double = 0

    /// The keys that describe the node and are not applied by `load`.
    package static let descriptiveKeys: Set<String> = ["id", "name", "description", "input.ports", "output.ports", "input.links", "output.links",
                                               "sinks", "device.streams", "device.status", "scene.morph"]

    /// The keys of a preset, as Core reads one (those written only when set included:
    /// `midi`, `devices`, `delay.out`...).
    package static let presetKeys = Set(Preset.keys)

    package enum Keys: String, CodingKey {
        case id, name, description
        case inputPorts = "input.ports", outputPorts = "output.ports", inputLinks = "input.links", outputLinks = "output.links"
        case sinks, deviceStreams = "device.streams", deviceStatus = "device.status", morph = "scene.morph"
    }

    package func encode(to encoder: any Encoder) throws {
        try preset.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(description, forKey: .description)
        try c.encode(inputPorts, forKey: .inputPorts)
        try c.encode(outputPorts, forKey: .outputPorts)
        try c.encode(inputLinks, forKey: .inputLinks)
        try c.encode(outputLinks, forKey: .outputLinks)
        try c.encode(sinks, forKey: .sinks)
        try c.encode(deviceStreams, forKey: .deviceStreams)
        try c.encode(deviceStatus, forKey: .deviceStatus)
        try c.encode(morph, forKey: .morph)
    }
}
