import Foundation
import Testing

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
    func pwCliBatch(_ commands: [String], knowing known: [Int], until what: String,
                    sourceLocation: SourceLocation = #_sourceLocation, _ done: (Graph) -> Bool) throws {
        let fifo = NSTemporaryDirectory() + "crosspoint-batch-\(getpid())-\(UInt32.random(in: 0..<UInt32.max))", log = fifo + ".log"
        guard mkfifo(fifo, 0o600) == 0 else { throw SandboxError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
        defer { unlink(fifo); unlink(log) }
        // Read-write: opening never blocks, and pw-cli sees the end of its input when this closes.
        let input = FileHandle(fileDescriptor: open(fifo, O_RDWR), closeOnDealloc: true)
        let cli = try start(["bash", "-c", "exec pw-cli <\"$0\" >\"$1\" 2>&1", fifo, log])
        func output() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        // `list-objects` prints a line "id 43, type PipeWire:Interface:Node/3" for each.
        func knowsAll() -> Bool {
            let listed = Set(output().split(separator: "\n").compactMap { line -> Int? in
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                return words.count > 1 && words[0] == "id" ? Int(words[1].dropLast()) : nil
            })
            return listed.isSuperset(of: known)
        }
        let deadline = Date().addingTimeInterval(10)
        repeat {
            input.write(Data("list-objects\n".utf8))
            usleep(100_000)
        } while !knowsAll() && Date() < deadline
        #expect(knowsAll(), "pw-cli never listed all of \(known): \(output().suffix(400))", sourceLocation: sourceLocation)
        let start = output().utf8.count
        input.write(Data((commands.joined(separator: "\n") + "\n").utf8))
        defer {
            input.write(Data("quit\n".utf8))  // pw-cli sees no end of input on a FIFO
            try? input.close()
            cli.wait(timeout: 10)
        }
        do { _ = try waitFor(what, timeout: 30, done) } catch {
            throw SandboxError("\(error); pw-cli's output ends: \(output().suffix(1500))")
        }
        let errors = String(decoding: output().utf8.dropFirst(start), as: UTF8.self)
            .split(separator: "\n").filter { $0.contains("Error") }
        #expect(errors.isEmpty, "pw-cli: \(errors.prefix(5))", sourceLocation: sourceLocation)
    }
}
