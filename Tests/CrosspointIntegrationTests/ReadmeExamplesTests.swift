import Foundation
import Testing

/// The README's command-line section is a real session: every `$ ...` line in it runs, in
/// order, against a daemon with the node it was made on (Fixtures/readme.conf) and the sinks
/// it names, and prints what the README shows below it (ids and link numbers aside).
struct ReadmeExamplesTests {
    struct Example {
        let command: String
        let output: [String]
    }

    /// The `$` lines of the section `## The `crosspoint` command` and the indented lines
    /// under each (a blank line belongs to the output when more of it follows).
    static func examples(in readme: String) -> [Example] {
        guard let start = readme.range(of: "## The `crosspoint` command") else { return [] }
        let rest = readme[start.upperBound...]
        let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        var examples: [Example] = []
        var command: String?
        var output: [String] = []
        var blanks = 0
        func finish() {
            if let command { examples.append(Example(command: command, output: output)) }
            command = nil
            output = []
            blanks = 0
        }
        for line in section.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("    $ ") {
                finish()
                command = String(line.dropFirst(6))
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                blanks += 1
            } else if line.hasPrefix("    "), command != nil {
                output += Array(repeating: "", count: output.isEmpty ? 0 : blanks) + [String(line.dropFirst(4))]
                blanks = 0
            } else {
                finish()
            }
        }
        finish()
        return examples
    }

    /// Output as compared: object ids, link numbers and the library's version stand out of it,
    /// and runs of spaces count as one (a column is as wide as its widest id).
    static func normalized(_ lines: [String]) -> [String] {
        lines.map { line in
            line.replacing(/\((node|link|id) \d+\)/) { "(\($0.1) #)" }
                .replacing(/"id": \d+/, with: "\"id\": #")
                .replacing(/^\d+\ /, with: "# ")
                .replacing(/libpipewire [0-9.]+/, with: "libpipewire #")
                .replacing(/\ +/, with: " ")
                .trimmingCharacters(in: .whitespaces)
        }
    }

    @Test func theCommandLineSectionRunsAsWritten() throws {
        let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let examples = Self.examples(in: readme)
        #expect(examples.count >= 20, "the section has its examples")
        let commands = Set(examples.compactMap { $0.command.split(separator: " ").dropFirst().first.map(String.init) })
        for command in ["list", "show", "set", "gain", "mute", "map", "matrix", "devices", "route", "unroute", "ramp", "resize",
                        "rename", "param", "save", "load"] {
            #expect(commands.contains(command) || examples.contains { $0.command.contains("crosspoint \(command) ") },
                    "the README shows `crosspoint \(command)`")
        }

        let sandbox = try Sandbox(dropIns: [repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures/readme.conf").path])
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("the README's node") { $0.nodeID("xp") != nil }
        #expect(sandbox.shell("pw_null_sink tv 'FL FR' && pw_null_sink interface 'FL FR RL RR'").succeeded)
        let directory = NSTemporaryDirectory() + "crosspoint-readme-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bin = URL(fileURLWithPath: crosspointExecutable).deletingLastPathComponent().path

        for example in examples {
            let result = sandbox.run(["bash", "-c", "set -o pipefail; cd '\(directory)' && PATH='\(bin)':\"$PATH\" && { \(example.command); } 2>&1"])
            let printed = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var lines = printed
            while lines.last?.isEmpty == true { lines.removeLast() }
            let failing = example.output.first?.hasPrefix("Error:") == true
            #expect(result.succeeded != failing, "`\(example.command)` exited \(result.status):\n\(result.stdout)")
            #expect(Self.normalized(lines) == Self.normalized(example.output),
                    "`\(example.command)` printed:\n\(lines.joined(separator: "\n"))\nthe README shows:\n\(example.output.joined(separator: "\n"))")
        }
    }

    /// Every other command block of the README (indented `crosspoint ...` lines outside the
    /// command-line section, which `theCommandLineSectionRunsAsWritten` runs) runs as written
    /// against the setup whose node it names (conf/, with the stand-in interface), in the
    /// README's order; `setup` lines in an empty home. Left to the tests that run them with
    /// what they need: lines with a placeholder (NODE), `serve` (the servers' suites),
    /// `midi learn` (MIDIControlTests, a control moved while it waits) and `net list
    /// --announced` (NetworkStreamTests, a sender on another machine announcing).
    @Test func everyCommandBlockRunsOnTheSetupItNames() throws {
        let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        var text = readme
        if let start = readme.range(of: "## The `crosspoint` command") {
            let rest = readme[start.upperBound...]
            let end = rest.range(of: "\n## ").map(\.lowerBound) ?? rest.endIndex
            text = String(readme[..<start.lowerBound]) + String(readme[end...])
        }
        // The setups' nodes: node.name -> the drop-in.
        let conf = repositoryRoot.appendingPathComponent("conf")
        var setups: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: conf.path) where file.hasSuffix(".conf") && !file.contains("standalone") {
            let body = try String(contentsOf: conf.appendingPathComponent(file), encoding: .utf8)
            if let match = body.firstMatch(of: /\n\s*node\.name\s*=\s*"([^"]+)"/) { setups[String(match.1)] = conf.appendingPathComponent(file).path }
        }
        var bySetup: [(node: String, commands: [String])] = [], homeless: [String] = [], left: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where line.hasPrefix("    crosspoint ") {
            // The command without its comment (two spaces or more, then #).
            let command = String(line.dropFirst(4)).replacing(/\s{2,}#.*$/, with: "").trimmingCharacters(in: .whitespaces)
            let words = command.split(separator: " ").map(String.init)
            if words.contains("NODE") || words[1] == "serve" || (words.count > 2 && words[1] == "midi" && words[2] == "learn")
                || words.contains("--announced") {
                left.append(command)
            } else if words[1] == "setup" {
                homeless.append(command)
            } else if let node = words.dropFirst(2).first(where: { setups[$0] != nil }) {
                if let k = bySetup.firstIndex(where: { $0.node == node }) { bySetup[k].commands.append(command) } else { bySetup.append((node, [command])) }
            } else {
                Issue.record("README: `\(command)` names no setup's node")
            }
        }
        print("README blocks: \(bySetup.map { "\($0.node): \($0.commands.count)" }.joined(separator: ", ")), setup: \(homeless.count), left to other tests: \(left)")
        #expect(bySetup.contains { $0.node == "desk" } && !homeless.isEmpty)
        let bin = URL(fileURLWithPath: crosspointExecutable).deletingLastPathComponent().path
        // The daemons on a machine of their own network: the README's network streams
        // (crosspoint net send) send nowhere but there.
        let lab = try NetworkLab(machines: 1)
        defer { lab.close() }
        for (node, commands) in bySetup {
            let sandbox = try Sandbox(dropIns: [repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures/interface.conf").path,
                                                setups[node]!], pulse: true, prefix: lab.machines[0].prefix)
            defer { sandbox.stop() }
            _ = try sandbox.waitFor("\(node)") { $0.nodeID(node) != nil }
            for command in commands {
                let result = sandbox.run(["bash", "-c", "PATH='\(bin)':\"$PATH\"; \(command)"])
                #expect(result.succeeded, "\(node): `\(command)`: \(result.stdout) \(result.stderr)")
            }
        }
        // The setup commands: the command built in this checkout finds conf/.
        let home = NSTemporaryDirectory() + "crosspoint-readme-home-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let checkout = repositoryRoot.appendingPathComponent(".build/release").path
        for command in homeless {
            let result = Sandbox.run(["bash", "-c", "PATH='\(checkout)':/usr/bin:/bin; \(command)"], environment: ["HOME": home])
            #expect(result.succeeded, "`\(command)`: \(result.stdout) \(result.stderr)")
        }
    }

}
