import ArgumentParser

/// `crosspoint manual`: the man page, made from the same help as `--help` (scripts/install
/// writes it to share/man/man1/crosspoint.1). Hidden from the list of commands.
struct ManualCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "manual",
        abstract: "Print the crosspoint(1) man page (roff), made from every command's help.",
        shouldDisplay: false)

    /// The commands the page describes, in the order the help lists them.
    static var commands: [any ParsableCommand.Type] {
        Crosspoint.configuration.subcommands.filter { $0.configuration.shouldDisplay }
    }

    func run() { print(Self.page(), terminator: "") }

    static func page() -> String {
        let root = Crosspoint.configuration
        var out = """
        .TH CROSSPOINT 1 "" "crosspoint \(crosspointVersion)" "User Commands"
        .SH NAME
        crosspoint \\- \(roff(root.abstract))
        .SH SYNOPSIS
        .B crosspoint
        .I command
        .RI [ options ]
        .I arguments
        .br
        .B crosspoint
        .RB [ \\-\\-help | \\-\\-version ]
        .SH DESCRIPTION

        """
        out += filled(root.discussion)
        out += ".SH COMMANDS\n"
        for command in commands {
            let name = command.configuration.commandName ?? "\(command)"
            out += ".SS crosspoint \(name)\n"
            out += block(Crosspoint.helpMessage(for: command, columns: 80))
        }
        out += """
        .SH ENVIRONMENT
        .TP
        .B PIPEWIRE_REMOTE
        The daemon to talk to when \\-\\-remote is not given (default pipewire\\-0).
        .TP
        .B NO_COLOR
        When set, show prints no colour even on a terminal.
        .SH SHELL COMPLETION
        .B crosspoint \\-\\-generate\\-completion\\-script bash|zsh|fish
        prints a completion script; it completes node, sink and channel names from the running
        daemon. scripts/install installs all three.
        .SH SEE ALSO
        .BR pw\\-cli (1),
        .BR pw\\-link (1),
        .BR pw\\-dump (1),
        .BR wpctl (1)

        """
        return out
    }

    /// Paragraphs filled by the pager; indented lines (formulas, examples) kept as they are.
    static func filled(_ text: String) -> String {
        var out = ""
        var literal = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let indented = line.hasPrefix("  ")
            if indented != literal { out += indented ? ".nf\n" : ".fi\n"; literal = indented }
            out += line.isEmpty ? ".PP\n" : roff(line) + "\n"
        }
        return out + (literal ? ".fi\n" : "")
    }

    /// Text kept as laid out (no filling), every line safe for roff.
    static func block(_ text: String) -> String {
        ".nf\n" + text.split(separator: "\n", omittingEmptySubsequences: false).map { roff(String($0)) }.joined(separator: "\n")
            + "\n.fi\n"
    }

    /// A line of text as roff prints it literally: backslashes and dashes escaped, a leading
    /// dot or quote protected.
    static func roff(_ line: String) -> String {
        var out = line.replacing("\\", with: "\\e").replacing("-", with: "\\-")
            .replacing("'", with: "\\(aq").replacing("`", with: "\\(ga")
        if out.hasPrefix(".") { out = "\\&" + out }
        return out
    }
}
