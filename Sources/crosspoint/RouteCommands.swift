import ArgumentParser
import CrosspointCore
import CrosspointClient

struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route",
        abstract: "Link the node's outputs to a sink's playback ports, by channel name or offset.",
        discussion: """
        With --channels, output k (counting from --from) goes to the sink's channel named by \
        the k-th name. With --offset K (default 0), output k goes to the sink's channel K+k, \
        for as many channels as both have. The links are made by the daemon's link-factory \
        with object.linger=true: they stay after this command ends (remove them with \
        pw-link -d, Helvum or qpwgraph). Existing links are kept. See `crosspoint devices` \
        for the sinks, their channels, and the offset each has in an aggregate of all.

        Examples:
          crosspoint route crosspoint --to tv                  outputs to FL, FR, ...
          crosspoint route xp-pair34 --to sink4 --channels RL,RR
          crosspoint route xp-pair34 --to sink4 --offset 2     to channels 2 and 3
          crosspoint route six --to iface --from 2             outputs 2-5 to iface
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String
    @Option(name: .customLong("to"), help: ArgumentHelp("The sink: name, description or id.", valueName: "sink"))
    var sink: String
    @Option(help: ArgumentHelp("Sink channel names, one per output: FL,FR or RL,RR.", valueName: "names"))
    var channels: String?
    @Option(help: ArgumentHelp("The sink channel that output --from goes to (0 = its first).", valueName: "K"))
    var offset: Int?
    @Option(name: .customLong("from"), help: ArgumentHelp("The first node output to link (0 = the first).", valueName: "J"))
    var first = 0

    func validate() throws {
        if channels != nil && offset != nil { throw ValidationError("give --channels or --offset, not both") }
        if let offset, offset < 0 { throw ValidationError("--offset must be 0 or more, got \(offset)") }
        if first < 0 { throw ValidationError("--from must be 0 or more, got \(first)") }
        if let channels, names(channels).isEmpty { throw ValidationError("--channels names no channel") }
    }

    private func names(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
    }

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let sink = try session.sink(self.sink)
        let playback = session.graph.ports(of: sink.id, .input)
        guard !playback.isEmpty else {
            throw CommandError.invalid("sink '\(sink.name)' has no playback ports (yet); is a session manager running?")
        }
        let outputs = target.outputs
        guard first < outputs.count else {
            throw CrosspointError.indexOutOfRange(what: "output", index: first, count: outputs.count)
        }
        let channelList = playback.map { $0.channel ?? $0.name }.joined(separator: " ")

        // Every pair is worked out before the first link is made: a mistake links nothing.
        var pairs: [(GraphPort, GraphPort)] = []
        if let channels {
            let wanted = names(channels)
            guard wanted.count <= outputs.count - first else {
                throw CommandError.invalid(
                    "--channels names \(wanted.count) channels but the node has \(outputs.count - first) outputs from output \(first)")
            }
            for (k, name) in wanted.enumerated() {
                guard let port = playback.first(where: { ($0.channel ?? "").lowercased() == name.lowercased() }) else {
                    throw CommandError.invalid("sink '\(sink.name)' has no channel '\(name)'; its channels are \(channelList)")
                }
                pairs.append((outputs[first + k], port))
            }
        } else {
            let offset = offset ?? 0
            guard offset < playback.count else {
                throw CommandError.invalid(
                    "--offset \(offset) is past the last of sink '\(sink.name)''s \(playback.count) channels (\(channelList)), numbered 0 to \(playback.count - 1)")
            }
            let count = min(outputs.count - first, playback.count - offset)
            pairs = (0..<count).map { (outputs[first + $0], playback[offset + $0]) }
        }

        for (output, input) in pairs {
            let text = "\(target.node.name):\(output.name) -> \(sink.name):\(input.name)"
            if session.graph.isLinked(output: output.id, input: input.id) {
                print("already linked: \(text)")
                continue
            }
            let id = try session.client.createLink(from: output, to: input)
            print("linked \(text)" + (id.map { " (link \($0))" } ?? ""))
        }
        let unlinked = outputs.count - first - pairs.count
        if unlinked > 0 {
            print("not linked: \(unlinked) output\(unlinked == 1 ? "" : "s") from \(outputs[first + pairs.count].name) on"
                + " (sink '\(sink.name)' has \(playback.count) channels)")
        }
    }
}

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the sinks, their channels, and each one's offset in an aggregate of them all.",
        discussion: """
        The aggregate offset is where a sink's first channel would sit if all the sinks were \
        one device, in this order: a stereo TV then a 4-channel interface are channels 0-1 and \
        2-5. A 6-output node routes to both with `route NODE --to TV` and \
        `route NODE --to INTERFACE --from 2`.

        Examples:
          crosspoint devices
          crosspoint devices --json
        """)

    @OptionGroup var connection: Connection
    @Flag(help: "Print JSON: a list of { id, name, description, channels, offset }.") var json = false

    struct Device: Encodable {
        let id: UInt32
        let name: String
        let description: String
        let channels: [String]
        let offset: Int
    }

    func run() throws {
        let session = try connection.connect()
        var offset = 0
        var devices: [Device] = []
        for sink in session.graph.nodes where sink.isSink {
            let channels = session.graph.ports(of: sink.id, .input).map { $0.channel ?? $0.name }
            devices.append(Device(id: sink.id, name: sink.name, description: sink.description, channels: channels, offset: offset))
            offset += channels.count
        }
        if json {
            print(try JSONText.encode(devices), terminator: "")
            return
        }
        guard !devices.isEmpty else {
            print("no sinks")
            return
        }
        printTable([["ID", "NAME", "DESCRIPTION", "CHANNELS", "AGGREGATE"]] + devices.map { d in
            let range = d.channels.isEmpty ? "-" : d.channels.count == 1 ? "\(d.offset)" : "\(d.offset)-\(d.offset + d.channels.count - 1)"
            return ["\(d.id)", d.name, d.description, d.channels.isEmpty ? "(no ports)" : d.channels.joined(separator: " "), range]
        }, terminal: Terminal(colour: .auto, width: nil))
    }
}
