import CrosspointCore

extension Session {
    /// A change of node `token`'s virtual devices, as a list: only `devices` is sent, and the
    /// node adds the channels a device needs itself (the same model code as `setDevices` here).
    package func changeDevices(node token: String?, report: Reporter, _ change: (inout [VirtualDevice]) throws -> Void) throws {
        try self.change(node: token, keys: [Parameter(.devices)], report: report) { m in
            var devices = m.devices
            try change(&devices)
            try m.setDevices(devices.map(\.text))
        }
    }
}

extension [VirtualDevice] {
    /// The place of the device called `name`; refused naming the devices there are.
    package func index(named name: String) throws -> Int {
        guard let k = firstIndex(where: { $0.name == name }) else {
            let names = map(\.name).joined(separator: ", ")
            throw CommandError.invalid("the node has no device '\(name.printable)'" + (names.isEmpty ? "" : " (it has \(names))"))
        }
        return k
    }
}
