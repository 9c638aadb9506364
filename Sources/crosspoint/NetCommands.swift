import ArgumentParser
import CrosspointControl
import CrosspointCore

/// `crosspoint net`: a node's network streams, over the `devices` key of the parameter table
/// (`send` and `receive` lines: NetworkStreams.swift; README: Beyond one machine).
struct NetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "net",
        abstract: "A node's network streams: outputs sent to another machine, a stream received into inputs (PipeWire's RTP, AES67 and VBAN).",
        discussion: """
        The node loads PipeWire's own RTP sender (module-rtp-sink) or receiver \
        (module-rtp-source), or VBAN's (module-vban-send, module-vban-recv), and links it to \
        its outputs or inputs, as it makes its virtual devices: gone with the node, kept in its \
        state. What goes on the wire is plain RTP or VBAN, received by a stock module-rtp-source \
        and sent by a stock module-rtp-sink (VBAN: Voicemeeter's). Without --outputs or \
        --inputs, a stream gets new channels NAME_POSITION.

        An RTP sender announces its stream by SAP (0.3.65's by itself, 1.x's through the \
        module-rtp-sap the node loads beside it); a receiver takes a stream by that name \
        (--session) on both versions, or, on PipeWire 1.x, by address and port (--from: \
        0.0.0.0 for unicast, a group for multicast). net list --announced lists the streams \
        announced on the network. VBAN (PipeWire 0.3.76 and later) takes a stream by its name \
        (--session, at most 15 characters) on VBAN's port 6980.

        AES67 (--protocol aes67, PipeWire 1.x) is RTP as AES67 gear sends it: L24 at 48 kHz in \
        packets of 1 ms, announced on AES67's SAP group (239.255.255.255) with the PTP clock that \
        ptp4l follows, the stream in the PTP clock's driver group (pipewire.ptp0: crosspoint \
        setup enable crosspoint-ptp-clock, or pipewire-aes67's), which then drives the node.

        Examples:
          crosspoint net send desk stream-out --to 239.69.1.10:5004 --outputs stream_FL,stream_FR
          crosspoint net list --announced
          crosspoint net receive desk guest --session stream-out
          crosspoint net receive desk guest --from 0.0.0.0:5004 --latency 20
          crosspoint net send desk vm --protocol vban --to 192.168.1.20:6980 --session Stream1
          crosspoint net send desk studio --protocol aes67 --to 239.69.150.10:5004 --outputs FL,FR
          crosspoint net list desk
          crosspoint net remove desk guest
        """,
        subcommands: [NetListCommand.self, NetSendCommand.self, NetReceiveCommand.self, NetRemoveCommand.self])
}

struct NetListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The node's network streams and their state; with --announced, the streams announced on the network.",
        discussion: """
        --announced listens for SAP announcements on this machine's network (port 9875, groups \
        224.0.0.56 and 239.255.255.255): PipeWire's senders (0.3.65's by themselves, 1.x's \
        through module-rtp-sap, Crosspoint's on both), AES67 gear. Each is listed with its name, \
        which a receiver takes it by (crosspoint net receive NODE NAME --session STREAM), where \
        it goes, its format and channels, and where it comes from.
        """)
    @OptionGroup var connection: Connection
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String?
    @Flag(help: "List the streams announced on the network (SAP), listening --listen seconds.") var announced = false
    @Option(help: ArgumentHelp("How long to listen for announcements, in seconds (0.5 to 120; PipeWire announces every 5 s).", valueName: "seconds"))
    var listen: Double = 6

    func validate() throws {
        guard listen.isFinite, (0.5...120).contains(listen) else { throw ValidationError("--listen takes 0.5 to 120 seconds, not \(listen)") }
    }

    func run() throws {
        if announced {
            if node != nil { try listNode() }
            try listAnnounced()
        } else {
            try listNode()
        }
    }

    private func listAnnounced() throws {
        let heard = try SAPListener(seconds: listen).listen()
        for group in heard.notJoined { print("note: could not join \(group)") }
        if heard.streams.isEmpty {
            print("no streams announced in \(Gain.format(listen)) s" + (heard.refused > 0 ? " (\(heard.refused) packets that were not announcements: \(heard.lastRefusal ?? ""))" : ""))
            return
        }
        print("announced on the network (listened \(Gain.format(listen)) s):")
        for stream in heard.streams {
            let sdp = stream.session
            let destination = (sdp.address ?? "?") + ":" + (sdp.port.map(String.init) ?? "?")
            let origin = sdp.origin.split(separator: " ").last.map(String.init) ?? stream.source
            print("  \(sdp.name.printable): \(destination), \(sdp.formatText.printable)" + (sdp.timingText.map { ", \($0.printable)" } ?? "")
                  + ", from \(origin.printable)" + (sdp.tool.map { " (\($0.printable))" } ?? ""))
        }
        if heard.refused > 0 { print("(\(heard.refused) packets that were not announcements: \(heard.lastRefusal ?? ""))") }
    }

    private func listNode() throws {
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
    @Option(help: ArgumentHelp("rtp (the default), vban (VB-Audio's, as Voicemeeter sends and receives; PipeWire 0.3.76 and later) or aes67 (L24 at 48 kHz, 1 ms packets, PTP-clocked; PipeWire 1.x).", valueName: "protocol"))
    var `protocol`: String?
    @Option(help: ArgumentHelp("The stream's name (RTP's session name, announced by SAP; VBAN's stream name, at most 15 characters; a sender's default: the device's name).", valueName: "name"))
    var session: String?
    @Option(help: ArgumentHelp("The samples on the wire. RTP: S16BE (L16, the default), S24BE (L24), U8, ALAW, ULAW; VBAN: S16LE (the default), S24LE, S32LE, F32LE, F64LE, U8; AES67: S24BE (the default), S16BE.", valueName: "format"))
    var format: String?
    @Option(help: ArgumentHelp("The PipeWire driver group it joins (node.group), whose driver then drives it and the node: AES67's default is pipewire.ptp0, the PTP clock's (crosspoint setup enable crosspoint-ptp-clock).", valueName: "group"))
    var group: String?
    @Option(help: ArgumentHelp("Its channel positions, e.g. FL,FR (the default) or MONO.", valueName: "positions")) var position: String?
    @Option(help: ArgumentHelp("What the sound settings show (default: the name).", valueName: "text")) var description: String?

    func words() -> String {
        var text = ""
        if let `protocol` { text += " protocol=\(`protocol`)" }
        if let session { text += " session=\(session)" }
        if let format { text += " format=\(format)" }
        if let group { text += " group=\(group)" }
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
    @Option(help: ArgumentHelp("AES67: the PTP daemon's management socket, asked for the grandmaster its announcement names (default /var/run/ptp4lro, ptp4l's read-only one).", valueName: "path"))
    var ptp: String?
    @Option(help: ArgumentHelp("AES67: what it gathers before sending, in ms, the most the graph's quantum may be (default 3, as pipewire-aes67).", valueName: "ms"))
    var latency: String?
    @OptionGroup var stream: NetStreamOptions

    func run() throws {
        var text = "send \(name) to=\(to)" + stream.words() + (ptp.map { " ptp=\($0)" } ?? "") + (latency.map { " latency=\($0)" } ?? "")
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
    @Option(help: ArgumentHelp("Where it arrives (RTP on PipeWire 1.x; VBAN: 0.0.0.0:6980 when not given): ADDRESS:PORT, 0.0.0.0:PORT for unicast, a group for multicast.", valueName: "address:port"))
    var from: String?
    @Option(help: ArgumentHelp("What the receiver holds back against jitter, in ms (default 100; AES67: 3).", valueName: "ms")) var latency: String?
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
