import Foundation
import Testing

/// The repository's root: from this file's path, which scripts/build's `-file-prefix-map` makes
/// relative to the checkout (`./Tests/...`, resolved against the working directory, where
/// `swift test` runs), else above the test bundle (`.build/<triple>/release/X.xctest`).
let repositoryRoot: URL = {
    let fromSource = URL(fileURLWithPath: #filePath).standardizedFileURL
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    var candidates = [fromSource]
    var above = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    for _ in 0..<5 { above = above.deletingLastPathComponent(); candidates.append(above) }
    return candidates.first {
        FileManager.default.fileExists(atPath: $0.appendingPathComponent("scripts/sandbox").path)
    } ?? fromSource
}()

/// The module `scripts/build` links.
let modulePath = repositoryRoot.appendingPathComponent(".build/release/libpipewire-module-crosspoint.so").path

/// The output of a finished command.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
    var succeeded: Bool { status == 0 }
}

/// A private PipeWire daemon and WirePlumber started by `scripts/sandbox`, with the real
/// module loaded through drop-ins. Stopped (every process it started) by `stop()`.
final class Sandbox: @unchecked Sendable {
    let directory: String
    let environment: [String: String]
    /// What the daemon was started under (`nsenter` into a `NetworkLab` machine): a restart
    /// starts it there again.
    let prefix: [String]
    private var stopped = false
    /// Shared by the tests of a suite (`Sandbox.shared`): `stop()` leaves it running; the test
    /// process stops it when it exits.
    fileprivate(set) var isShared = false

    /// Starts a daemon with the given drop-ins (paths) installed; with `pulse`, pipewire-pulse
    /// too (what pactl, paplay and the desktop's sound settings reach PipeWire through);
    /// `prefix` starts it elsewhere (`nsenter -t PID -n`: on a machine of a `NetworkLab`; the
    /// tools reach it through its socket all the same).
    init(dropIns: [String], moduleDirectory: String = (modulePath as NSString).deletingLastPathComponent,
         pulse: Bool = false, prefix: [String] = []) throws {
        guard FileManager.default.fileExists(atPath: modulePath) else {
            throw SandboxError("the module is not built; run scripts/build (scripts/test does) to make \(modulePath)")
        }
        var env = ProcessInfo.processInfo.environment
        env["CROSSPOINT_DROPINS"] = dropIns.joined(separator: ":")
        env["CROSSPOINT_MODULE_DIR"] = moduleDirectory
        env["CROSSPOINT_PULSE"] = pulse ? "1" : nil
        self.prefix = prefix
        let result = Sandbox.run(prefix + ["bash", repositoryRoot.appendingPathComponent("scripts/sandbox").path, "start"], environment: env)
        guard result.succeeded else { throw SandboxError("scripts/sandbox start failed:\n\(result.stderr)") }
        directory = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var merged = ProcessInfo.processInfo.environment
        for key in ["PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_CONFIG_DIR"] { merged[key] = nil }
        let envFile = try String(contentsOfFile: directory + "/env", encoding: .utf8)
        for line in envFile.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let eq = assignment.firstIndex(of: "=") else { continue }
            var value = String(assignment[assignment.index(after: eq)...])
            if value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            if value.hasPrefix("'"), value.hasSuffix("'") { value = String(value.dropFirst().dropLast()) }
            merged[String(assignment[..<eq])] = value
        }
        environment = merged
    }

    /// A daemon with the shipped drop-in (node "crosspoint", stereo to mono) and the test
    /// nodes of Fixtures/nodes.conf, once they all exist.
    static func withTestNodes() throws -> Sandbox {
        let sandbox = try Sandbox(dropIns: [
            repositoryRoot.appendingPathComponent("conf/crosspoint.conf").path,
            repositoryRoot.appendingPathComponent("Tests/CrosspointIntegrationTests/Fixtures/nodes.conf").path,
        ])
        _ = try sandbox.waitFor("the test nodes") { graph in
            ["crosspoint", "xp-mono-stereo", "xp-swap", "xp-pair34", "xp-4x3", "xp-params", "xp-duck"].allSatisfy { graph.nodeID($0) != nil }
        }
        return sandbox
    }

    func stop() {
        guard !stopped, !isShared else { return }
        stopped = true
        _ = Sandbox.run(["bash", repositoryRoot.appendingPathComponent("scripts/sandbox").path, "stop", directory],
                        environment: ProcessInfo.processInfo.environment)
    }

    deinit { stop() }

    /// The daemon for `key`, started by the first test that asks (with `make`) and shared by the
    /// tests that ask after it, for suites whose tests touch only their own nodes and links:
    /// a daemon start and stop costs about 0.7 s on two cores, about 10% of a run of the
    /// integration suites when every test had its own. One whose daemon died (a test that
    /// failed badly) is replaced. Stopped when the test process exits.
    static func shared(_ key: String, make: () throws -> Sandbox) throws -> Sandbox {
        try SharedSandboxes.sandbox(key, make: make)
    }

    /// Whether its daemons (dbus, pipewire, WirePlumber, ...) are all still running.
    var isAlive: Bool {
        guard !stopped, let pids = try? String(contentsOfFile: directory + "/pids", encoding: .utf8) else { return false }
        let recorded = pids.split(separator: "\n").compactMap { pid_t($0) }
        return !recorded.isEmpty && recorded.allSatisfy { kill($0, 0) == 0 }
    }

    /// The running process of this sandbox (not another's: tests of other runs may run beside)
    /// whose name (/proc/PID/comm) is `name`: "pipewire", "wireplumber", ...
    func pid(of name: String) -> pid_t? {
        guard let pids = try? String(contentsOfFile: directory + "/pids", encoding: .utf8) else { return nil }
        return pids.split(separator: "\n").compactMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }.first { pid in
            kill(pid, 0) == 0
                && (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }

    fileprivate func stopShared() {
        isShared = false
        stop()
    }

    /// Restarts pipewire and WirePlumber in the same directory (same config and state).
    func restartDaemon() throws {
        // On the same machine of its network as before (without the prefix, a NetworkLab
        // sender restarted in the test's own namespace: its announcements and stream went
        // nowhere near the receiver).
        let result = Sandbox.run(
            prefix + ["bash", repositoryRoot.appendingPathComponent("scripts/sandbox").path, "restart-daemon", directory],
            environment: ProcessInfo.processInfo.environment)
        guard result.succeeded else { throw SandboxError("restart-daemon failed:\n\(result.stderr)") }
    }

    /// The daemon's log so far.
    var daemonLog: String {
        (try? String(contentsOfFile: directory + "/logs/pipewire.log", encoding: .utf8)) ?? ""
    }

    /// Runs a command against this daemon and waits for it.
    @discardableResult
    func run(_ arguments: [String], timeout: Double = 20) -> CommandResult {
        Sandbox.run(arguments, environment: environment, timeout: timeout)
    }

    /// Runs a shell snippet with the sandbox's environment and `pw-helpers.sh` sourced.
    @discardableResult
    func shell(_ script: String, timeout: Double = 30) -> CommandResult {
        let helpers = repositoryRoot.appendingPathComponent("scripts/lib/pw-helpers.sh").path
        return run(["bash", "-c", "set -euo pipefail; source '\(helpers)'; \(script)"], timeout: timeout)
    }

    /// Starts a command in the background; `Background.stop()` ends it with SIGINT. Players and
    /// recorders (`Sandbox.audioTools`, unless `realtime` says otherwise) run real-time, at
    /// `Child.realtimePriority` where this process may grant it (see there).
    func start(_ arguments: [String], stdout: String = "/dev/null", stderr: String = "/dev/null", realtime: Bool? = nil) throws -> Background {
        let realtime = realtime ?? arguments.first.map(Sandbox.audioTools.contains) ?? false
        return try Background(arguments, environment: environment, stdout: stdout, stderr: stderr, realtime: realtime)
    }

    /// The tools that play and record the audio tests measure.
    static let audioTools: Set<String> = ["pw-cat", "pw-play", "pw-record", "paplay", "parecord"]

    /// A folder for the audio files players read and recorders write: in memory (/dev/shm)
    /// where there is one. pw-cat and pw-record read and write them on their main thread, once
    /// a quantum; on disk, a write held up by another process's writeback (CI builds Debian
    /// roots and packages beside the suites) is a lost cycle in the recording.
    static let audioFolder: String = {
        let shm = "/dev/shm/"
        return access(shm, W_OK) == 0 ? shm : NSTemporaryDirectory()
    }()

    static func run(_ arguments: [String], environment: [String: String], timeout: Double = 30) -> CommandResult {
        // Output goes to files, not pipes: daemons a command starts may keep a pipe open forever.
        let base = NSTemporaryDirectory() + "crosspoint-cmd-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".err")
        }
        guard let child = try? Child(arguments, environment: environment, stdout: base + ".out", stderr: base + ".err") else {
            return CommandResult(status: -1, stdout: "", stderr: "cannot run \(arguments)")
        }
        let status = child.wait(timeout: timeout)
        let stdout = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return CommandResult(status: status, stdout: stdout, stderr: stderr)
    }
}

/// The daemons `Sandbox.shared` started, by key; stopped at the test process's exit.
private enum SharedSandboxes {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var started: [String: Sandbox] = [:]

    static func sandbox(_ key: String, make: () throws -> Sandbox) throws -> Sandbox {
        lock.lock()
        defer { lock.unlock() }
        if let sandbox = started[key] {
            if sandbox.isAlive { return sandbox }
            sandbox.stopShared()
            started[key] = nil
        }
        let sandbox = try make()
        sandbox.isShared = true
        if started.isEmpty { atexit { SharedSandboxes.stopAll() } }
        started[key] = sandbox
        return sandbox
    }

    static func stopAll() {
        lock.lock()
        defer { lock.unlock() }
        for sandbox in started.values { sandbox.stopShared() }
        started = [:]
    }
}

/// A child process started with posix_spawn and reaped with waitpid (Foundation's Process
/// does not always notice a child's exit on Linux).
final class Child {
    let pid: pid_t
    private var status: Int32?

    /// The SCHED_FIFO priority of measuring clients (`realtime`): below the daemons' data
    /// threads (88, module-rt's default), above every ordinary process. pw-cat and pw-record
    /// fill and drain their buffers on their main thread (their streams are not RT_PROCESS,
    /// 0.3.65 and 1.4.2 alike), an ordinary thread: with the daemon's, WirePlumber's, a
    /// pw-cli storm's and the test's own main threads runnable on two cores, it can wait longer
    /// than a quantum, and the player then skips a cycle of its own signal (seen in CI: a
    /// LiveChangeTests recording off by the whole signal on the reference path too).
    static let realtimePriority: Int32 = 40

    init(_ arguments: [String], environment: [String: String], stdout: String = "/dev/null", stderr: String = "/dev/null",
         realtime: Bool = false) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = (["/usr/bin/env"] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        // The test runner's threads block most signals, and a child inherits that mask: it
        // would ignore the SIGTERM that stops it (dbus-daemon, wireplumber). Start it unblocked.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK)
        if realtime {
            var parameters = sched_param()
            parameters.sched_priority = Child.realtimePriority
            posix_spawnattr_setschedpolicy(&attributes, SCHED_FIFO)
            posix_spawnattr_setschedparam(&attributes, &parameters)
            flags |= Int32(POSIX_SPAWN_SETSCHEDULER)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var pid: pid_t = 0
        var result = posix_spawn(&pid, "/usr/bin/env", &actions, &attributes, argv, envp)
        if realtime && result == EPERM {
            // Not allowed real-time (an ordinary user without an rtprio limit): as any process.
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
            result = posix_spawn(&pid, "/usr/bin/env", &actions, &attributes, argv, envp)
        }
        guard result == 0 else { throw SandboxError("cannot start \(arguments): \(String(cString: strerror(result)))") }
        self.pid = pid
    }

    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid {
            status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            return false
        }
        return true
    }

    /// Waits for the exit status; past `timeout`, SIGTERM then SIGKILL.
    @discardableResult
    func wait(timeout: Double) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning && Date() < deadline { usleep(10_000) }
        if isRunning { kill(pid, SIGTERM); usleep(300_000) }
        if isRunning { kill(pid, SIGKILL) }
        while isRunning { usleep(10_000) }
        return status ?? -1
    }

    func signal(_ signal: Int32) { if isRunning { kill(pid, signal) } }
}

/// A command running in the background.
final class Background {
    private let child: Child

    init(_ arguments: [String], environment: [String: String], stdout: String = "/dev/null", stderr: String = "/dev/null",
         realtime: Bool = false) throws {
        child = try Child(arguments, environment: environment, stdout: stdout, stderr: stderr, realtime: realtime)
    }

    var isRunning: Bool { child.isRunning }
    var pid: pid_t { child.pid }

    /// Ends it with SIGINT (pw-record then finishes its file) and waits.
    func stop() {
        child.signal(SIGINT)
        child.wait(timeout: 5)
    }

    /// Waits for it to end by itself, then stops it.
    func wait(timeout: Double = 30) {
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning && Date() < deadline { usleep(20_000) }
        stop()
    }

    deinit { stop() }
}

struct SandboxError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
