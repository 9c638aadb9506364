import Foundation
import Testing

/// `crosspoint serve` as a hostile local user and a hostile network peer meet it (issue 29):
/// the token on loopback too, for HTTP, the WebSocket and OSC; private files; the servers'
/// bounds (RELIABILITY.md, "The servers' bounds"); and, inside network namespaces the test makes,
/// no reply at all toward a forged source address. Each test runs the real daemon with the
/// shipped drop-in and the release `crosspoint serve`.
@Suite(.serialized)
struct ServeSecurityTests {
    let sandbox: Sandbox

    init() throws {
        sandbox = try Sandbox.shared("serve security") {
            let sandbox = try Sandbox(dropIns: [repositoryRoot.appendingPathComponent("conf/crosspoint.conf").path])
            _ = try sandbox.waitFor("the node") { $0.nodeID("crosspoint") != nil }
            return sandbox
        }
    }

    /// `crosspoint serve` on free ports; `prefix` runs it elsewhere (`ip netns exec NS`).
    private struct Server {
        let process: Background
        let out: String
        let port: Int
        let osc: Int
        let token: String

        init(_ sandbox: Sandbox, listen: String = "127.0.0.1", prefix: [String] = []) throws {
            out = NSTemporaryDirectory() + "serve-security-\(UInt32.random(in: 0..<UInt32.max))"
            process = try sandbox.start(prefix + [crosspointExecutable, "serve", "--listen", listen, "--port", "0", "--osc", "0"],
                                        stdout: out + ".out", stderr: out + ".err")
            let (out, process) = (out, process)
            let started = try Wait.forValue("serve to start", describe: { (try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "" }) {
                () throws -> ServeAnnouncement? in
                if let started = ServeAnnouncement((try? String(contentsOfFile: out + ".out", encoding: .utf8)) ?? "", expectingOSC: true) {
                    return started
                }
                guard process.isRunning else {
                    throw SandboxError("serve did not start: \((try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "")")
                }
                return nil
            }
            (port, osc, token) = (started.port, started.osc ?? 0, started.token)
        }

        var log: String { (try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "" }

        func stop() {
            process.stop()
            try? FileManager.default.removeItem(atPath: out + ".out")
            try? FileManager.default.removeItem(atPath: out + ".err")
        }
    }

    /// The HTTP status of a request by curl (0: no answer), as `uid` if given.
    private func status(_ url: String, _ extra: [String] = [], as uid: Int? = nil, prefix: [String] = []) -> Int {
        let who = uid.map { ["setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? []
        let result = sandbox.run(prefix + who + ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5"] + extra + [url])
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// A Python snippet's output, run with the sandbox's environment (as `uid` if given).
    private func python(_ script: String, _ arguments: [String] = [], as uid: Int? = nil, prefix: [String] = [], timeout: Double = 30) throws -> String {
        // As another user: Debian's python3 (a python3 under /root is not theirs to run).
        let who = uid.map { ["setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups", "/usr/bin/python3"] } ?? ["python3"]
        let result = sandbox.run(prefix + who + ["-c", script] + arguments, timeout: timeout)
        guard result.succeeded else { throw SandboxError("python: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static let handshake = """
    import socket,sys,base64,os
    host, port = sys.argv[1], int(sys.argv[2]); extra = sys.argv[3] if len(sys.argv) > 3 else ''
    s = socket.create_connection((host, port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(('GET /api/stream HTTP/1.1\\r\\nHost: %s:%d\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n'
               'Sec-WebSocket-Key: %s\\r\\nSec-WebSocket-Version: 13\\r\\n%s\\r\\n' % (host, port, key, extra)).encode())
    data = s.recv(200)
    print(data.split(b' ')[1].decode() if data.startswith(b'HTTP/1.1 ') else 'closed')
    """

    /// Another account on the machine (nobody, through `setpriv`) is refused by HTTP, the
    /// WebSocket and OSC, while the user, with the token the URL carries, is served; the token
    /// and presets are 0600 in 0700 folders.
    @Test func anotherAccountIsRefusedByEveryDoor() throws {
        let server = try Server(sandbox)
        defer { server.stop() }
        let api = "http://127.0.0.1:\(server.port)/api/nodes/crosspoint"
        let change = ["-H", "Content-Type: application/json", "-d", "{\"params\":[\"gain.out.0\",0.21]}"]
        let before = try Graph(sandbox).params(of: "crosspoint")["gain.out.0"]
        #expect(status(api, change, as: 65534) == 401, "HTTP as nobody")
        #expect(status(api, change + ["-H", "Authorization: Bearer wrong-wrong-wrong-wrong"], as: 65534) == 401, "a wrong token")
        // (A refused upgrade is answered 400 by Hummingbird, whatever the router said.)
        let upgrade = try python(Self.handshake, ["127.0.0.1", "\(server.port)"], as: 65534)
        #expect(upgrade.hasPrefix("4") || upgrade == "closed", "the WebSocket as nobody: \(upgrade)")
        let osc = """
        import socket,sys
        def pad(b): return b + b'\\0' * (4 - len(b) % 4)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
        s.sendto(pad(b'/crosspoint/crosspoint/gain.out.0') + pad(b',f') + bytes.fromhex('3e570a3d'), ('127.0.0.1', int(sys.argv[1])))
        try: print(len(s.recv(70000)))
        except socket.timeout: print('nothing')
        """
        #expect(try python(osc, ["\(server.osc)"], as: 65534) == "nothing", "OSC as nobody: no reply")
        usleep(300_000)
        #expect("\(try Graph(sandbox).params(of: "crosspoint")["gain.out.0"] ?? "nil")" == "\(before ?? "nil")", "nobody changed the mix")

        // The user: the token in a header, and the page's cookie (set by the printed URL).
        #expect(status(api, change + ["-H", "Authorization: Bearer \(server.token)"]) == 200)
        #expect(try python(Self.handshake, ["127.0.0.1", "\(server.port)", "Authorization: Bearer \(server.token)\r\n"]) == "101")
        let redirect = sandbox.run(["curl", "-s", "-D", "-", "-o", "/dev/null", "http://127.0.0.1:\(server.port)/?token=\(server.token)"]).stdout
        #expect(redirect.hasPrefix("HTTP/1.1 303") && redirect.contains("HttpOnly; SameSite=Strict"), "\(redirect)")

        // Files: the token, and a preset saved through the API.
        let config = sandbox.environment["XDG_CONFIG_HOME", default: ""] + "/crosspoint"
        #expect(status("http://127.0.0.1:\(server.port)/api/nodes/crosspoint/save", ["-H", "Content-Type: application/json", "-H", "Authorization: Bearer \(server.token)", "-d", "{\"name\":\"private\"}"]) == 200)
        for (path, mode) in [(config, 0o700), (config + "/serve-token", 0o600), (config + "/presets", 0o700), (config + "/presets/private.json", 0o600)] {
            var info = stat()
            #expect(stat(path, &info) == 0 && Int(info.st_mode) & 0o777 == mode, "\(path): mode \(String(Int(info.st_mode) & 0o777, radix: 8))")
        }
        #expect(server.process.isRunning)
    }

    /// A port in use is said plainly, with what to do (not the socket call's errno).
    @Test func aPortInUseIsSaidPlainly() throws {
        let server = try Server(sandbox)
        defer { server.stop() }
        let http = sandbox.run([crosspointExecutable, "serve", "--port", "\(server.port)"], timeout: 15)
        #expect(!http.succeeded && http.stderr.contains("cannot serve on 127.0.0.1 port \(server.port): the port is in use")
                && http.stderr.contains("choose another with --port") && !http.stderr.contains("errno"), "\(http.stderr)")
        let osc = sandbox.run([crosspointExecutable, "serve", "--port", "0", "--osc", "\(server.osc)"], timeout: 15)
        #expect(!osc.succeeded && osc.stderr.contains("UDP port \(server.osc): the port is in use") && osc.stderr.contains("--osc"), "\(osc.stderr)")
    }

    /// The HTTP server's bounds: a long request line or header, a head that never ends, too many
    /// connections from one address and in all, too many header fields, a body of more values
    /// than any change, a WebSocket message over 4 kB: each refused at once, answered (or, for
    /// the connections and the WebSocket, closed), and nothing else slowed.
    @Test func theHTTPServersBoundsHold() throws {
        // The head's 10 s made 3 (CROSSPOINT_SERVE_HEAD_SECONDS, read by nothing else): the slow
        // head is refused as at 10 s, sooner.
        let server = try Server(sandbox, prefix: ["env", "CROSSPOINT_SERVE_HEAD_SECONDS=3"])
        defer { server.stop() }
        let script = """
        import socket,sys,time,json,struct
        port, token = int(sys.argv[1]), sys.argv[2]
        def connect(source='127.0.0.1'):
            s = socket.socket(); s.bind((source, 0)); s.settimeout(15); s.connect(('127.0.0.1', port)); return s
        def answer(s):
            data = b''
            try:
                while b'\\r\\n\\r\\n' not in data:
                    chunk = s.recv(4096)
                    if not chunk: break
                    data += chunk
            except (ConnectionResetError, socket.timeout): pass
            return data.split(b' ')[1].decode() if data.startswith(b'HTTP/1.1 ') else 'closed'
        out = {}
        slow = connect('127.0.0.3'); slow.sendall(b'GET /api/status HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n'); t0 = time.time()
        def wait_slow():
            out['slow head'] = answer(slow); out['slow head after'] = round(time.time() - t0); slow.close()
        import threading; waiter = threading.Thread(target=wait_slow); waiter.start()
        s = connect(); s.sendall(b'GET /' + b'a' * 100000 + b' HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n'); out['long line'] = answer(s)
        s = connect(); s.sendall(b'GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n' + b'X-Pad: ' + b'b' * 20000 + b'\\r\\n\\r\\n'); out['long header'] = answer(s)
        # Sixteen kept open, each answered once (so the server has taken each before the next).
        held = [connect() for _ in range(16)]
        status = ('GET /api/status HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n' % token).encode()
        for h in held: h.sendall(status); out['held'] = answer(h)
        extra = connect(); extra.sendall(b'GET /api/status HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n'); out['17th connection'] = answer(extra)
        other = connect('127.0.0.2'); other.sendall(('GET /api/status HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n' % token).encode())
        out['another address meanwhile'] = answer(other); other.close()
        for h in held: h.close()
        time.sleep(0.3)
        # 256 in all (16 from each of 16 addresses, once the slow head is gone), each answered; the 257th, from a 17th address, closed.
        waiter.join()
        many = []
        for a in range(16):
            for _ in range(16):
                c = connect('127.0.1.%d' % (a + 1)); c.sendall(status); many.append((c, answer(c)))
        out['256 in all'] = sorted(set(x for _, x in many))
        extra = connect('127.0.2.1'); extra.sendall(status); out['257th connection'] = answer(extra)
        for c, _ in many: c.close()
        time.sleep(0.3)
        # More header fields than 100 (small ones: 2 kB in all).
        s = connect(); s.sendall(b'GET /api/status HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n' + b''.join(b'X-F%d: 1\\r\\n' % k for k in range(150)) + b'\\r\\n')
        out['150 header fields'] = answer(s)
        # A WebSocket message over 4 kB: the socket is closed.
        import base64, os
        s = connect(); s.sendall(('GET /api/stream HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Key: %s\\r\\nSec-WebSocket-Version: 13\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n' % (port, base64.b64encode(os.urandom(16)).decode(), token)).encode())
        out['WebSocket'] = answer(s)
        payload = b'{"watch": "' + b'x' * 5000 + b'"}'
        mask = os.urandom(4)
        s.sendall(bytes([0x81, 0xFE]) + struct.pack('>H', len(payload)) + mask + bytes(b ^ mask[k % 4] for k, b in enumerate(payload)))
        closed, end = False, time.time() + 5
        while time.time() < end and not closed:
            try:
                chunk = s.recv(65536)
                closed = not chunk or any(chunk[k] == 0x88 for k in range(len(chunk)))
            except (ConnectionResetError, socket.timeout): closed = True
        out['a 5 kB WebSocket message closes it'] = closed
        body = ('{"params":[' + ','.join(['0'] * 300000) + ']}').encode()
        s = connect(); s.sendall(('POST /api/nodes/crosspoint HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nAuthorization: Bearer %s\\r\\nContent-Length: %d\\r\\n\\r\\n' % (token, len(body))).encode() + body)
        out['300,000 values'] = answer(s)
        print(json.dumps(out))
        """
        let text = try python(script, ["\(server.port)", server.token], timeout: 60)
        print("HTTP bounds: \(text)")
        let result = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        #expect(result["long line"] as? String == "431")
        #expect(result["long header"] as? String == "431")
        #expect(result["held"] as? String == "200")
        #expect(result["17th connection"] as? String == "closed")
        #expect(result["another address meanwhile"] as? String == "200")
        #expect(result["256 in all"] as? [String] == ["200"])
        #expect(result["257th connection"] as? String == "closed")
        #expect(result["150 header fields"] as? String == "431")
        #expect(result["WebSocket"] as? String == "101")
        #expect(result["a 5 kB WebSocket message closes it"] as? Bool == true)
        #expect(result["300,000 values"] as? String == "413")
        #expect(result["slow head"] as? String == "408")
        #expect((3...5).contains(result["slow head after"] as? Int ?? 0), "the slow head answered after \(result["slow head after"] ?? "?") s")
        #expect(server.process.isRunning)
        // The server still answers, and logs nothing of all this (no line a stranger can multiply).
        #expect(status("http://127.0.0.1:\(server.port)/api/status", ["-H", "Authorization: Bearer \(server.token)"]) == 200)
        #expect(server.log.isEmpty, "\(server.log)")
    }

    /// A connection idle after its request is closed (60 s; this server's is 3 s, through
    /// CROSSPOINT_SERVE_IDLE_SECONDS): a request within the time keeps it open.
    @Test func anIdleConnectionIsClosed() throws {
        let server = try Server(sandbox, prefix: ["env", "CROSSPOINT_SERVE_IDLE_SECONDS=3"])
        defer { server.stop() }
        let script = """
        import socket,sys,time,json
        port, token = int(sys.argv[1]), sys.argv[2]
        s = socket.socket(); s.settimeout(20); s.connect(('127.0.0.1', port))
        status = ('GET /api/status HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n' % token).encode()
        def answer():
            data = b''
            while b'\\r\\n\\r\\n' not in data:
                chunk = s.recv(4096)
                if not chunk: return 'closed'
                data += chunk
            head, _, rest = data.partition(b'\\r\\n\\r\\n')
            length = int([l.split(b':')[1] for l in head.split(b'\\r\\n') if l.lower().startswith(b'content-length:')][0])
            while len(rest) < length: rest += s.recv(4096)
            return head.split(b' ')[1].decode()
        out = {'first': answer() if s.sendall(status) is None else ''}
        time.sleep(1.5)
        out['after 1.5 s'] = answer() if s.sendall(status) is None else ''
        t = time.time()
        try: out['then'] = 'open' if s.recv(4096) else 'closed'
        except ConnectionResetError: out['then'] = 'closed'
        out['closed after'] = round(time.time() - t, 1)
        print(json.dumps(out))
        """
        let text = try python(script, ["\(server.port)", server.token], timeout: 40)
        print("idle connection: \(text)")
        let result = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        #expect(result["first"] as? String == "200")
        #expect(result["after 1.5 s"] as? String == "200")
        #expect(result["then"] as? String == "closed")
        let after = result["closed after"] as? Double ?? 0
        #expect(after >= 2.5 && after <= 8, "closed \(after) s after the last answer")
    }

    /// On a network (namespaces and a veth pair the test makes): a peer without the token gets
    /// 401 over HTTP and nothing at all over OSC, and packets with a forged source address
    /// (the victim's, beside the attacker) make the server send the victim nothing.
    @Test func aForgedSourceGetsNothingReflected() throws {
        let tag = String(UInt32.random(in: 0..<0xFFFF), radix: 16)
        let subnet = "10.\(Int.random(in: 100...199)).\(Int.random(in: 1...254))"
        // Two namespaces held by a process each (`unshare --net`, entered with `nsenter`: no
        // /run/netns mount, so it works in the PipeWire 1.4 root's chroot too), a veth pair between.
        let serverHolder = try sandbox.start(["unshare", "--net", "sleep", "300"])
        let lanHolder = try sandbox.start(["unshare", "--net", "sleep", "300"])
        defer { serverHolder.stop(); lanHolder.stop() }
        usleep(100_000)
        let (serverNS, lanNS) = (["nsenter", "-t", "\(serverHolder.pid)", "-n"], ["nsenter", "-t", "\(lanHolder.pid)", "-n"])
        let setup = """
        ip link add xps\(tag) type veth peer name xpl\(tag)
        ip link set xps\(tag) netns \(serverHolder.pid); ip link set xpl\(tag) netns \(lanHolder.pid)
        \(serverNS.joined(separator: " ")) sh -ec 'ip addr add \(subnet).1/24 dev xps\(tag); ip link set xps\(tag) up; ip link set lo up'
        \(lanNS.joined(separator: " ")) sh -ec 'ip addr add \(subnet).2/24 dev xpl\(tag); ip addr add \(subnet).3/24 dev xpl\(tag); ip link set xpl\(tag) up; ip link set lo up'
        """
        let made = sandbox.run(["bash", "-ec", setup])
        try #require(made.succeeded, "making the namespaces: \(made.stderr)")
        let server = try Server(sandbox, listen: "\(subnet).1", prefix: serverNS)
        defer { server.stop() }
        let lan = lanNS
        let api = "http://\(subnet).1:\(server.port)/api/nodes"
        #expect(status(api, prefix: lan) == 401)
        #expect(status(api, ["-H", "Authorization: Bearer \(server.token)"], prefix: lan) == 200)

        // The victim listens at .3; the attacker at .2 sends ten 1,492-byte packets with .3's
        // address as their source (raw IPv4), then ten subscribes of its own, and waits.
        let script = """
        import socket,struct,sys,time,threading
        server, port, victim, vport = sys.argv[1], int(sys.argv[2]), sys.argv[3], 5555
        got = []
        v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v.bind((victim, vport)); v.settimeout(0.2)
        def listen():
            end = time.time() + 3
            while time.time() < end:
                try: got.append(len(v.recv(70000)))
                except socket.timeout: pass
        t = threading.Thread(target=listen); t.start()
        def pad(b): return b + b'\\0' * (4 - len(b) % 4)
        def message(addr, *strings):
            return pad(addr) + pad(b',' + b's' * len(strings)) + b''.join(pad(x) for x in strings)
        subscribe = message(b'/crosspoint/subscribe', b'crosspoint')
        payload = b'#bundle\\0' + b'\\0' * 7 + b'\\1'
        while len(payload) + 4 + len(subscribe) <= 1464:
            payload += struct.pack('>i', len(subscribe)) + subscribe
        payload = payload + b'x' * (1464 - len(payload))
        def checksum(b):
            if len(b) % 2: b += b'\\0'
            s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
            return ~s & 0xffff
        raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        for k in range(10):
            udp = struct.pack('!HHHH', vport, port, 8 + len(payload), 0) + payload
            ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), k, 0, 64, 17, 0, socket.inet_aton(victim), socket.inet_aton(server))
            ip = ip[:10] + struct.pack('!H', checksum(ip)) + ip[12:]
            raw.sendto(ip + udp, (server, 0))
        a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind((sys.argv[4], 0)); a.settimeout(0.2)
        for k in range(10): a.sendto(subscribe, (server, port))
        back = []
        end = time.time() + 1
        while time.time() < end:
            try: back.append(len(a.recv(70000)))
            except socket.timeout: pass
        t.join()
        print(len(got), sum(got), len(back))
        """
        let text = try python(script, ["\(subnet).1", "\(server.osc)", "\(subnet).3", "\(subnet).2"], prefix: lan)
        print("forged source: victim got (packets, bytes), attacker got (packets): \(text)")
        #expect(text == "0 0 0", "packets and bytes sent to the victim, replies to the attacker: \(text)")
        let lines = server.log.split(separator: "\n")
        #expect(lines.count <= 3 && lines.allSatisfy { $0.contains("did not send /crosspoint/token") }, "\(lines)")
        #expect(server.process.isRunning)
    }
}
