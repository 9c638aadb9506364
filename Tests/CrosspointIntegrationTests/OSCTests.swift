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

        init(_ arguments: (String) -> [String] = { _ in [] }) throws {
            sandbox = try Sandbox(dropIns: [repositoryRoot.appendingPathComponent("conf/crosspoint.conf").path])
            _ = try sandbox.waitFor("the node") { $0.nodeID("crosspoint") != nil }
            folder = NSTemporaryDirectory() + "crosspoint-osc-\(UInt32.random(in: 0..<UInt32.max))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            port = Int.random(in: 20000...29999)
            server = try sandbox.start([crosspointExecutable, "serve", "--port", "0", "--osc", "\(port)"] + arguments(folder),
                                       stdout: folder + "/serve.out", stderr: folder + "/serve.err")
        }

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
        let replies = port + 10000
        let dump = try sandbox.start(["stdbuf", "-oL", "oscdump", "\(replies)"], stdout: folder + "/dump.out", stderr: folder + "/dump.err")
        defer { dump.stop() }
        try wait("the server to listen") { (try? String(contentsOfFile: folder + "/serve.out", encoding: .utf8))?.contains("OSC: udp://127.0.0.1:\(port)") == true }
        func send(_ arguments: String...) {
            let sent = sandbox.run(["oscsend", "localhost", "\(port)"] + arguments)
            #expect(sent.succeeded, "oscsend \(arguments): \(sent.stderr)")
        }
        func dumped() -> String { (try? String(contentsOfFile: folder + "/dump.out", encoding: .utf8)) ?? "" }

        // Subscribed (replies to another port, as TouchOSC listens): the node's state at once.
        send("/crosspoint/subscribe", "si", "crosspoint", "\(replies)")
        try wait("the state") { dumped().contains("/crosspoint/crosspoint/matrix.0.0 f 0.500000") }
        #expect(dumped().contains("/crosspoint/crosspoint/gain.master f 1.000000"), "\(dumped())")

        // A float, a typed level, a flag: Props follow, and the subscriber hears each change.
        send("/crosspoint/crosspoint/matrix.FL.MONO", "f", "0.25")
        send("/crosspoint/crosspoint/gain.master", "s", "-6dB")
        send("/crosspoint/crosspoint/mute.in.1", "T")
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
        send("/crosspoint/crosspoint/gain.master", "f", "99")
        send("/crosspoint/crosspoint/no.such.key", "f", "1")
        send("/crosspoint/nobody/gain.master", "f", "1")
        send("/crosspoint/crosspoint/matrix.0.0", "f", "0.125")  // then a good one: it still works
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
    }

    /// With a token (off loopback, or --token-file), a sender is heard only once it sent it.
    @Test func withATokenOSCIsHeardOnlyAfterTheToken() throws {
        let token = "osc-test-token-0123456789"
        let rig = try Rig { folder in
            // The token file, written before the server reads it.
            try? token.write(toFile: folder + "/token", atomically: true, encoding: .utf8)
            return ["--token-file", folder + "/token"]
        }
        defer { rig.stop() }
        let (sandbox, folder, port) = (rig.sandbox, rig.folder, rig.port)
        try wait("the server to listen") { (try? String(contentsOfFile: folder + "/serve.out", encoding: .utf8))?.contains("send /crosspoint/token TOKEN first") == true }
        // Without the token: refused. With a wrong one: refused. The sender's port is what is
        // trusted, so the messages go from one socket (python3's, as liblo's oscsend picks a new
        // port each time).
        let withoutToken = OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.5)]).bytes
        let wrong = OSCMessage(address: "/crosspoint/token", arguments: [.string("nope")]).bytes
        let right = OSCMessage(address: "/crosspoint/token", arguments: [.string(token)]).bytes
        let then = OSCMessage(address: "/crosspoint/crosspoint/gain.master", arguments: [.float(0.25)]).bytes
        try sendRaw([withoutToken, wrong], port: port, sandbox: sandbox)
        usleep(500_000)
        #expect(sandbox.float(try Graph(sandbox).params(of: "crosspoint")["gain.master"]) == 1, "a change without the token")
        try sendRaw([right, then], port: port, sandbox: sandbox)
        _ = try sandbox.waitFor("the change after the token") { sandbox.float($0.params(of: "crosspoint")["gain.master"]) == 0.25 }
        let log = (try? String(contentsOfFile: folder + "/serve.err", encoding: .utf8)) ?? ""
        #expect(log.contains("send /crosspoint/token TOKEN first") && log.contains("wrong token"), "\(log)")
    }

    private func wait(_ what: String, timeout: Double = 10, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { throw SandboxError("timed out waiting for \(what)") }
            usleep(50_000)
        }
    }

    /// One UDP datagram of these bytes to the server (python3's socket: the bytes as given).
    private func sendRaw(_ bytes: [UInt8], port: Int, sandbox: Sandbox) throws {
        try sendRaw([bytes], port: port, sandbox: sandbox)
    }

    /// Datagrams, in order, from one socket (one sending port).
    private func sendRaw(_ datagrams: [[UInt8]], port: Int, sandbox: Sandbox, gap: Double = 0.05) throws {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
        let script = "import socket,sys,time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            + "for d in sys.argv[3:]:\n    s.sendto(bytes.fromhex(d), ('127.0.0.1', int(sys.argv[1])))\n    time.sleep(float(sys.argv[2]))\n"
        let sent = sandbox.run(["python3", "-c", script, "\(port)", "\(gap)"] + datagrams.map(hex))
        guard sent.succeeded else { throw SandboxError("sending a datagram: \(sent.stderr)") }
    }
}
