import ArgumentParser
import CrosspointControl
import CrosspointCore
import CrosspointPipeWire

/// `crosspoint virtual`: a node's virtual devices, over the `devices` key of the parameter table
/// (README: Crosspoint as your sound output).
struct VirtualCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "virtual",
        abstract: "A node's virtual devices: sinks applications play into, sources they record from.",
        discussion: """
        A virtual sink is a playback device that applications and the sound settings choose \
        (pw-play --target NAME, paplay --device=NAME, the default device); its channels feed \
        mixer inputs. A virtual source is a recording device (pw-record --target NAME, a call's \
        microphone) that carries mixer outputs. Without --channels, a device gets new channels \
        NAME_POSITION: a sink's new inputs play on the outputs of their position, a source's new \
        outputs take the inputs of theirs.

        Examples:
          crosspoint virtual add crosspoint sink game --description Game
          crosspoint virtual add crosspoint sink chat --position MONO
          crosspoint virtual add crosspoint source stream-mix --description "Stream mix"
          crosspoint virtual add crosspoint sink speakers --channels FL,FR --default
          crosspoint virtual rename crosspoint game games --description "Games"
          crosspoint virtual remove crosspoint chat
          crosspoint virtual list crosspoint
        """,
        subcommands: [VirtualListCommand.self, VirtualAddCommand.self, VirtualRemoveCommand.self, VirtualRenameCommand.self])
}

struct VirtualListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The node's virtual devices.")
    @OptionGroup var connection: Connection
    @Flag(help: "Print as JSON: { \"devices\": [ { \"type\": ..., \"name\": ..., ... } ] }.") var json = false
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String?

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.mixer(of: target)
        if json {
            print(try JSONText.encode(VirtualListing(devices: mixer.devices.map(VirtualListing.Item.init))), terminator: "")
            return
        }
        guard !mixer.devices.isEmpty else {
            print("\(target.name): no virtual devices (crosspoint virtual add \(target.name.printable) sink NAME)")
            return
        }
        for device in mixer.devices {
            let side = device.kind.feedsInputs ? "inputs" : "outputs"
            print("\(device.kind.rawValue) \(device.name.printable) \"\(device.description.printable)\": "
                  + "\(device.positions.joined(separator: ",")) -> \(side) \(device.channels.joined(separator: ","))"
                  + (device.isDefault ? " (made the default)" : ""))
        }
    }
}

struct VirtualAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a virtual sink or source.")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("sink (applications play into it) or source (they record from it).", valueName: "type"))
    var type: String
    @Argument(help: ArgumentHelp("The device's name (node.name): what --target and --device take.", valueName: "name"))
    var name: String
    @Option(help: ArgumentHelp("What the sound settings show (default: the name).", valueName: "text")) var description: String?
    @Option(help: ArgumentHelp("Its channel positions, e.g. FL,FR (the default) or MONO.", valueName: "positions")) var position: String?
    @Option(help: ArgumentHelp("The mixer channels it carries, one per position, by name or index (default: new NAME_POSITION channels).", valueName: "channels"))
    var channels: String?
    @Flag(help: "Make it the default device once it is made (as wpctl set-default does).") var `default` = false

    func run() throws {
        var text = "\(type) \(name)"
        if let position { text += " position=\(position)" }
        if let channels { text += " channels=\(channels)" }
        if let description { text += " description=\(description)" }
        var kind = VirtualDevice.Kind.sink
        try connection.connect().changeDevices(node: node, report: output.reporter) { devices in
            let device = try VirtualDevice(text: text)
            guard !devices.contains(where: { $0.name == device.name }) else {
                throw CommandError.invalid("the node already has a device '\(device.name)' (crosspoint virtual remove first, or rename)")
            }
            kind = device.kind
            devices.append(device)
        }
        if `default` { try makeDefault(name, kind: kind) }
    }

    /// Waits for the device to exist, then makes it the configured default (the session manager
    /// remembers it), here rather than through the device's `default` flag, which the node
    /// drops once done and so would not read back as sent.
    private func makeDefault(_ name: String, kind: VirtualDevice.Kind) throws {
        let session = try connection.connect()
        let deadline = ContinuousClock.now + .seconds(5)
        while try !session.client.snapshot().nodes.contains(where: { $0.name == name }) {
            guard ContinuousClock.now < deadline else { throw CommandError.invalid("device \(name.printable) did not appear within 5 s; not made the default") }
            try session.client.iterateOnce(milliseconds: 100)
        }
        let key = kind == .sink ? DefaultMetadataKey.configuredSink : DefaultMetadataKey.configuredSource
        try session.client.setMetadata(DefaultMetadataKey.metadataName, subject: 0, key: key, type: "Spa:String:JSON", value: "{ \"name\": \"\(name)\" }")
    }
}

struct VirtualRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a virtual device (its applications go where the session manager sends them; its channels stay).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The device's name.", valueName: "name")) var name: String

    func run() throws {
        try connection.connect().changeDevices(node: node, report: output.reporter) { devices in devices.remove(at: try devices.index(named: name)) }
    }
}

struct VirtualRenameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename", abstract: "Rename a virtual device, or change its description (it is made again).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The device's name.", valueName: "name")) var name: String
    @Argument(help: ArgumentHelp("Its new name (or the same, with --description).", valueName: "new-name")) var newName: String
    @Option(help: ArgumentHelp("Its new description.", valueName: "text")) var description: String?

    func run() throws {
        try connection.connect().changeDevices(node: node, report: output.reporter) { devices in
            let k = try devices.index(named: name)
            var device = devices[k]
            if newName != name, devices.contains(where: { $0.name == newName }) {
                throw CommandError.invalid("the node already has a device '\(newName.printable)'")
            }
            // The description follows the name when it was the name.
            let description = description ?? (device.description == device.name ? newName : device.description)
            device = try VirtualDevice(kind: device.kind, name: newName, description: description, positions: device.positions,
                                       channels: device.channels, isDefault: device.isDefault, network: device.network)
            devices[k] = device
        }
    }
}
