import CrosspointCore

/// `crosspoint virtual list --json`: the node's virtual devices.
package struct VirtualListing: Encodable {
    package struct Item: Encodable {
        package let type: String, name: String, description: String, position: [String], channels: [String], isDefault: Bool
        enum CodingKeys: String, CodingKey { case type, name, description, position, channels, isDefault = "default" }
        package init(_ d: VirtualDevice) {
            (type, name, description, position, channels, isDefault) =
                (d.kind.rawValue, d.name, d.description, d.positions, d.channels, d.isDefault)
        }
    }
    package let devices: [Item]

    package init(devices: [Item]) { self.devices = devices }
}
