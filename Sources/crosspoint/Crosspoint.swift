import ArgumentParser
import CrosspointCore
import CrosspointClient

struct Crosspoint: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crosspoint",
        abstract: "Look at and change Crosspoint matrix mixer nodes in a running PipeWire.",
        discussion: """
        A Crosspoint node mixes N inputs into M outputs through a matrix of gains:
          out[j] = master * gain.out[j] * sum(gain.in[i] * matrix[i][j] * in[i])

        NODE is a node's name, description or id (see `crosspoint list`). Inputs and outputs \
        are numbered from 0 or named by channel (FL, FR, MONO, AUX3). \(ParameterHelp.gainSyntax) \
        Every command takes --remote to pick the daemon (default: $PIPEWIRE_REMOTE, else pipewire-0).

        Examples:
          crosspoint list
          crosspoint show crosspoint
          crosspoint set crosspoint FL MONO -6dB
          crosspoint route crosspoint --to alsa_output.usb-interface --offset 2
          crosspoint save crosspoint evening.json
        """,
        subcommands: [
            ListCommand.self, ShowCommand.self, SetCommand.self, GainCommand.self, MuteCommand.self, UnmuteCommand.self,
            MapCommand.self, MatrixCommand.self, RouteCommand.self, DevicesCommand.self, SaveCommand.self, LoadCommand.self,
            ParamsCommand.self, MeterCommand.self,
        ])
}

/// Help text made from the parameter table, so that `--help` and the README say the same.
enum ParameterHelp {
    static let gainSyntax =
        "GAIN is linear (0.5; 1 = unity; a negative gain flips polarity) or in decibels (-6dB, +3dB, -inf for silence)."

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
        """)

    @Flag(help: "Print the table as Markdown.") var markdown = false

    func run() {
        if markdown {
            print(Parameter.markdownTable())
            return
        }
        // The same table without Markdown: its cells, minus the header's separator row.
        let rows = Parameter.markdownTable().split(separator: "\n").enumerated().compactMap { n, line -> [String]? in
            guard n != 1 else { return nil }
            let cells = line.split(separator: "|").map { String($0).trimmingSpaces().filter { $0 != "`" } }
            return n == 0 ? cells.map { $0.uppercased() } : cells
        }
        printTable(rows, terminal: Terminal(colour: .auto, width: nil))
    }
}
