import ArgumentParser
import CrosspointControl
import CrosspointPipeWire

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the Crosspoint nodes: id, name, description, input and output counts.",
        discussion: """
        Examples:
          crosspoint list
          crosspoint list --json | jq '.[].name'
          crosspoint list --remote pipewire-1
        """)

    @OptionGroup var connection: Connection
    @Flag(help: "Print JSON: a list of { id, name, description, inputs, outputs }.") var json = false

    func run() throws {
        let session = try connection.connect()
        let entries = NodeList.entries(session)
        if json {
            print(try JSONText.encode(entries), terminator: "")
            return
        }
        guard !entries.isEmpty else {
            print("no Crosspoint nodes")
            return
        }
        printTable([["ID", "NAME", "DESCRIPTION", "INPUTS", "OUTPUTS"]]
            + entries.map { ["\($0.id)", $0.name.printable, $0.description.printable, "\($0.inputs)", "\($0.outputs)"] },
            terminal: Terminal(colour: .auto, width: nil))
    }
}

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a node's matrix, gains, mutes and links.",
        discussion: """
        One row per input and one column per output, labelled with port names; cross-points \
        and gains in dB (-inf is silence, ø marks a flipped polarity), M marks a mute. Wide \
        matrices are printed in blocks of columns that fit the terminal. NODE may be left out \
        when there is only one Crosspoint node.

        Examples:
          crosspoint show
          crosspoint show xp-4x3 --color never
          crosspoint show big --width 120
          crosspoint show crosspoint --json | jq '.matrix'
          crosspoint show a --json | crosspoint load b -   (the same schema as presets)
        """)

    @OptionGroup var connection: Connection
    @Argument(help: ArgumentHelp("The node: name, description or id.", valueName: "node"),
              completion: .custom { words, _, prefix in Completion.nodes(words, prefix: prefix) })
    var node: String?
    @Flag(help: "Print JSON: the preset `save` writes (linear gains, mutes, the matrix as rows) and each port's name and links.")
    var json = false
    @Option(help: "Colour: auto (on a terminal), always or never.") var color: Terminal.ColourChoice = .auto
    @Option(help: "Fit the table into this many columns (default: the terminal's width; unlimited when piped).")
    var width: Int?
    @Flag(help: "Add the level (peak, dBFS) of every input and output, from one reading of the node's meter.")
    var levels = false

    func validate() throws {
        if levels && json { throw ValidationError("--levels adds to the table; for levels as JSON use: crosspoint meter NODE --once --json") }
    }

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.mixer(of: target)
        var view = NodeView(target: target, mixer: mixer, graph: session.graph)
        if levels { view.levels = try session.reading(of: target) }
        if json {
            view.deviceStatus = NodeView.deviceStatus(session, target, mixer)
            print(try JSONText.encode(view.document), terminator: "")
        } else {
            print(view.text(Terminal(colour: color, width: width)), terminator: "")
            // What the node says of its virtual devices and the devices its outputs follow
            // (made, waiting for a name or a device).
            if !mixer.devices.isEmpty || !mixer.targets.isEmpty {
                let properties = (try? session.client.properties(ofNode: target.node.id)) ?? [:]
                if let devices = properties[CrosspointProperty.devices], !mixer.devices.isEmpty { print("devices: \(devices.printable)") }
                if let targets = properties[CrosspointProperty.targets], !mixer.targets.isEmpty { print("following: \(targets.printable)") }
            }
            // Its ducking rules, numbered as `crosspoint duck list` numbers them.
            for (n, rule) in mixer.ducking.enumerated() { print("ducking \(n): \(rule.text.printable)") }
            // Its scenes by name (`crosspoint scene list` says more) and the keys a recall leaves.
            if !mixer.scenes.isEmpty { print("scenes: \(mixer.scenes.map(\.name).joined(separator: ", "))") }
            if !mixer.sceneSafes.isEmpty { print("recall safes: \(mixer.sceneSafes.joined(separator: ", "))") }
        }
    }
}
