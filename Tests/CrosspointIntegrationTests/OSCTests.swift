import CrosspointCore
import Foundation
import Testing

/// `crosspoint serve --osc`: Open Sound Control from a real client library (liblo's oscsend and
/// oscdump) on loopback, against a private daemon with the shipped stereo-to-mono drop-in:
/// changes land in Props, subscribers get the state and every change, bundles apply together,
/// bad packets change nothing.
@Suite(.serialized)
struct OSCTests {
    /// A daemon with the shipped drop-in, a folder for the files, and `crosspoint serve --osc`
    /// on a random port (with `arguments` added): stopped and removed by `stop`.
    private struct Rig {
        let sandbox: Sandbox
        let folder: String
        let port: Int
        let server: Background

        /// The server's token (its --token-file).
        static let token = "osc-test-token-0123456789"

        init(extraDropIns: [String] = []) throws {
            sandbox = try Sandbox(dropIns: [repositoryRoot.appendingPathComponent("conf/crosspoint.conf").path] + extraDropIns)
            _ = try sandbox.waitFor("the node") { $0.nodeID("crosspoint") != nil }
            folder = NSTemporaryDirectory() + "crosspoint-osc-\(UInt32.random(in: 0..<UInt32.max))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Self.token.write(toFile: folder + "/token", atomically: true, encoding: .utf8)
            server = try sandbox.start([crosspointExecutable, "serve", "--port", "0", "--osc", "0", "--token-file", folder + "/token"],
                                       stdout: folder + "/serve.out", stderr: folder + "/serve.err")
            let folder = folder
            port = try Wait.forValue("the server to listen") {
                ServeAnnouncement((try? String(contentsOfFile: folder + "/serve.out", encoding: .utf8)) ?? "", expectingOSC: true)?.osc
            }
        }

        var log: String { (try? String(contentsOfFile: folder + "/serve.err", encoding: .utf8)) ?? "" }

        func stop() {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
            sandbox.stop()
        }
    }

    @Test func oscMessagesAndBundlesChangeTheNodeAndSubscribersHearOfIt() throws {
        let rig = try Rig()
        defer { rig.stop() }
        let (sandbox, folder, port, server) = (rig.sandbox, rig.folder, rig.port, rig.server)
        let replies = try freeUDPPort()
        let dump = try sandbox.start(["stdbuf", "-oL", "oscdump", "\(replies)"], stdout: folder + "/dump.out", stderr: folder + "/dump.err")
        defer { dump.stop() }
        // Each message from one socket that sends the token first (liblo's oscsend picks a new
        // port each time, so it is never heard: see the strangers' test); replies are read by
        // liblo's oscdump.
        func send(_ address: String, _ arguments: OSCArgument...) {
            #expect((try? sendRaw(OSCMessage(address: address, arguments: arguments).bytes, port: port, sandbox: sandbox)) != nil, "sending \(address)")
        }
        func dumped() -> String { (try? String(contentsOfFile: folder + "/dump.out", encoding: .utf8)) ?? "" }

        // Subscribed (replies to another port, as TouchOSC listens): the node's state at once.
        send("/crosspoint/subscribe", .string("crosspoint"), .int(Int32(replies)))
        try wait("the state") { dumped().contains("/crosspoint/crosspoint/matrix.0.0 f 0.500000") }
        #expect(dumped().contains("/crosspoint/crosspoint/gain.master f 1.000000"), "\(dumped())")

        // A float, a typed level, a flag: Props follow, and the subscriber hears each change.
        send("/crosspoint/crosspoint/matrix.FL.MONO", .float(0.25))
        send("/crosspoint/crosspoint/gain.master", .string("-6dB"))
        send("/crosspoint/crosspoint/mute.in.1", .bool(true))
        var props = try sandbox.waitFor("Props to follow OSC") { graph in
            let p = graph.params(of: "crosspoint")
            return sandbox.float(p["matrix.0.0"]) == 0.25 && p["mute.in.1"] as? Bool == true
                && sandbox.float(p["gain.master"]).map { abs($0 - 0.5011872) < 1e-6 } == true
        }.params(of: "crosspoint")
        try wait("the changes to reach the subscriber") {
            let text = dumped()
            return text.contains("/crosspoint/crosspoint/matrix.0.0 f 0.250000") && text.contains("/crosspoint/crosspoint/mute.in.1 T")
                && text.contains("/crosspoint/crosspoint/gain.master f 0.501187")
        }

        // A bundle: both messages, one change set. Sent as raw bytes made by OSC.bundle.
        let bundle = OSC.bundle([
            OSCMessage(address: "/crosspoint/crosspoint/matrix.1.0", arguments: [.float(0.75)]),
            OSCMessage(address: "/crosspoint/crosspoint/mute.in.1", arguments: [.bool(false)]),
        ])
        try sendRaw(bundle, port: port, sandbox: sandbox)
        props = try sandbox.waitFor("Props to follow the bundle") { graph in
            let p = graph.params(of: "crosspoint")
            return sandbox.float(p["matrix.1.0"]) == 0.75 && p["mute.in.1"] as? Bool == false
        }.params(of: "crosspoint")

        // Bad input: garbage, a value out of range, an unknown key, a node that is not there, a
        // bundle lying about its size. Nothing changes; the server goes on and says why.
        try sendRaw(Array("not osc at all".utf8), port: port, sandbox: sandbox)
        try sendRaw(Array("#bundle".utf8) + [0] + Array(repeating: 0, count: 8) + [0x7F, 0xFF, 0xFF, 0xF0], port: port, sandbox: sandbox)
        send("/crosspoint/crosspoint/gain.master", .float(99))
        send("/crosspoint/crosspoint/no.such.key", .float(1))
        send("/crosspoint/nobody/gain.master", .float(1))
        send("/crosspoint/crosspoint/matrix.0.0", .float(0.125))  // then a good one: it still works
        let after = try sandbox.waitFor("the good message after the bad ones") { graph in
            sandbox.float(graph.params(of: "crosspoint")["matrix.0.0"]) == 0.125
        }.params(of: "crosspoint")
        for key in ["gain.master", "matrix.1.0", "mute.in.1"] {
            #expect("\(after[key] ?? "nil")" == "\(props[key] ?? "nil")", "\(key) changed by a bad message")
        }
        let log = (try? String(contentsOfFile: folder + "/serve.err", encoding: .utf8)) ?? ""
        for reason in ["OSC packets are a multiple of 4 bytes", "a bundle element of", "gain.master: 99 is outside", "unknown parameter 'no.such.key'",
                       "no Crosspoint node is called 'nobody'"] {
            #expect(log.contains(reason), "the log says why (\(reason)): \(log)")
        }
        #expect(server.isRunning)

        // A fader's burst (TouchOSC sends one message a frame): 200 values a millisecond apart,
        // with a bad one in the middle. The good ones apply, and the last one lands.
        var burst = (0..<200).map { k in OSCMessage(address: "/crosspoint/crosspoint/gain.in.0", arguments: [.float(Float(k) / 400)]).bytes }
        burst.insert(OSCMessage(address: "/crosspoint/crosspoint/gain.in.0", arguments: [.float(50)]).bytes, at: 100)
        try sendRaw(burst, port: port, sandbox: sandbox, gap: 0.001)
        _ = try sandbox.waitFor("the burst's last value", describe: { "gain.in.0 = \($0.params(of: "crosspoint")["gain.in.0"] ?? "nil")" }) { graph in
            sandbox.float(graph.params(of: "crosspoint")["gain.in.0"]).map { abs($0 - 199.0 / 400) < 1e-6 } ?? false
        }
        #expect(server.isRunning)

        // A scene's recall, a request and not a setting, from a controller's button: the mix as
        // stored comes back (issue 31).
        let stored = sandbox.crosspoint("scene", "store", "crosspoint", "start")
        #expect(stored.succeeded, "\(stored.stderr)")
        send("/crosspoint/crosspoint/gain.in.0", .float(0.125))
        _ = try sandbox.waitFor("gain.in.0 moved") { sandbox.float($0.params(of: "crosspoint")["gain.in.0"]) == 0.125 }
        send("/crosspoint/crosspoint/scene.recall", .string("start"))
        _ = try sandbox.waitFor("the scene recalled by OSC") { graph in
            sandbox.float(graph.params(of: "crosspoint")["gain.in.0"]).map { abs($0 - 199.0 / 400) < 1e-6 } ?? false
        }
        send("/crosspoint/crosspoint/scene.recall", .string("nowhere"))
        try wait("the log to name the missing scene") { rig.log.contains("no scene 'nowhere'") }

        // A ducking rule's depth and switch (issue 31), by its trigger and by its number: the
        // rule's line follows, the subscriber hears both keys, a depth out of range is refused.
        let rule = sandbox.crosspoint("duck", "add", "crosspoint", "FL", "--lowers", "FR", "--depth", "-15dB")
        #expect(rule.succeeded, "\(rule.stderr)")
        send("/crosspoint/crosspoint/duck.depth.FL", .float(-20))
        send("/crosspoint/crosspoint/duck.on.0", .bool(false))
        _ = try sandbox.waitFor("the rule's line to follow OSC") { graph in
            let line = "\((graph.params(of: "crosspoint")["duck"] as? [Any])?.first ?? "")"
            return line.contains("depth=-20 ") && line.hasSuffix(" off")
        }
        try wait("the subscriber to hear the rule's keys") {
            dumped().contains("/crosspoint/crosspoint/duck.depth.0 f -20.000000") && dumped().contains("/crosspoint/crosspoint/duck.on.0 F")
        }
        send("/crosspoint/crosspoint/duck.depth.FL", .float(-70))
        try wait("the log to name the depth") { rig.log.contains("duck.depth.0: -70 dB is outside -60 to 0 dB") }
        #expect(sandbox.crosspoint("duck", "remove", "crosspoint", "all").succeeded)
    }

    /// Only the user controls the mix: a sender is heard once it sent the token from its address
    /// and port. A stranger (no token, a wrong one, another account on the machine, liblo's
    /// oscsend from a new port each time) changes nothing, gets nothing back, and is logged at
    /// most once a second with a count; the token first in a bundle admits the bundle.
    @Test func strangersAreNotHeardNotAnsweredAndLoggedOnlyAsACount() throws {
        let rig = try Rig()
        defer { rig.stop() }
        let (sandbox, port) = (rig.sandbox, rig.port)
        let change = OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.5)]).bytes
        let wrong = OSCMessage(address: "/crosspoint/token", arguments: [.string("nope-nope-nope-nope")]).bytes
        let subscribe = OSCMessage(address: "/crosspoint/subscribe", arguments: [.string("crosspoint")]).bytes
        // 600 packets of every kind from one socket, listening for any answer for a second after.
        let heard = try exchange([change, wrong, subscribe, Array("garbage!".utf8), OSC.bundle([OSCMessage(address: "/crosspoint/subscribe", arguments: [.string("crosspoint")])])],
                                 repeat: 120, port: port, sandbox: sandbox)
        #expect(heard.isEmpty, "a stranger got \(heard.count) replies")
        // liblo's oscsend, and another account on the machine (setpriv as nobody).
        #expect(sandbox.run(["oscsend", "localhost", "\(port)", "/crosspoint/crosspoint/gain.master", "f", "0.25"]).succeeded)
        let nobody = try exchange([change], port: port, sandbox: sandbox, as: 65534)
        #expect(nobody.isEmpty)
        usleep(300_000)
        #expect(sandbox.float(try Graph(sandbox).params(of: "crosspoint")["gain.master"]) == 1, "a stranger changed the mix")
        let lines = rig.log.split(separator: "\n").filter { $0.contains("osc:") }
        #expect(lines.count <= 6 && lines.allSatisfy { $0.contains("did not send /crosspoint/token TOKEN first") }, "the log: \(lines.prefix(10))")
        #expect(lines.first?.contains("osc: ignored 1 packet from 1 address") == true, "\(lines.prefix(3))")

        // The token first in a bundle admits the bundle, and its sender from then on.
        let token = OSCMessage(address: "/crosspoint/token", arguments: [.string(Rig.token)])
        try sendRaw(OSC.bundle([token, OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.25)])]), port: port, sandbox: sandbox, token: false)
        _ = try sandbox.waitFor("the bundle with the token") { sandbox.float($0.params(of: "crosspoint")["gain.master"]) == 0.25 }
        // A heard sender's bad message: one short error back, nothing more.
        let reply = try exchange([token.bytes, OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(99)]).bytes], port: port, sandbox: sandbox)
        #expect(reply.count == 1 && reply.allSatisfy { $0.count <= 320 }, "replies: \(reply.map(\.count))")
        #expect(rig.server.isRunning)
    }

    /// A datagram is read whole up to 65,536 bytes, and a bundle applies all its messages or
    /// none, with one error naming the first bad one.
    @Test func aBundleAppliesWholeOrNotAtAll() throws {
        let rig = try Rig()
        defer { rig.stop() }
        let (sandbox, port) = (rig.sandbox, rig.port)
        // 30 kB: 500 messages, the last one the master.
        let filler = (0..<500).map { k in OSCMessage(address: "/crosspoint/crosspoint/gain.in.0", arguments: [.float(Float(k % 7) / 10)]) }
        let big = OSC.bundle(filler + [OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.5)])])
        #expect(big.count > 20_000)
        try sendRaw(big, port: port, sandbox: sandbox)
        _ = try sandbox.waitFor("the large bundle's last message") { sandbox.float($0.params(of: "crosspoint")["gain.master"]) == 0.5 }
        // A good change, a bad one, another good one: nothing applies; the error names the bad one.
        let bad = OSC.bundle([OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.25)]),
                              OSCMessage(address: "/crosspoint/crosspoint/gain.out.0", arguments: [.float(99)]),
                              OSCMessage(address: "/crosspoint/crosspoint/mute.in.0", arguments: [.bool(true)])])
        let replies = try exchange([OSCMessage(address: "/crosspoint/token", arguments: [.string(Rig.token)]).bytes, bad], port: port, sandbox: sandbox)
        let text = replies.map { String(decoding: $0, as: UTF8.self) }.joined()
        #expect(replies.count == 1 && text.contains("nothing in it applied") && text.contains("gain.out.0"), "\(text)")
        // The node is as it was: neither good message of the bad bundle landed.
        usleep(300_000)
        let p = try Graph(sandbox).params(of: "crosspoint")
        #expect(sandbox.float(p["gain.master"]) == 0.5 && p["mute.in.0"] as? Bool == false, "\(p)")
        // A bundle with a malformed message inside: refused whole too.
        try sendRaw(OSC.bundle([OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.125)]),
                                OSCMessage(address: "/elsewhere", arguments: [.float(1)])]), port: port, sandbox: sandbox)
        usleep(300_000)
        #expect(sandbox.float(try Graph(sandbox).params(of: "crosspoint")["gain.master"]) == 0.5)
        #expect(rig.log.contains("/elsewhere: addresses start with /crosspoint/"), "\(rig.log)")
    }

    /// Subscriptions to nodes that are not there are refused (they cost the server a lookup
    /// every turn for good): 2,500 packets naming 75,000 made-up nodes leave the server idle and
    /// a real change as quick as before.
    @Test func subscriptionsToMadeUpNodesCostNothing() throws {
        let rig = try Rig()
        defer { rig.stop() }
        let (sandbox, port) = (rig.sandbox, rig.port)
        let packets = (0..<2500).map { p in
            OSC.bundle((0..<30).map { k in OSCMessage(address: "/crosspoint/subscribe", arguments: [.string("fake-\(p)-\(k)")]) })
        }
        try sendRaw(packets, port: port, sandbox: sandbox, gap: 0)
        usleep(2_000_000)  // let the refusals drain
        let before = cpuSeconds(rig.server.pid)
        usleep(2_000_000)
        let idle = cpuSeconds(rig.server.pid) - before
        #expect(idle < 0.3, "serve used \(idle) s of CPU in 2 s with nothing to do")
        let start = Date()
        try sendRaw(OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.75)]).bytes, port: port, sandbox: sandbox)
        _ = try sandbox.waitFor("a change after the storm") { sandbox.float($0.params(of: "crosspoint")["gain.master"]) == 0.75 }
        let took = Date().timeIntervalSince(start)
        print("after 75,000 made-up subscriptions: \(String(format: "%.2f", idle)) s CPU idle in 2 s; a change took \(String(format: "%.0f", took * 1000)) ms (with python's start)")
        #expect(rig.log.contains("no Crosspoint node is called 'fake-"), "the refusal is logged")
        #expect(rig.server.isRunning)
    }

    /// The subscriptions' and the heard senders' bounds: a subscriber follows at most 16 nodes
    /// (a 17th is refused, the 16 still followed); at most 256 senders are remembered as heard,
    /// the longest silent forgotten first (it is a stranger again until it sends the token).
    @Test func subscriptionsAndHeardSendersAreBounded() throws {
        // 17 more nodes, 1 x 1 each, beside the shipped one.
        let conf = NSTemporaryDirectory() + "osc-17-nodes-\(UInt32.random(in: 0..<UInt32.max)).conf"
        let modules = (1...17).map { k in
            "{ name = libpipewire-module-crosspoint args = { node.name = \"xp-osc-\(k)\" inputs = 1 outputs = 1 state.persist = false } }"
        }
        try "context.modules = [\n\(modules.joined(separator: "\n"))\n]\n".write(toFile: conf, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: conf) }
        let rig = try Rig(extraDropIns: [conf])
        defer { rig.stop() }
        let (sandbox, port) = (rig.sandbox, rig.port)
        _ = try sandbox.waitFor("the 17 nodes") { graph in (1...17).allSatisfy { graph.nodeID("xp-osc-\($0)") != nil } }
        let token = OSCMessage(address: "/crosspoint/token", arguments: [.string(Rig.token)]).bytes
        let subscribes = (1...17).map { OSCMessage(address: "/crosspoint/subscribe", arguments: [.string("xp-osc-\($0)")]).bytes }
        let replies = try exchange([token] + subscribes, port: port, sandbox: sandbox).map { String(decoding: $0, as: UTF8.self) }
        let refused = replies.filter { $0.contains("/crosspoint/error") }
        // The subscriptions are taken as each node's state is read: any one of them may be the 17th.
        #expect(refused.count == 1 && refused.first?.contains(": at most 16 nodes a subscriber") == true, "\(refused)")
        let followed = (1...17).filter { k in replies.contains { $0.contains("/crosspoint/xp-osc-\(k)/gain.master") } }
        #expect(followed.count == 16, "states sent for \(followed)")
        if let out = (1...17).first(where: { !followed.contains($0) }) {
            #expect(refused.first?.contains("xp-osc-\(out):") == true, "\(refused)")
        }

        // 257 senders give the token, the first of them first; then the first is a stranger again
        // (no change, no reply) and the last is heard.
        let script = """
        import socket,sys,time
        port, token = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
        change = bytes.fromhex(sys.argv[3])
        senders = []
        for k in range(257):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 0)); s.settimeout(0.3)
            s.sendto(token, ('127.0.0.1', port)); senders.append(s); time.sleep(0.002)
        time.sleep(0.3)
        senders[0].sendto(change, ('127.0.0.1', port))
        try: first = len(senders[0].recv(70000))
        except socket.timeout: first = 0
        print(first)
        """
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        let bad = OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(99)]).bytes
        let first = sandbox.run(["python3", "-c", script, "\(port)", hex(token), hex(bad)])
        #expect(first.succeeded && first.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0",
                "the first of 257 senders, forgotten, got a reply: \(first.stdout) \(first.stderr)")
        // A sender heard recently still gets its error.
        let recent = try exchange([token, bad], port: port, sandbox: sandbox)
        #expect(recent.count == 1)

        // 65 subscribers, each subscribed once the one before has its state: the 65th takes the
        // place of the first, which hears no more changes; the other 64 hear the change.
        let subscribers = """
        import socket,sys,time
        port, token, subscribe, change = int(sys.argv[1]), *(bytes.fromhex(a) for a in sys.argv[2:5])
        def drain(s, wait):
            got, end = b'', time.time() + wait
            s.settimeout(0.05)
            while time.time() < end:
                try: got += s.recv(70000)
                except socket.timeout: pass
            return got
        subs = []
        for k in range(65):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 0))
            s.sendto(token, ('127.0.0.1', port)); s.sendto(subscribe, ('127.0.0.1', port))
            end, state = time.time() + 5, b''
            while b'gain.master' not in state and time.time() < end: state += drain(s, 0.05)
            if b'gain.master' not in state: print('no state for', k); sys.exit(1)
            subs.append(s)
        subs[-1].sendto(change, ('127.0.0.1', port))
        time.sleep(1.0)
        print(' '.join('1' if b'gain.master' in drain(s, 0.02) else '0' for s in subs))
        """
        let subscribe = OSCMessage(address: "/crosspoint/subscribe", arguments: [.string("crosspoint")]).bytes
        let change = OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.625)]).bytes
        let heard = sandbox.run(["python3", "-c", subscribers, "\(port)", hex(token), hex(subscribe), hex(change)], timeout: 60)
        let flags = heard.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(heard.succeeded && flags.count == 65, "\(heard.stdout) \(heard.stderr)")
        #expect(flags.first == "0", "the first subscriber, replaced, still hears changes")
        #expect(flags.dropFirst().allSatisfy { $0 == "1" }, "subscribers 2...65 hear the change: \(flags)")
        #expect(rig.log.contains("osc: 64 subscribers: "), "the replacement is logged")
    }

    /// User and system CPU seconds of a process.
    private func cpuSeconds(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Sends datagrams from one socket (as user `uid`, if given), `repeat` times over, and
    /// returns each datagram that came back within a second after.
    private func exchange(_ datagrams: [[UInt8]], repeat count: Int = 1, port: Int, sandbox: Sandbox, as uid: Int? = nil) throws -> [[UInt8]] {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        let script = """
        import socket,sys,time
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 0))
        port, count = int(sys.argv[1]), int(sys.argv[2])
        for _ in range(count):
            for d in sys.argv[3:]:
                s.sendto(bytes.fromhex(d), ('127.0.0.1', port))
        s.settimeout(0.2); got = []; end = time.time() + 1.0
        while time.time() < end:
            try: got.append(s.recv(70000).hex())
            except socket.timeout: pass
        print(' '.join(got))
        """
        // As another user: Debian's python3 (a python3 under /root is not theirs to run).
        let prefix = uid.map { ["setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups", "/usr/bin/python3"] } ?? ["python3"]
        let result = sandbox.run(prefix + [ "-c", script, "\(port)", "\(count)"] + datagrams.map(hex))
        guard result.succeeded else { throw SandboxError("exchanging datagrams: \(result.stderr)") }
        return result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { text in
            var bytes: [UInt8] = [], k = text.startIndex
            while k < text.endIndex, let next = text.index(k, offsetBy: 2, limitedBy: text.endIndex) {
                bytes.append(UInt8(text[k..<next], radix: 16) ?? 0)
                k = next
            }
            return bytes
        }
    }

    private func wait(_ what: String, timeout: Double = 10, _ condition: () -> Bool) throws {
        try Wait.until(what, timeout: timeout, condition)
    }

    /// One UDP datagram of these bytes to the server (python3's socket: the bytes as given).
    private func sendRaw(_ bytes: [UInt8], port: Int, sandbox: Sandbox, token: Bool = true) throws {
        try sendRaw([bytes], port: port, sandbox: sandbox, token: token)
    }

    /// Datagrams, in order, from one socket (one sending port), after the token (unless `token`
    /// is false).
    private func sendRaw(_ datagrams: [[UInt8]], port: Int, sandbox: Sandbox, gap: Double = 0.05, token: Bool = true) throws {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
        let datagrams = (token ? [OSCMessage(address: "/crosspoint/token", arguments: [.string(Rig.token)]).bytes] : []) + datagrams
        // The datagrams in a file, one hex line each (75,000 subscriptions do not fit in argv).
        let file = NSTemporaryDirectory() + "osc-datagrams-\(UInt32.random(in: 0..<UInt32.max))"
        try datagrams.map(hex).joined(separator: "\n").write(toFile: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let script = "import socket,sys,time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            + "for d in open(sys.argv[3]).read().split():\n    s.sendto(bytes.fromhex(d), ('127.0.0.1', int(sys.argv[1])))\n    time.sleep(float(sys.argv[2]))\n"
        let sent = sandbox.run(["python3", "-c", script, "\(port)", "\(gap)", file], timeout: 60)
        guard sent.succeeded else { throw SandboxError("sending a datagram: \(sent.stderr)") }
    }
}
