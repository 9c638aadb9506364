import ArgumentParser
import CrosspointControl
import CrosspointCore

/// `crosspoint follow` and `unfollow`: output groups that follow a device, over the `targets`
/// key of the parameter table (README: Crosspoint as your sound output).
struct FollowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow",
        abstract: "Keep outputs linked to a device (a sink by name, or the default device), re-linked as it changes.",
        discussion: """
        The node links the outputs to the device's channels of their positions (FL to \
        playback_FL), or with --offset N to its channels N, N+1, ... in order; it re-links them \
        when the device comes back or, for `default`, as soon as the default device changes, and \
        removes their links to any other sink. A group of the same outputs is replaced.

        Examples:
          crosspoint follow desk default --outputs mon_FL,mon_FR
          crosspoint follow xp alsa_output.usb-MOTU --offset 2
          crosspoint unfollow desk
        """)
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("A sink's node.name, or default.", valueName: "device")) var device: String
    @Option(help: ArgumentHelp("The outputs, by name or index (default: all).", valueName: "outputs")) var outputs: String?
    @Option(help: ArgumentHelp("Into the device's channels from this one (0 is the first), in order.", valueName: "n")) var offset: Int?

    func run() throws {
        var text = device
        if let outputs { text += " outputs=\(outputs)" }
        if let offset { text += " offset=\(offset)" }
        let session = try connection.connect()
        try session.change(node: node, keys: [Parameter(.targets)], report: output.reporter) { m in
            var group = try OutputTarget(text: text)
            group.outputs = try group.outputs.map { m.outputChannels[try m.outputIndex($0)] }
            let mine = Set(group.outputs.isEmpty ? m.outputChannels : group.outputs)
            // The groups that shared an output with this one give it up.
            var lines: [String] = []
            for var other in m.targets {
                let theirs = other.outputs.isEmpty ? m.outputChannels : other.outputs
                let kept = theirs.filter { !mine.contains($0) }
                guard !kept.isEmpty else { continue }
                if kept.count != theirs.count { other.outputs = kept }
                lines.append(other.text)
            }
            try m.setTargets(lines + [group.text])
        }
        // A device that is not there now is allowed (devices come and go: the outputs link when
        // it appears), but said at once, with the sinks there are, closest first.
        let wanted = device
        if (try? OutputTarget(device: wanted))?.followsDefault != true, !session.graph.nodes.contains(where: { $0.isSink && $0.name == wanted }) {
            let sinks = session.graph.nodes.filter(\.isSink)
            let (ordered, close) = NameSuggestions.rank(wanted, sinks) { [$0.name, $0.description] }
            let suggestion = NameSuggestions.phrase(close.map { $0.name.printable })
            output.reporter.warn("no sink is called '\(wanted.printable)' now: the outputs will link to it when it appears"
                + (suggestion.isEmpty ? "" : "; " + suggestion)
                + (sinks.isEmpty ? " (this daemon has no Audio/Sink now)" : " (the sinks are: " + ordered.map(session.label).joined(separator: ", ") + ")"))
        }
    }
}

struct UnfollowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unfollow",
        abstract: "Stop outputs following a device (all groups, or those of DEVICE); their links stay until you change them.")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("Only the groups following this device.", valueName: "device")) var device: String?

    func run() throws {
        try connection.connect().change(node: node, keys: [Parameter(.targets)], report: output.reporter) { m in
            let kept = m.targets.filter { device != nil && $0.device != device }
            guard kept.count < m.targets.count else {
                throw CommandError.invalid(device.map { "no outputs follow \($0.printable)" } ?? "no outputs follow a device")
            }
            try m.setTargets(kept.map(\.text))
        }
    }
}
