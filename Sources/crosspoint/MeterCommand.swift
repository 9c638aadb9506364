import ArgumentParser
import CrosspointControl
import CrosspointClient
import CrosspointCore
import Glibc

struct MeterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meter",
        abstract: "Watch a node's levels live: peak and RMS of every input and output, in dBFS.",
        discussion: """
        One bar per input (the signal as it arrives, before its gain and mute) and per output \
        (as it leaves), with the port's name, its peak and RMS in dBFS, a peak hold of 1.5 s \
        (|) and a CLIP mark when a sample reaches full scale (0 dBFS) or more. On a terminal \
        the view is redrawn in place until Ctrl-C; piped, each reading is printed as plain \
        lines. -inf (null in JSON) is silence: every sample zero, as an unlinked input reads. \
        An unlinked output is not rendered, so it reads silence too.

        While it runs, the node measures and publishes its levels in the node property \
        crosspoint.levels (see README, Levels); when it ends, the node stops (killed, within 4 s).

        Examples:
          crosspoint meter crosspoint
          crosspoint meter xp-4x3 --interval 100
          crosspoint meter crosspoint --once
          crosspoint meter crosspoint --json | jq -c '.outputs[0]'
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String?
    @Flag(help: "Print each reading as one line of JSON: {\"inputs\":[{\"channel\",\"peak_db\",\"rms_db\"}...],\"outputs\":[...]}.")
    var json = false
    @Flag(help: "Print one reading and exit.") var once = false
    @Option(help: ArgumentHelp("Milliseconds between readings, from 33 (30 a second) to 60000.", valueName: "ms"))
    var interval = 50
    @Option(help: "Colour: auto (on a terminal), always or never.") var color: Terminal.ColourChoice = .auto

    func validate() throws {
        guard (LevelWatch.fastestInterval...LevelWatch.intervalRange.upperBound).contains(interval) else {
            throw ValidationError(
                "--interval must be from \(LevelWatch.fastestInterval) to \(LevelWatch.intervalRange.upperBound) ms (a node publishes at most 30 readings a second)")
        }
    }

    func run() throws {
        // From here on Ctrl-C ends the loop below, which releases the lease.
        let stop = MeterSignals.install()
        defer { MeterSignals.restore(stop) }
        let session = try connection.connect()
        var target = try session.target(node)
        var channels = try MeterChannels(session, target)
        let watcher = try LevelsWatcher(session.client, node: target.node.id, interval: interval)

        let terminal = Terminal(colour: color, width: nil)
        let live = !json && !once && isatty(STDOUT_FILENO) == 1
        let screen = MeterScreen(live: live)
        defer { screen.close() }
        var view = MeterView(node: target.node, interval: interval, unicode: MeterView.terminalSpeaksUTF8)
        var lastReading = ContinuousClock.now
        while !MeterSignals.stopped {
            guard let reading = try watcher.next(within: 0.25) else {
                if ContinuousClock.now - lastReading > .seconds(Session.firstReadingTimeout) {
                    throw CommandError.invalid(
                        "\(target.node.name) published no levels for \(Int(Session.firstReadingTimeout)) s (is its module older than levels?)")
                }
                continue
            }
            lastReading = .now
            if reading.inputs.count != channels.inputs.count || reading.outputs.count != channels.outputs.count {
                // The node was resized: read its channels again.
                try session.refresh()
                target = try session.target(String(target.node.id))
                channels = try MeterChannels(session, target)
            }
            if json {
                guard screen.write(MeterView.json(reading, channels) + "\n") else { break }
            } else {
                // Every reading counts for the peak hold and the clip marks; the newest is drawn.
                var newest = reading
                view.observe(reading, channels)
                while !once, let more = try watcher.next(within: 0), more.inputs.count == channels.inputs.count,
                      more.outputs.count == channels.outputs.count {
                    view.observe(more, channels)
                    newest = more
                }
                let size = screen.size
                let lines = view.frame(newest, channels, terminal: terminal, width: size?.columns ?? 100,
                                       height: live ? size?.rows : nil, hint: live ? "Ctrl-C quits" : nil)
                guard screen.show(lines) else { break }
            }
            if once { break }
        }
        screen.close()
        try watcher.release()
    }
}
