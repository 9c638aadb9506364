import ArgumentParser
import CrosspointControl
import CrosspointClient

/// `--remote`, shared by every command that talks to PipeWire.
struct Connection: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The PipeWire daemon to talk to: a socket name such as pipewire-0 (default: $PIPEWIRE_REMOTE, else pipewire-0).",
        valueName: "name"),
        completion: .custom { words, _, prefix in Completion.remotes(prefix: prefix) })
    var remote: String?

    func connect() throws -> Session { try Session(client: PipeWireClient(remote: remote)) }
}

/// `--json` and `-q/--quiet`, shared by the commands that change something.
struct ReportOptions: ParsableArguments {
    @Flag(help: "Print what changed as JSON (the same keys as presets and `show --json`).") var json = false
    @Flag(name: .shortAndLong, help: "Print nothing when it works (errors still go to standard error).") var quiet = false

    var reporter: Reporter { Reporter(json: json, quiet: quiet) }
}

/// `--color auto|always|never`.
extension Terminal.ColourChoice: ExpressibleByArgument {}
