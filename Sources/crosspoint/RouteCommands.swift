import ArgumentParser
import CrosspointControl
import CrosspointClient
import CrosspointCore

struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route",
        abstract: "Link the node's outputs to a sink's playback ports, by channel name or offset.",
        discussion: """
        With --channels, output k (counting from --from) goes to the sink's channel named by \
        the k-th name. With --offset K (default 0), output k goes to the sink's channel K+k, \
        for as many channels as both have. The links are made by the daemon's link-factory \
        with object.linger=true: they stay after this command ends. Existing links are kept; \
        with --replace, the outputs routed lose every other link first, so a route moves \
        (`crosspoint unroute` removes links). See `crosspoint devices` for the sinks, their \
        channels, and the offset each has in an aggregate of all.

        Examples:
          crosspoint route crosspoint --to tv                  outputs to FL, FR, ...
          crosspoint route xp-pair34 --to sink4 --channels RL,RR
          crosspoint route xp-pair34 --to sink4 --offset 2     to channels 2 and 3
          crosspoint route xp-pair34 --to sink4 --offset 2 --replace   moved from 0-1 to 2-3
          crosspoint route six --to iface --from 2             outputs 2-5 to iface
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: ArgumentHelp("The node: name, description or id.", valueName: "node"),
              completion: .custom { words, _, prefix in Completion.nodes(words, prefix: prefix) })
    var node: String
    @Option(name: .customLong("to"), help: ArgumentHelp("The sink: name, description or id.", valueName: "sink"),
            completion: .custom { words, _, prefix in Completion.sinks(words, prefix: prefix) })
    var sink: String
    @Option(help: ArgumentHelp("Sink channel names, one per output: FL,FR or RL,RR.", valueName: "names"),
            completion: .custom { words, _, prefix in Completion.sinkChannels(words, prefix: prefix) })
    var channels: String?
    @Option(help: ArgumentHelp("The sink channel that output --from goes to (0 = its first).", valueName: "K"))
    var offset: Int?
    @Option(name: .customLong("from"), help: ArgumentHelp("The first node output to link (0 = the first).", valueName: "J"))
    var first = 0
    @Flag(help: "Remove the routed outputs' other links: the route moves instead of fanning out.")
    var replace = false

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
        let report = output.reporter
        let session = try connection.connect()
        let target = try session.target(node)
        let sink = try session.sink(self.sink)
        let playback = session.graph.ports(of: sink.id, .input)
        let sinkName = sink.name.printable
        guard !playback.isEmpty else {
            throw CommandError.invalid("sink '\(sinkName)' has no playback ports (yet); is a session manager running?")
        }
        let mixer = try session.mixer(of: target)
        let outputs = target.ordered(target.outputs, (0..<mixer.outputs).map { target.outputName($0, mixer) })
        guard first < outputs.count else {
            throw CommandError.from(.indexOutOfRange(what: "output", index: first, count: outputs.count), nil)
        }
        let channelList = playback.map { ($0.channel ?? $0.name).printable }.joined(separator: " ")

        // Every pair is worked out before the first link is made: a mistake links nothing.
        var pairs: [(GraphPort, GraphPort)] = []
        if let channels {
            let wanted = names(channels)
            guard wanted.count <= outputs.count - first else {
                throw CommandError.invalid(
                    "--channels names \(counted(wanted.count, "channel")) but the node has \(counted(outputs.count - first, "output"))"
                        + (first > 0 ? " from output \(first) on" : ""))
            }
            for (k, name) in wanted.enumerated() {
                guard let port = playback.first(where: { ($0.channel ?? "").lowercased() == name.lowercased() }) else {
                    throw CommandError.invalid("sink '\(sinkName)' has no channel '\(name.printable)'; its channels are \(channelList)")
                }
                pairs.append((outputs[first + k], port))
            }
        } else {
            let offset = offset ?? 0
            guard offset < playback.count else {
                throw CommandError.invalid(
                    "--offset \(offset) is past the last channel of sink '\(sinkName)': it has \(counted(playback.count, "channel")) "
                        + "(\(channelList)), numbered 0 to \(playback.count - 1)")
            }
            let count = min(outputs.count - first, playback.count - offset)
            pairs = (0..<count).map { (outputs[first + $0], playback[offset + $0]) }
        }

        var result = RouteReport(node: target.node.name, id: target.node.id, sink: sink.name)
        if replace {
            let wanted = Set(pairs.map { "\($0.0.id)>\($0.1.id)" })
            let routed = Set(pairs.map(\.0.id))
            for link in session.graph.links where routed.contains(link.outputPort) && !wanted.contains("\(link.outputPort)>\(link.inputPort)") {
                try session.client.destroy(global: link.id)
                let entry = RouteReport.Link(output: session.graph.label(link.outputPort), input: session.graph.label(link.inputPort), link: link.id)
                result.unlinked.append(entry)
                report.say("unlinked \(entry.output.printable) -> \(entry.input.printable) (link \(link.id))")
            }
        }
        for (output, input) in pairs {
            let entry = { (id: UInt32?) in
                RouteReport.Link(output: "\(target.node.name):\(output.name)", input: "\(sink.name):\(input.name)", link: id)
            }
            if let existing = session.graph.links.first(where: { $0.outputPort == output.id && $0.inputPort == input.id }) {
                let e = entry(existing.id)
                result.alreadyLinked.append(e)
                report.say("already linked: \(e.output.printable) -> \(e.input.printable)")
                continue
            }
            let id = try session.client.createLink(from: output, to: input)
            let e = entry(id)
            result.linked.append(e)
            report.say("linked \(e.output.printable) -> \(e.input.printable)" + (id.map { " (link \($0))" } ?? ""))
        }
        let unlinked = outputs.count - first - pairs.count
        if unlinked > 0 {
            result.notLinked = (first + pairs.count..<outputs.count).map { outputs[$0].name }
            report.say("not linked: \(counted(unlinked, "output")) from \(outputs[first + pairs.count].name.printable) on"
                + " (sink '\(sinkName)' has \(counted(playback.count, "channel")))")
        }
        try report.emit(result)
    }
}

struct UnrouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unroute",
        abstract: "Remove links from the node's outputs: all of them, to one sink, or of some outputs.",
        discussion: """
        Removes the links from the node's outputs (all of them, or those named), to anything \
        or only to --to SINK, as `pw-link -d` would. The node forgets them: they are not made \
        again when the sink returns. Nothing linked is no error.

        Examples:
          crosspoint unroute crosspoint                     every output link
          crosspoint unroute xp-pair34 --to sink4           only those to sink4
          crosspoint unroute xp-pair34 FL FR                out_FL and out_FR's links
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: ArgumentHelp("The node: name, description or id.", valueName: "node"),
              completion: .custom { words, _, prefix in Completion.nodes(words, prefix: prefix) })
    var node: String
    @Argument(help: ArgumentHelp("Outputs to unlink, by index or channel name (default: all).", valueName: "out"),
              completion: .custom { words, _, prefix in Completion.channels(words, .output, prefix: prefix) })
    var outputs: [String] = []
    @Option(name: .customLong("to"), help: ArgumentHelp("Only the links to this sink (name, description or id).", valueName: "sink"),
            completion: .custom { words, _, prefix in Completion.sinks(words, prefix: prefix) })
    var sink: String?

    func run() throws {
        let report = output.reporter
        let session = try connection.connect()
        let target = try session.target(node)
        let sink = try self.sink.map { try session.sink($0) }
        let ports: [GraphPort]
        if outputs.isEmpty {
            ports = target.outputs
        } else {
            let mixer = try session.mixer(of: target)
            ports = try outputs.map { token in
                do {
                    let j = try mixer.outputIndex(CommandLineWords.restore(token))
                    guard j < target.outputs.count else { throw CrosspointError.indexOutOfRange(what: "output", index: j, count: target.outputs.count) }
                    // By name: a renamed channel's port is a new object, listed last.
                    return target.outputs.first { $0.name == target.outputName(j, mixer) } ?? target.outputs[j]
                } catch let error as CrosspointError {
                    throw CommandError.from(error, mixer)
                }
            }
        }
        let ids = Set(ports.map(\.id))
        let links = session.graph.links.filter { ids.contains($0.outputPort) && (sink == nil || $0.inputNode == sink!.id) }
        var result = RouteReport(node: target.node.name, id: target.node.id, sink: sink?.name)
        for link in links {
            try session.client.destroy(global: link.id)
            let entry = RouteReport.Link(output: session.graph.label(link.outputPort), input: session.graph.label(link.inputPort), link: link.id)
            result.unlinked.append(entry)
            report.say("unlinked \(entry.output.printable) -> \(entry.input.printable) (link \(link.id))")
        }
        if links.isEmpty {
            report.say("\(target.name): no links to remove" + (sink.map { " to '\($0.name.printable)'" } ?? ""))
        }
        try report.emit(result)
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
            return ["\(d.id)", d.name.printable, d.description.printable,
                    d.channels.isEmpty ? "(no ports)" : d.channels.joined(separator: " ").printable, range]
        }, terminal: Terminal(colour: .auto, width: nil))
    }
}
