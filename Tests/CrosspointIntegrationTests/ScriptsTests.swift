import Foundation
import Testing

/// The scripts a user runs first: the install (and its undo) and the demo.
@Suite(.serialized)
struct ScriptsTests {
    @Test func installPutsEverythingWherePipeWireFindsItAndUninstallTakesItBack() throws {
        // scripts/install builds when nothing is built, which cannot happen under swift test.
        try #require(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first (scripts/test does)")
        let home = NSTemporaryDirectory() + "crosspoint-home-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["XDG_CONFIG_HOME"] = home + "/.config"
        let script = repositoryRoot.appendingPathComponent("scripts/install").path
        let installed = Sandbox.run(["bash", script, "--user"], environment: environment, timeout: 600)
        #expect(installed.succeeded, "\(installed.stderr)")
        let files = [
            home + "/.local/lib/pipewire-0.3/libpipewire-module-crosspoint.so",
            home + "/.local/bin/crosspoint",
            home + "/.config/systemd/user/pipewire.service.d/crosspoint.conf",
        ]
        for file in files { #expect(FileManager.default.fileExists(atPath: file), "\(file) is missing") }
        let service = (try? String(contentsOfFile: files[2], encoding: .utf8)) ?? ""
        #expect(service.contains("PIPEWIRE_MODULE_DIR=\(home)/.local/lib/pipewire-0.3:"))
        #expect(installed.stdout.contains("Undo with: scripts/install --uninstall --user"))
        // Installing enables nothing (as the package): no drop-in, and it says how to enable one.
        let dropIns = home + "/.config/pipewire/pipewire.conf.d"
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: dropIns)) ?? []).isEmpty, "a drop-in was installed")
        #expect(installed.stdout.contains("Nothing is enabled yet") && installed.stdout.contains("crosspoint setup enable crosspoint-desk"),
                "\(installed.stdout)")

        // The installed command finds the setups installed beside it (share/crosspoint/setups)
        // and enables one; the installed module loads it in a stock daemon pointed there.
        let bare = ["PATH": "/usr/bin:/bin", "HOME": home]
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/crosspoint/setups/crosspoint.conf"))
        let enabled = Sandbox.run([files[1], "setup", "enable", "crosspoint"], environment: bare)
        #expect(enabled.succeeded, "\(enabled.stdout) \(enabled.stderr)")
        let sandbox = try Sandbox(dropIns: [dropIns + "/crosspoint.conf"], moduleDirectory: home + "/.local/lib/pipewire-0.3")
        defer { sandbox.stop() }
        _ = try sandbox.waitFor("the installed node") { $0.nodeID("crosspoint") != nil }

        // Both are self-contained: no Swift runtime to find, no RUNPATH into a toolchain, and the
        // command runs with nothing but the system's libraries in reach.
        for binary in [files[0], files[1]] {
            let dynamic = Sandbox.run(["readelf", "-d", binary], environment: environment).stdout
            #expect(!dynamic.contains("swift") && !dynamic.contains("/opt"), "\(binary): \(dynamic)")
            let needs = Sandbox.run(["ldd", binary], environment: environment).stdout
            #expect(!needs.contains("libswift") && !needs.contains("not found") && !needs.contains("Foundation"), "\(binary): \(needs)")
        }
        let inDaemon = bare.merging(["XDG_RUNTIME_DIR": sandbox.environment["XDG_RUNTIME_DIR"] ?? ""]) { $1 }
        let listed = Sandbox.run([files[1], "list"], environment: inDaemon)
        #expect(listed.succeeded && listed.stdout.contains("crosspoint"), "the installed command, bare: \(listed.stdout) \(listed.stderr)")
        let setups = Sandbox.run([files[1], "setup", "list"], environment: bare)
        let line = setups.stdout.split(separator: "\n").first { $0.split(separator: " ").first == "crosspoint" }
        #expect(setups.succeeded && line?.contains("enabled") == true && !setups.stdout.contains("standalone"),
                "\(setups.stdout) \(setups.stderr)")

        // The uninstall leaves an enabled setup alone and says so; disabled, it is gone.
        let removed = Sandbox.run(["bash", script, "--uninstall", "--user"], environment: environment, timeout: 60)
        #expect(removed.succeeded, "\(removed.stderr)")
        #expect(removed.stdout.contains("still enabled") && FileManager.default.fileExists(atPath: dropIns + "/crosspoint.conf"), "\(removed.stdout)")
        for file in files { #expect(!FileManager.default.fileExists(atPath: file), "\(file) is still there") }
        #expect(!FileManager.default.fileExists(atPath: home + "/.local/share/crosspoint"), "the setups are still there")
        let wrong = Sandbox.run(["bash", script, "--everywhere"], environment: environment, timeout: 60)
        #expect(!wrong.succeeded && wrong.stderr.contains("unknown option '--everywhere'"))
    }

    @Test func theDemoPlaysThroughTheNodeAndMeasuresTheExpectedLevel() throws {
        var environment = ProcessInfo.processInfo.environment
        // No daemon of the caller's: the demo starts its own.
        environment["XDG_RUNTIME_DIR"] = NSTemporaryDirectory() + "crosspoint-no-daemon-\(getpid())"
        environment["PIPEWIRE_REMOTE"] = nil
        environment["CROSSPOINT_SKIP_BUILD"] = "1"  // swift test holds .build: the module is built already
        let demo = Sandbox.run(["bash", repositoryRoot.appendingPathComponent("scripts/demo").path],
                               environment: environment, timeout: 180)
        #expect(demo.succeeded, "\(demo.stdout)\n\(demo.stderr)")
        #expect(demo.stdout.contains("== Output level: measured RMS 0.2") && demo.stdout.contains("expected 0.2500"), "\(demo.stdout)")
        #expect(demo.stdout.contains("in_FL") && demo.stdout.contains("out_MONO"))
        #expect(demo.stdout.contains("pw-cli set-param"))
    }
}
