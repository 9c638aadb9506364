import Foundation
import Testing

/// `crosspoint setup list|enable|disable` on real folders: the shipped drop-ins (conf/, as
/// scripts/package ships them) copied into a user's pipewire.conf.d, a copy nobody changed
/// told from an edited one by the checksum POSIX `cksum` computes, an edited or foreign file
/// never overwritten nor removed, and the enabled copy loaded by a real daemon.
/// (`--system` and the package's purge of such copies: scripts/test-package, in a Debian root.)
@Suite(.serialized)
struct SetupCommandTests {
    /// A temporary home with a setups folder holding the repository's drop-ins.
    final class Home {
        let path = NSTemporaryDirectory() + "crosspoint-setup-\(getpid())-\(UUID().uuidString.prefix(8))"
        var setups: String { path + "/setups" }
        var dropIns: String { path + "/config/pipewire/pipewire.conf.d" }
        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["HOME"] = path
            environment["XDG_CONFIG_HOME"] = path + "/config"
            environment["CROSSPOINT_SETUP_DIR"] = setups
            return environment
        }

        init() throws {
            try FileManager.default.createDirectory(atPath: setups, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: repositoryRoot.appendingPathComponent("conf/crosspoint.conf").path,
                                             toPath: setups + "/crosspoint.conf")
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        func crosspoint(_ arguments: String...) -> CommandResult {
            Sandbox.run([crosspointExecutable] + arguments, environment: environment)
        }

        func read(_ file: String) -> String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
    }

    @Test func enableCopiesTheShippedDropInWithAChecksumCksumAgreesWith() throws {
        let home = try Home()
        let listed = home.crosspoint("setup", "list")
        #expect(listed.succeeded, "\(listed.stderr)")
        #expect(listed.stdout.contains("crosspoint  not enabled  one node mixing stereo to mono"), "\(listed.stdout)")

        let enabled = home.crosspoint("setup", "enable", "crosspoint")
        #expect(enabled.succeeded, "\(enabled.stderr)")
        let file = home.dropIns + "/crosspoint.conf"
        #expect(enabled.stdout.contains("enabled crosspoint: \(file)"))
        #expect(enabled.stdout.contains("systemctl --user restart pipewire"))
        let copy = home.read(file)
        let shipped = home.read(home.setups + "/crosspoint.conf")
        let lines = copy.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        #expect(lines.count == 2 && String(lines[1]) == shipped, "the copy is the marker line and the shipped file")
        // The marker's numbers are what cksum prints for the rest of the file.
        let cksum = Sandbox.run(["bash", "-c", "tail -n +2 \"$0\" | cksum", file], environment: home.environment)
        let numbers = cksum.stdout.split(separator: " ").map(String.init)
        #expect(numbers.count == 2 && lines[0].hasPrefix("# crosspoint setup crosspoint (cksum \(numbers[0]) \(numbers[1].trimmingCharacters(in: .whitespacesAndNewlines))):"),
                "\(lines[0]) vs cksum \(cksum.stdout)")

        let again = home.crosspoint("setup", "enable", "crosspoint", "--json")
        #expect(again.succeeded && again.stdout.contains("\"action\": \"unchanged\""), "\(again.stdout) \(again.stderr)")
        let json = home.crosspoint("setup", "list", "--json")
        #expect(json.stdout.contains("\"state\": \"enabled\""), "\(json.stdout)")

        // A newer shipped version: an unchanged copy is "older", and enable updates it.
        try (shipped + "# a line added by a newer version\n").write(toFile: home.setups + "/crosspoint.conf", atomically: true, encoding: .utf8)
        #expect(home.crosspoint("setup", "list").stdout.contains("enabled, older"))
        let updated = home.crosspoint("setup", "enable", "crosspoint")
        #expect(updated.succeeded && updated.stdout.contains("updated \(file)"), "\(updated.stdout) \(updated.stderr)")
        #expect(home.read(file).hasSuffix("# a line added by a newer version\n"))

        let disabled = home.crosspoint("setup", "disable", "crosspoint")
        #expect(disabled.succeeded && disabled.stdout.contains("removed \(file)"), "\(disabled.stdout) \(disabled.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file))
        let absent = home.crosspoint("setup", "disable", "crosspoint")
        #expect(absent.succeeded && absent.stdout.contains("crosspoint is not enabled"), "\(absent.stdout)")
    }

    @Test func anEditedOrForeignFileIsNeverOverwrittenNorRemoved() throws {
        let home = try Home()
        #expect(home.crosspoint("setup", "enable", "crosspoint").succeeded)
        let file = home.dropIns + "/crosspoint.conf"
        let edited = home.read(file).replacingOccurrences(of: "matrix           = [ [ 0.5 ] [ 0.5 ] ]", with: "matrix = [ [ 1 ] [ 0 ] ]")
        #expect(edited != home.read(file), "the edit changes the file")
        try edited.write(toFile: file, atomically: true, encoding: .utf8)

        #expect(home.crosspoint("setup", "list").stdout.contains("enabled, edited"))
        let enable = home.crosspoint("setup", "enable", "crosspoint")
        #expect(enable.status == 1 && enable.stderr.contains("\(file): edited since `crosspoint setup enable` wrote it"), "\(enable.stderr)")
        let disable = home.crosspoint("setup", "disable", "crosspoint")
        #expect(disable.status == 1 && disable.stderr.contains("it is yours, not removing it"), "\(disable.stderr)")
        #expect(home.read(file) == edited, "the edited file is untouched")

        // A file of the same name that enable did not write (scripts/install's, say).
        let foreign = "# my own\n" + home.read(home.setups + "/crosspoint.conf")
        try foreign.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(home.crosspoint("setup", "list").stdout.contains("a file of yours"))
        let over = home.crosspoint("setup", "enable", "crosspoint")
        #expect(over.status == 1 && over.stderr.contains("was not written by `crosspoint setup enable`: not overwriting it"), "\(over.stderr)")
        #expect(home.crosspoint("setup", "disable", "crosspoint").status == 1)
        #expect(home.read(file) == foreign)
    }

    @Test func unknownAndMalformedNamesAreRefusedAndWriteNothing() throws {
        let home = try Home()
        let unknown = home.crosspoint("setup", "enable", "studio")
        #expect(unknown.status == 1 && unknown.stderr.contains("unknown setup 'studio'; the setups are: crosspoint"), "\(unknown.stderr)")
        for name in ["../../etc/passwd", ".hidden", "a/b", ""] {
            let bad = home.crosspoint("setup", "enable", name)
            #expect(bad.status == 1, "'\(name)': \(bad.stdout) \(bad.stderr)")
            let badDisable = home.crosspoint("setup", "disable", name)
            #expect(badDisable.status == 1 && badDisable.stderr.contains("is not a setup's name"), "'\(name)': \(badDisable.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.dropIns), "nothing was written")
        var noSetups = home.environment
        noSetups["CROSSPOINT_SETUP_DIR"] = home.path + "/nowhere"
        let none = Sandbox.run([crosspointExecutable, "setup", "list"], environment: noSetups)
        #expect(none.status == 1 && none.stderr.contains("no setups folder: $CROSSPOINT_SETUP_DIR is \(home.path)/nowhere, which is not a folder"),
                "\(none.stderr)")
        // Without it, a command built in a checkout finds the checkout's conf/ (not the
        // standalone configuration, which is no drop-in).
        noSetups["CROSSPOINT_SETUP_DIR"] = nil
        let checkout = Sandbox.run([repositoryRoot.appendingPathComponent(".build/release/crosspoint").path, "setup", "list", "--json"],
                                   environment: noSetups)
        #expect(checkout.succeeded && checkout.stdout.contains("\"crosspoint-desk\"") && !checkout.stdout.contains("standalone"),
                "\(checkout.stdout) \(checkout.stderr)")
        #expect(Sandbox.run([repositoryRoot.appendingPathComponent(".build/release/crosspoint").path, "setup", "enable", "crosspoint-standalone"],
                            environment: noSetups).status == 1)
    }

    @Test func theEnabledCopyIsWhatADaemonLoads() throws {
        let home = try Home()
        #expect(home.crosspoint("setup", "enable", "crosspoint").succeeded)
        let sandbox = try Sandbox(dropIns: [home.dropIns + "/crosspoint.conf"])
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("the node of the enabled setup") { $0.nodeID("crosspoint") != nil }
        // The node is the setup's: stereo to mono through [ [ 0.5 ] [ 0.5 ] ].
        let shown = sandbox.crosspoint("show", "crosspoint", "--json")
        let node = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        let matrix = (node?["matrix"] as? [[NSNumber]])?.map { $0.map(\.doubleValue) }
        #expect(shown.succeeded && matrix == [[0.5], [0.5]], "\(shown.stdout) \(shown.stderr)")
        #expect(node?["input.position"] as? [String] == ["FL", "FR"] && node?["output.position"] as? [String] == ["MONO"])
    }
}
