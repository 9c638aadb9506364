import ArgumentParser
import CrosspointControl
import CrosspointCore

/// `crosspoint net`: a node's network streams, over the `devices` key of the parameter table
/// (`send` and `receive` lines: NetworkStreams.swift; README: Beyond one machine).
struct NetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "net",
        abstract: "A node's network streams: outputs sent to another machine, a stream received into inputs (PipeWire's RTP).",
        discussion: """
        The node loads PipeWire's own RTP sender (module-rtp-sink) or receiver \
        (module-rtp-source) and links it to its outputs or inputs, as it makes its virtual \
        devices: gone with the node, kept in its state. What goes on the wire is plain RTP, \
        received by a stock module-rtp-source and sent by a stock module-rtp-sink. Without \
        --outputs or --inputs, a stream gets new channels NAME_POSITION.

        PipeWire 1.x receives from an address and port (0.0.0.0 for unicast, a group for \
        multicast). PipeWire 0.3.65 receives only what its sender announces (SAP): give \
        --session, the name the sender announces (its --session, or its device name).

        Examples:
          crosspoint net send desk stream-out --to 239.69.1.10:5004 --outputs stream_FL,stream_FR
          crosspoint net receive desk guest --from 0.0.0.0:5004 --latency 20
          crosspoint net receive desk guest --session stream-out
          crosspoint net list desk
          crosspoint net remove desk guest
        """,
        subcommands: [NetListCommand.self, NetSendCommand.self, NetReceiveCommand.self, NetRemoveCommand.self])
}

struct NetListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The node's network streams and their state.")
    @OptionGroup var connection: Connection
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String?

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.mixer(of: target)
        let streams = mixer.devices.filter(\.kind.isNetwork)
        guard !streams.isEmpty else {
            print("\(target.name): no network streams (crosspoint net send \(target.name.printable) NAME --to ADDRESS:PORT)")
            return
        }
        let status = NodeView.deviceStatus(session, target, mixer)
        for device in streams {
            let channels = device.channels.joined(separator: ",")
            let how = device.kind == .send ? "outputs \(channels) ->" : "-> inputs \(channels)"
            print("\(device.kind.rawValue) \(device.name.printable) \(how) \(device.network.map { $0.summary(sending: device.kind == .send) } ?? "")"
                  + (status[device.name].map { ": \($0.printable)" } ?? ""))
        }
    }
}

/// The options a send and a receive share.
struct NetStreamOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The stream's name (RTP's session name, announced by SAP; a sender's default: the device's name).", valueName: "name"))
    var session: String?
    @Option(help: ArgumentHelp("The samples on the wire: S16BE (L16, the default), S24BE (L24), U8, ALAW, ULAW.", valueName: "format"))
    var format: String?
    @Option(help: ArgumentHelp("Its channel positions, e.g. FL,FR (the default) or MONO.", valueName: "positions")) var position: String?
    @Option(help: ArgumentHelp("What the sound settings show (default: the name).", valueName: "text")) var description: String?

    func words() -> String {
        var text = ""
        if let session { text += " session=\(session)" }
        if let format { text += " format=\(format)" }
        if let position { text += " position=\(position)" }
        return text
    }
}

struct NetSendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "send", abstract: "Send a group of the node's outputs to another machine.")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The stream's device name (node.name).", valueName: "name")) var name: String
    @Option(help: ArgumentHelp("Where it goes: ADDRESS:PORT, unicast or multicast (239.69.1.10:5004, [ff15::1]:5004).", valueName: "address:port"))
    var to: String
    @Option(help: ArgumentHelp("The outputs it carries, one per position, by name or index (default: new NAME_POSITION outputs).", valueName: "channels"))
    var outputs: String?
    @OptionGroup var stream: NetStreamOptions

    func run() throws {
        var text = "send \(name) to=\(to)" + stream.words()
        if let outputs { text += " channels=\(outputs)" }
        if let description = stream.description { text += " description=\(description)" }
        try add(text, connection: connection, node: node, report: output.reporter)
    }
}

struct NetReceiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "receive", abstract: "Receive a stream from another machine into a group of the node's inputs.")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The stream's device name (node.name).", valueName: "name")) var name: String
    @Option(help: ArgumentHelp("Where it arrives (PipeWire 1.x): ADDRESS:PORT, 0.0.0.0:PORT for unicast, a group for multicast.", valueName: "address:port"))
    var from: String?
    @Option(help: ArgumentHelp("What the receiver holds back against jitter, in ms (default 100).", valueName: "ms")) var latency: String?
    @Option(help: ArgumentHelp("The inputs it feeds, one per position, by name or index (default: new NAME_POSITION inputs).", valueName: "channels"))
    var inputs: String?
    @OptionGroup var stream: NetStreamOptions

    func run() throws {
        var text = "receive \(name)" + (from.map { " from=\($0)" } ?? "") + stream.words()
        if let latency { text += " latency=\(latency)" }
        if let inputs { text += " channels=\(inputs)" }
        if let description = stream.description { text += " description=\(description)" }
        try add(text, connection: connection, node: node, report: output.reporter)
    }
}

struct NetRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Stop a network stream (its channels stay).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The stream's name.", valueName: "name")) var name: String

    func run() throws {
        try connection.connect().changeDevices(node: node, report: output.reporter) { devices in
            let k = try devices.index(named: name)
            guard devices[k].kind.isNetwork else {
                throw CommandError.invalid("'\(name.printable)' is a virtual \(devices[k].kind.rawValue), not a network stream (crosspoint virtual remove)")
            }
            devices.remove(at: k)
        }
    }
}

/// Adds the device `text` describes to the node's devices.
private func add(_ text: String, connection: Connection, node: String, report: Reporter) throws {
    try connection.connect().changeDevices(node: node, report: report) { devices in
        let device = try VirtualDevice(text: text)
        guard !devices.contains(where: { $0.name == device.name }) else {
            throw CommandError.invalid("the node already has a device '\(device.name)' (crosspoint net remove first)")
        }
        devices.append(device)
    }
}
