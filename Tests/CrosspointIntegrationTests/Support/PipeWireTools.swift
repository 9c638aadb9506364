import Foundation
import Testing

/// One `pw-cli` process that takes commands while it runs (one process for many commands, not
/// one per command): started before the objects its commands name exist, it is connected by the
/// time they do, and a batch written then reaches the daemon within milliseconds.
/// `close()` (or deinit) quits it.
final class PwCli {
    private let fifo: String
    private let log: String
    private let input: FileHandle
    private let process: Background
    private var closed = false

    init(_ sandbox: Sandbox) throws {
        fifo = NSTemporaryDirectory() + "crosspoint-batch-\(getpid())-\(UInt32.random(in: 0..<UInt32.max))"
        log = fifo + ".log"
        guard mkfifo(fifo, 0o600) == 0 else { throw SandboxError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
        // Read-write: opening never blocks, and pw-cli sees the end of its input when this closes.
        input = FileHandle(fileDescriptor: open(fifo, O_RDWR), closeOnDealloc: true)
        do {
            process = try sandbox.start(["bash", "-c", "exec pw-cli <\"$0\" >\"$1\" 2>&1", fifo, log])
        } catch {
            unlink(fifo)
            throw error
        }
    }

    /// Writes the commands, one a line.
    func send(_ commands: [String]) {
        input.write(Data((commands.joined(separator: "\n") + "\n").utf8))
    }

    /// What it printed so far.
    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// The lines naming an error that it printed after the first `from` bytes.
    func errors(after from: Int) -> [Substring] {
        String(decoding: output.utf8.dropFirst(from), as: UTF8.self).split(separator: "\n").filter { $0.contains("Error") }
    }

    /// Quits it (pw-cli sees no end of input on a FIFO) and waits for it.
    func close() {
        guard !closed else { return }
        closed = true
        input.write(Data("quit\n".utf8))
        try? input.close()
        process.wait(timeout: 10)
        unlink(fifo)
        unlink(log)
    }

    deinit { close() }
}

/// The stock PipeWire tools, driven in batches: one process for many commands.
extension Sandbox {
    /// Runs `pw-cli` once with `commands` on its standard input (one process, not one per
    /// command), written once its registry lists every object in `known`, and ends it only once
    /// `done` holds on pw-dump. Both waits are needed:
    /// - pw-cli reads its input before its registry knows the objects, and a command on an
    ///   object it does not know yet fails with "unknown global". `list-objects` is how it is
    ///   asked (its `info` crashed 0.3.65's pw-cli on a linked null sink).
    /// - pw-cli quits the moment its input ends, while the daemon, which looks for a client's
    ///   hang-up before reading what the client sent, drops the commands not yet read
    ///   (PipeWire 1.4 loses the last few dozen of a batch of 1,000 that way).
    /// Expects no command to have failed.
    /// With `through`, the commands go to that pw-cli, which stays (a test's batches through one
    /// pw-cli skip a start and a wait for its registry each).
    func pwCliBatch(_ commands: [String], knowing known: [Int], until what: String, through shared: PwCli? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation, _ done: (Graph) -> Bool) throws {
        let own = shared == nil ? try PwCli(self) : nil
        defer { own?.close() }
        guard let cli = shared ?? own else { throw SandboxError("no pw-cli") }
        // `list-objects` prints a line "id 43, type PipeWire:Interface:Node/3" for each.
        func knowsAll() -> Bool {
            let listed = Set(cli.output.split(separator: "\n").compactMap { line -> Int? in
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                return words.count > 1 && words[0] == "id" ? Int(words[1].dropLast()) : nil
            })
            return listed.isSuperset(of: known)
        }
        if !known.isEmpty && !knowsAll() {
            _ = Wait.holds(within: 10) {
                cli.send(["list-objects"])
                usleep(50_000)
                return knowsAll()
            }
            #expect(knowsAll(), "pw-cli never listed all of \(known): \(cli.output.suffix(400))", sourceLocation: sourceLocation)
        }
        let start = cli.output.utf8.count
        cli.send(commands)
        do { _ = try waitFor(what, timeout: 30, done) } catch {
            throw SandboxError("\(error); pw-cli's output ends: \(cli.output.suffix(1500))")
        }
        let errors = cli.errors(after: start)
        #expect(errors.isEmpty, "pw-cli: \(errors.prefix(5))", sourceLocation: sourceLocation)
    }

    /// Links each output port to its input port (`node:port` each, by name, as pw-link takes
    /// them), all in one batch of `cli` (the link factory finds nodes and ports by name: pw-cli
    /// need not know them), and waits until every link exists. Lingering links, as pw-link
    /// makes them: they stay when pw-cli quits. Several pw-link processes, one a link, took
    /// 83 ms each on a 2-core VM and more than a test signal's lead-in for eight links on a
    /// loaded one; a batch takes milliseconds.
    func link(_ pairs: [(output: String, input: String)], through cli: PwCli, timeout: Double = 10) throws {
        guard !pairs.isEmpty else { return }
        var commands: [String] = []
        for pair in pairs {
            let out = pair.output.split(separator: ":", maxSplits: 1), inp = pair.input.split(separator: ":", maxSplits: 1)
            guard out.count == 2, inp.count == 2 else { throw SandboxError("link: '\(pair.output)' -> '\(pair.input)' is not node:port -> node:port") }
            commands.append("create-link \(out[0]) \(out[1]) \(inp[0]) \(inp[1]) { object.linger = true }")
        }
        let start = cli.output.utf8.count
        cli.send(commands)
        do {
            _ = try waitFor("\(pairs.count) link(s), \(pairs[0].output) -> \(pairs[0].input) first", timeout: timeout) { graph in
                let links = graph.portLinks()
                return pairs.allSatisfy { links.contains("\($0.output) -> \($0.input)") }
            }
        } catch {
            throw SandboxError("\(error); pw-cli: \(cli.errors(after: start).prefix(5))")
        }
    }
    /// The xruns PipeWire has counted in the graph so far: pw-top's ERR column (a driver's
    /// xruns, each follower's), summed over the nodes of its last refresh; nil where pw-top has
    /// no batch mode (PipeWire 0.3.65: `MissedCycles` reads pw-profiler there).
    fileprivate func graphErrors() -> Int? {
        guard PipeWire.atLeast(1, 0, 0) else { return nil }
        let top = run(["pw-top", "-b", "-n", "2"], timeout: 20)
        guard top.succeeded else { return nil }
        let lines = top.stdout.split(separator: "\n")
        guard let header = lines.lastIndex(where: { $0.hasPrefix("S ") && $0.contains(" ERR ") }) else { return nil }
        // S ID QUANT RATE WAIT BUSY W/Q B/Q ERR FORMAT NAME: ERR is the ninth field.
        return lines[(header + 1)...].reduce(0) { sum, line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return sum + (fields.count > 8 ? Int(fields[8]) ?? 0 : 0)
        }
    }
}

/// Counts the cycles in which the graph missed its deadline while it runs (from `init` to
/// `stop()`): a node still running when the driver started the next cycle, whose path may have
/// lost or repeated a block that a shorter path kept. A recording that compares two paths
/// sample for sample is judged only where none was missed: the count says whether the machine
/// or the product made a difference.
///
/// On PipeWire 1.x, the rise of pw-top's ERR column. On 0.3.65 (no batch mode in pw-top),
/// pw-profiler's log, read as scripts/bench-graph reads it: a cycle is missed when a follower
/// was reported before it finished (status 1 or 2) or the graph finished after the period.
final class MissedCycles {
    private let sandbox: Sandbox
    private let errorsBefore: Int?
    private var profiler: Background?
    private let folder: String
    private let log: String

    init(_ sandbox: Sandbox) throws {
        self.sandbox = sandbox
        folder = NSTemporaryDirectory() + "crosspoint-profiler-\(getpid())-\(UInt32.random(in: 0..<UInt32.max))"
        log = folder + "/profile.log"
        if PipeWire.atLeast(1, 0, 0) {
            errorsBefore = sandbox.graphErrors()
        } else {
            errorsBefore = nil
            // It says `logging follower ID ("NAME")` when a cycle's profile first names a node:
            // bound, and the graph's cycles reach it (line-buffered to see that now).
            // In a folder of its own: on its way out it writes gnuplot scripts and an HTML page
            // (Timing*.plot, Timings.html, generate_timings.sh) where it runs.
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            profiler = try sandbox.start(["bash", "-c", "cd \"$0\" && exec stdbuf -oL pw-profiler -o \"$1\"", folder, log],
                                         stdout: log + ".out")
            let out = log + ".out"
            try Wait.until("pw-profiler to log the graph's cycles", timeout: 10) {
                ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("logging follower")
            }
        }
    }

    /// The cycles missed since `init`; nil if it could not tell.
    func stop() -> Int? {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard let profiler else { return errorsBefore.flatMap { before in sandbox.graphErrors().map { $0 - before } } }
        profiler.stop()
        self.profiler = nil
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return nil }
        var cycles = 0, missed = 0
        for line in text.split(separator: "\n") {
            // Driver: signal - previous signal, finish - signal, delay, period (us); then 8 a
            // follower: id, signal, awake, finish, awake - signal, finish - awake, status, 0.
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count >= 4, let d1 = Int(columns[0]), let d2 = Int(columns[1]), let period = Int(columns[3]) else { continue }
            cycles += 1
            // pw-profiler writes both as 1.4 periods when either exceeds 1.3: a late start or end.
            let clamped = d1 == d2 && Double(d1) > 1.3 * Double(period)
            var late = !clamped && d2 > period
            for base in stride(from: 4, to: columns.count, by: 8) where base + 6 < columns.count {
                if let status = Int(columns[base + 6].trimmingCharacters(in: .whitespaces)), status == 1 || status == 2 { late = true }
            }
            if late { missed += 1 }
        }
        return cycles > 0 ? missed : nil
    }

    deinit {
        profiler?.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
