import CrosspointClient
import CrosspointCore
import Glibc

/// Candidates for shell completion (bash, zsh, fish: `crosspoint --generate-completion-script
/// SHELL`), read from the running daemon: node names, their channel names, sinks, keys. Any
/// failure (no daemon, no such node) completes nothing rather than printing an error.
package enum Completion {
    /// Options whose value is the next word (not a positional argument).
    package static let optionsWithValues: Set<String> = ["--remote", "--to", "--channels", "--offset", "--from", "--color", "--width",
                                                 "--inputs", "--outputs", "--position", "--description"]
    package static let commands: Set<String> = ["list", "show", "set", "gain", "mute", "unmute", "map", "matrix", "ramp", "resize",
                                        "rename", "param", "route", "unroute", "devices", "save", "load", "params", "meter", "serve",
                                        "follow", "unfollow", "delay"]

    /// The positional words after the subcommand (options and their values left out), and
    /// the `--remote`/`--to` values, up to (not including) the word being completed.
    package static func parse(_ words: [String], before index: Int? = nil) -> (positionals: [String], remote: String?, to: String?) {
        let end = min(index ?? words.count, words.count)
        var positionals: [String] = []
        var remote: String?, to: String?
        var k = (words.firstIndex { commands.contains($0) } ?? 0) + 1
        while k < end {
            let word = words[k]
            if word.hasPrefix("--"), let eq = word.firstIndex(of: "=") {
                let name = String(word[..<eq]), value = String(word[word.index(after: eq)...])
                if name == "--remote" { remote = value }
                if name == "--to" { to = value }
            } else if optionsWithValues.contains(word) {
                if k + 1 < end {
                    if word == "--remote" { remote = words[k + 1] }
                    if word == "--to" { to = words[k + 1] }
                }
                k += 1
            } else if !word.hasPrefix("-") || CommandLineWords.isNegativeValue(word) {
                positionals.append(unquote(word))
            }
            k += 1
        }
        return (positionals, remote, to)
    }

    /// Shell words arrive as typed: `'my node'` or `my\ node`.
    package static func unquote(_ word: String) -> String {
        var out = ""
        var quote: Character?
        var escaped = false
        for c in word {
            if escaped { out.append(c); escaped = false; continue }
            if c == "\\" && quote != "'" { escaped = true; continue }
            if let q = quote { if c == q { quote = nil } else { out.append(c) }; continue }
            if c == "'" || c == "\"" { quote = c; continue }
            out.append(c)
        }
        return out
    }

    private static func session(_ remote: String?) -> Session? {
        guard let client = try? PipeWireClient(remote: remote) else { return nil }
        client.timeout = 2
        return try? Session(client: client)
    }

    private static func matching(_ candidates: [String], _ prefix: String) -> [String] {
        var seen = Set<String>()
        return candidates.filter { $0.hasPrefix(prefix) && seen.insert($0).inserted }
    }

    /// Crosspoint node names.
    package static func nodes(_ words: [String], prefix: String) -> [String] {
        guard let session = session(parse(words).remote) else { return [] }
        return matching(session.crosspointNodes.map(\.name), prefix)
    }

    /// The sinks' names.
    package static func sinks(_ words: [String], prefix: String) -> [String] {
        guard let session = session(parse(words).remote) else { return [] }
        return matching(session.graph.nodes.filter(\.isSink).map(\.name), prefix)
    }

    /// The channel names of the sink named by --to, for --channels (a comma list: completes its last item).
    package static func sinkChannels(_ words: [String], prefix: String) -> [String] {
        let parsed = parse(words)
        guard let to = parsed.to, let session = session(parsed.remote), let sink = try? session.sink(to) else { return [] }
        let head = prefix.contains(",") ? String(prefix[...prefix.lastIndex(of: ",")!]) : ""
        let channels = session.graph.ports(of: sink.id, .input).compactMap(\.channel)
        return matching(channels.map { head + $0 }, prefix)
    }

    /// The node's mixer (the first positional word names it).
    private static func mixer(_ words: [String]) -> (Session, Target, Mixer)? {
        let parsed = parse(words)
        guard let name = parsed.positionals.first, let session = session(parsed.remote),
              let target = try? session.target(name), let mixer = try? session.mixer(of: target) else { return nil }
        return (session, target, mixer)
    }

    /// The node's input or output channel names.
    package static func channels(_ words: [String], _ direction: GraphPort.Direction, prefix: String) -> [String] {
        guard let (_, _, mixer) = mixer(words) else { return [] }
        return matching(direction == .input ? mixer.inputChannels : mixer.outputChannels, prefix)
    }

    /// `master`, `in`, `out`, then the channel names of the side chosen (gain, mute, unmute).
    package static func strip(_ words: [String], prefix: String) -> [String] {
        let before = parse(words, before: words.count - 1).positionals
        if before.count <= 1 { return matching(["master", "in", "out"], prefix) }
        switch before.last?.lowercased() {
        case "in", "input": return channels(words, .input, prefix: prefix)
        case "out", "output": return channels(words, .output, prefix: prefix)
        default: return []
        }
    }

    /// `param`: keys (with channel names) in even places, value hints in odd ones.
    package static func params(_ words: [String], index: Int, prefix: String) -> [String] {
        let before = parse(words, before: index).positionals
        let place = before.count - 1  // words after the node
        guard place >= 0, let (_, _, mixer) = mixer(words) else { return [] }
        if place % 2 == 1 {
            guard let key = before.last, let p = try? Parameter(key: key, in: mixer) else { return [] }
            return p.kind.family.type == .bool ? matching(["true", "false"], prefix) : []
        }
        return matching(Parameter.all(for: mixer).map { $0.name(in: mixer) }, prefix)
    }

    /// PipeWire sockets in the runtime directory: pipewire-0, pipewire-0-manager.
    package static func remotes(prefix: String) -> [String] {
        let directory = getenv("PIPEWIRE_RUNTIME_DIR").map { String(cString: $0) }
            ?? getenv("XDG_RUNTIME_DIR").map { String(cString: $0) } ?? "/run/user/\(getuid())"
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("pipewire-") && !name.hasSuffix(".lock") { names.append(name) }
        }
        return matching(names.sorted(), prefix)
    }
}
