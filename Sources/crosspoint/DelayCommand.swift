import ArgumentParser
import CrosspointControl
import CrosspointCore
import CrosspointPipeWire

/// `crosspoint delay`: the delay of outputs, over the `delay.out.<out>` keys of the parameter
/// table, in milliseconds or in samples at the graph's rate.
struct DelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delay",
        abstract: "Delay outputs, to line up devices of different latency.",
        discussion: """
        \(ParameterHelp.describe("delay.out.<out>"))

        DELAY is milliseconds (12, 12ms, 0.5ms) or samples (576samples, 576smp), the latter at \
        the rate the node runs at (its property crosspoint.rate, once it has run; before that, \
        with a note, the graph's clock.rate from the settings metadata) and kept as milliseconds. 0 removes the delay. The output cross-fades from its old delay to the new \
        one over ramp.ms, so a change does not click; a first delay on an output that is \
        playing starts once the node has recorded that much of it.

        Examples:
          crosspoint delay desk mon_FL,mon_FR 180ms     the monitor waits for a Bluetooth speaker
          crosspoint delay desk stream_FL 4801samples
          crosspoint delay desk stream_FL 0
        """)

    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The outputs, by name or index, separated by commas.", valueName: "outputs"),
              completion: .custom { words, _, prefix in Completion.channels(words, .output, prefix: prefix) })
    var outputs: String
    @Argument(help: ArgumentHelp("Milliseconds (12, 12ms) or samples (576samples), 0 to 1 s.", valueName: "delay")) var delay: String

    func run() throws {
        let text = CommandLineWords.restore(delay)
        let amount: DelayAmount
        do {
            amount = try DelayAmount(parsing: text, key: "delay")
        } catch {
            throw CommandError.invalid(error.description)
        }
        let session = try connection.connect()
        let target = try session.target(node)
        var rate = 0.0
        if case .samples = amount {
            // The rate the node runs at, as it says (once it has run).
            let properties = (try? session.client.properties(ofNode: target.node.id)) ?? [:]
            if let text = properties[CrosspointProperty.rate], let node = Double(text), node.isFinite, node > 0 {
                rate = node
            } else if let text = (try? session.client.metadataProperties(SettingsMetadataKey.metadataName, subject: 0))?[SettingsMetadataKey.clockRate],
                      let clock = Double(text), clock.isFinite, clock > 0 {
                // Asleep since it was made (its devices and links are passive): the graph's clock.
                rate = clock
                printError("note: \(target.name.printable) has not run yet; samples are converted at the graph's clock.rate, \(Gain.format(clock)) Hz")
            } else {
                throw CommandError.invalid("delay: samples need the rate \(target.name) runs at, which it says once it has run "
                    + "(linked into a graph), or the graph's clock.rate; give milliseconds, or link it first")
            }
        }
        try session.change(target, report: output.reporter) { m in
            let names = CommandLineWords.restore(outputs).split(separator: ",", omittingEmptySubsequences: false)
            for name in names {
                let j = try Parameter.typed("delay.out.\(name)", in: m).output
                try m.setOutputDelay(j, milliseconds: try amount.milliseconds(atRate: rate, key: "delay.out.\(j)"))
            }
        }
    }
}
