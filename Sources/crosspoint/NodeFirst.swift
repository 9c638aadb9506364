import ArgumentParser

/// `crosspoint scene desk store show` as well as `crosspoint scene store desk show` (and `duck`
/// alike): the commands whose subcommands all take the node first also take it before the
/// subcommand, as a console's "scene on desk" reads. Only when the word after the command is
/// not one of its subcommands and the next one is: a node may be called `list`.
enum NodeFirst {
    static let commands: [String: [String]] = [
        "scene": names(of: SceneCommand.configuration.subcommands),
        "duck": names(of: DuckCommand.configuration.subcommands),
    ]

    private static func names(of commands: [ParsableCommand.Type]) -> [String] {
        commands.compactMap { $0.configuration.commandName }
    }

    /// The arguments with a node given before the subcommand moved after it.
    static func reorder(_ arguments: [String]) -> [String] {
        guard arguments.count >= 3, let subcommands = commands[arguments[0]],
              !subcommands.contains(arguments[1]), !arguments[1].hasPrefix("-"), subcommands.contains(arguments[2]) else { return arguments }
        var reordered = arguments
        reordered.swapAt(1, 2)
        return reordered
    }
}
