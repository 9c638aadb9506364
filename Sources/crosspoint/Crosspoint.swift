import ArgumentParser
import CrosspointControl
import CrosspointClient
import CrosspointCore
import Glibc

/// The version of this command (`CrosspointVersion`); `--version` adds the libpipewire it runs with.
let crosspointVersion = CrosspointVersion.string

struct Crosspoint: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crosspoint",
        abstract: "Look at and change Crosspoint matrix mixer nodes in a running PipeWire.",
        discussion: """
        A Crosspoint node mixes N inputs into M outputs through a matrix of gains:
          out[j] = master * gain.out[j] * sum(gain.in[i] * matrix[i][j] * in[i])

        NODE is a node's name, description or id (see `crosspoint list`). Inputs and outputs \
        are numbered from 0 or named by channel (FL, FR, MONO, AUX3). \(ParameterHelp.gainSyntax) \
        Every command takes --remote to pick the daemon (default: $PIPEWIRE_REMOTE, else pipewire-0); \
        the commands that change something take --json (a report of what changed) and -q. \
        Values that start with a dash (-6dB, -1,0) are values, not options; `--` ends the options.

        Exit status: 0 when it worked; 1 when the daemon or the node refused or something was \
        wrong with a value, a node or a file (nothing is changed then); 64 for a command line \
        that does not parse.

        Examples:
          crosspoint list
          crosspoint show crosspoint
          crosspoint set crosspoint FL MONO -6dB
          crosspoint gain crosspoint master 3dB-
          crosspoint route crosspoint --to alsa_output.usb-interface --offset 2 --replace
          crosspoint save crosspoint evening.json
        """,
        version: "crosspoint \(crosspointVersion) (libpipewire \(PipeWireClient.libraryVersion))",
        subcommands: [
            ListCommand.self, ShowCommand.self, SetCommand.self, GainCommand.self, MuteCommand.self, UnmuteCommand.self,
            MapCommand.self, MatrixCommand.self, RampCommand.self, ResizeCommand.self, RenameCommand.self, ParamCommand.self,
            RouteCommand.self, UnrouteCommand.self, DevicesCommand.self, SaveCommand.self, LoadCommand.self,
            ParamsCommand.self, MeterCommand.self, ServeCommand.self, SetupCommand.self, MIDICommand.self, VirtualCommand.self, NetCommand.self,
            FollowCommand.self, UnfollowCommand.self, DuckCommand.self, SceneCommand.self, DelayCommand.self, AppsCommand.self, MoveCommand.self, ManualCommand.self,
        ])

    /// Parses the arguments (with values that start with a dash taken as values), runs the
    /// command, and prints any error with every control character escaped.
    static func run(_ arguments: [String]) -> Never {
        do {
            var command = try parseAsRoot(CommandLineWords.prepare(NodeFirst.reorder(arguments)))
            try command.run()
            Glibc.exit(0)
        } catch {
            let code = exitCode(for: error)
            let message = CommandLineWords.restoreAll(fullMessage(for: error))
            if code == .success {
                if !message.isEmpty { print(message) }
            } else {
                printError(message.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).printable }
                    .joined(separator: "\n"))
            }
            Glibc.exit(code.rawValue)
        }
    }
}

/// Help text made from the parameter table, so that `--help` and the README say the same.
enum ParameterHelp {
    static let gainSyntax = """
        GAIN is in decibels (-6dB, +3dB, -inf for silence) or linear (0.5; 1 = unity; a negative \
        gain flips polarity). A bare number above 1 (6, -6) is refused, being most likely a level \
        missing its dB: write a linear gain above 1 as 2x, or give --linear. A step changes the \
        gain from where it is, in dB, sign last: 3dB+ louder, 3dB- quieter (at most +20 dB; a \
        silent gain has no level to step from).
        """

    /// One line per key family: `matrix.<in>.<out>`: summary; default; range.
    static func describe(_ patterns: String...) -> String {
        patterns.compactMap { pattern in
            guard let f = Parameter.families.first(where: { $0.pattern == pattern }) else { return nil }
            let range = "\(Gain.format(f.range.lowerBound)) to \(Gain.format(f.range.upperBound))"
            return switch f.type {
            case .float: "\(f.pattern): \(f.summary); default \(Gain.format(f.defaultValue)), range \(range)."
            case .bool: "\(f.pattern): \(f.summary); default \(f.defaultValue == 0 ? "false" : "true")."
            default: "\(f.pattern): \(f.summary)."
            }
        }.joined(separator: "\n")
    }
}

struct ParamsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "params",
        abstract: "Print the table of node parameters (the keys pw-cli set-param and this command set).",
        discussion: """
        Examples:
          crosspoint params
          crosspoint params --markdown     (the table in the README)
          crosspoint params --json
        """)

    @Flag(help: "Print the table as Markdown.") var markdown = false
    @Flag(help: "Print the table as JSON: a list of { key, type, default, range, meaning }.") var json = false

    /// `--json`'s row: the table's cells, as words without Markdown's code marks (`GET
    /// /api/params` gives the surface numbers).
    struct Row: Encodable {
        let key: String
        let type: String
        let `default`: String
        let range: String
        let meaning: String

        init(_ row: Parameter.TableRow) {
            func plain(_ text: String) -> String { text.filter { $0 != "`" } }
            (key, type, `default`, range, meaning) = (plain(row.key), plain(row.type), plain(row.default), plain(row.range), plain(row.meaning))
        }

        var cells: [String] { [key, type, `default`, range, meaning] }
    }

    func run() throws {
        let rows = Parameter.tableRows.map(Row.init)
        if json {
            print(try JSONText.encode(rows), terminator: "")
            return
        }
        if markdown {
            print(Parameter.markdownTable())
            return
        }
        // The same table without Markdown.
        printTable([["KEY", "TYPE", "DEFAULT", "RANGE", "MEANING"]] + rows.map(\.cells), terminal: Terminal(colour: .auto, width: nil))
    }
}
