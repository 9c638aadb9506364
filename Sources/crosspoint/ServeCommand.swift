// The control surface, `crosspoint serve`. It lives in the command's target: it is the
// command line's code (`Session`, `NodeView`, `ParamValue`, `LoadCommand.load`) behind HTTP, so
// a change made on the page is checked, sent, confirmed and reported exactly as `crosspoint
// param` does it, and the node object the page draws is `show --json`'s.
//
//   browser ──HTTP──► Hummingbird router ──► AccessMiddleware (Host, token, Origin, JSON)
//      ▲                   │ handlers: perform { session in ... }  (a job, awaited)
//      │                   ▼
//      └──WebSocket── Surface thread ── owns PipeWireClient + Session, GraphWatcher,
//           (node, levels,             one LevelsWatcher per watched node
//            nodes, status)
//
// Here: the command, who may use the server (`ServeAccess`) and the routes. The one thread
// that owns PipeWire: `Surface`, in ServeSurface.swift. What the requests do: ServeAPI.swift.
//
// Hummingbird 2 rather than FlyingFox: the default the design's issue named, the ecosystem's
// standard (SwiftNIO underneath), with WebSocket upgrade on the same router and middleware, and
// swift-log. FlyingFox was not measured: nothing called for it. Hummingbird's cost is the
// command's size: 28 MB stripped instead of 16 MB (with Hummingbird's default traits, which
// pull in the whole of Foundation and ICU, it was 73 MB: they are off, in Package.swift), and
// a longer first build (SwiftNIO and its packages).
//
// Security (`ServeAccess`, `AccessMiddleware`, `ServeRoutes.body`): loopback by default, with
// the `Host` header checked (DNS rebinding); any other address needs the token (random, 0600
// file, or `--token-file`), compared in constant time; changes must be `application/json` (a
// cross-site form cannot send that without a preflight the server never grants) and carry no
// foreign `Origin`; presets are names, never paths. Bodies are strict JSON (Foundation's
// decoder, not the SPA-JSON parser the node uses, which takes PipeWire's relaxed syntax) with
// only the keys the request takes, limited to 8 MiB; WebSocket messages to 4 kB; every error
// is JSON naming the key, and a change set is applied all or nothing.
//
// The page (`Web/`: index.html, app.js, style.css; compiled in with SwiftPM's `embedInCode`, or
// read from `CROSSPOINT_WEB_DIR` while working on it) draws only the cells in view (a 256 x 256
// grid scrolls), patches cells from each `node` message instead of rebuilding, animates meters
// in `requestAnimationFrame`, and coalesces its own changes to at most 30 requests a second,
// one in flight, the last value always sent.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import CrosspointCore
import Dispatch
import CrosspointPipeWire
import Glibc
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the control surface: the matrix as a grid with live meters, in a browser.",
        discussion: """
        Starts a small web server (HTTP and a WebSocket) that shows every Crosspoint node of \
        the daemon: the matrix as a grid of gains, input and output strips with gains, mutes \
        and live meters, the master, the ramp, links, presets, channel counts and names. \
        Changes made anywhere (pw-cli, crosspoint, another browser) show at once; the page's \
        own go straight to the node. It prints the URL to open.

        Only you control your mix: every request needs a token, on 127.0.0.1 too (another \
        account on the machine can reach a loopback port). It is made on first use, stored \
        with mode 0600 in $XDG_CONFIG_HOME/crosspoint/serve-token (or read from --token-file), \
        and the URL printed carries it: open that once and the page keeps it in a cookie. \
        Scripts send Authorization: Bearer TOKEN. By default it listens on 127.0.0.1 only; \
        --listen 0.0.0.0 or a LAN address opens it to the network (with the same token). To \
        reach a loopback-only server from another machine, tunnel it: ssh -L \
        7311:127.0.0.1:7311 audio-box, then open the printed URL there. Presets are files NAME.json in one folder \
        ($XDG_CONFIG_HOME/crosspoint/presets, or --presets). The API the page uses is in the \
        README (Control surface).

        Examples:
          crosspoint serve
          crosspoint serve --port 8080
          crosspoint serve --listen 0.0.0.0          (a tablet on the LAN: open the printed URL with the machine's address)
          crosspoint serve --listen 192.168.1.20 --token-file ~/.config/crosspoint/token
        """)

    @OptionGroup var connection: Connection
    @Option(help: ArgumentHelp("The address to listen on: 127.0.0.1 (the default, this machine only), ::1, 0.0.0.0 or one of this machine's addresses (the token is needed on every one).", valueName: "address"))
    var listen = "127.0.0.1"
    @Option(help: ArgumentHelp("The port (0 picks a free one).", valueName: "n")) var port = 7311
    @Option(help: ArgumentHelp("Read the token from this file instead of the stored one (16 or more printable characters).", valueName: "file"),
            completion: .file())
    var tokenFile: String?
    @Option(help: ArgumentHelp("The folder presets are kept in (default: $XDG_CONFIG_HOME/crosspoint/presets).", valueName: "dir"),
            completion: .directory)
    var presets: String?
    @Option(help: ArgumentHelp("Also take Open Sound Control on this UDP port, on the same address (0 picks a free one): /crosspoint/NODE/KEY VALUE; README: OSC.", valueName: "port"))
    var osc: Int?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        if let osc, !(0...65535).contains(osc) { throw ValidationError("--osc must be from 0 to 65535") }
        guard !listen.isEmpty else { throw ValidationError("--listen needs an address") }
    }

    func run() throws {
        let loopback = ServeAccess.isLoopback(listen)
        let token = try tokenFile.map(ServeAccess.readToken) ?? ServeAccess.storedToken()
        let access = ServeAccess(token: token, loopbackOnly: loopback)
        let surface = Surface(remote: connection.remote)
        var oscLine = ""
        if let osc {
            let server = OSCServer(surface: surface, token: token)
            do {
                let bound = try server.start(host: listen, port: osc)
                let host = listen.contains(":") ? "[\(listen)]" : listen
                oscLine = "OSC: udp://\(host):\(bound) (send /crosspoint/token TOKEN first, then /crosspoint/NODE/KEY VALUE)\n"
            } catch {
                throw CommandError.invalid("cannot take OSC on \(listen) UDP port \(osc): \(ServeCommand.plain(error))")
            }
        }
        surface.start()
        let oscAnnounce = oscLine
        let store = PresetStore(directory: presets ?? PresetStore.defaultDirectory())
        let router = ServeRoutes.router(surface: surface, store: store, access: access)

        signal(SIGPIPE, SIG_IGN)
        var logger = Logger(label: "crosspoint-serve")
        // Hummingbird logs a connection closed during its first request (a refused head, a
        // stranger's garbage) as an error: one line a connection, which a stranger could
        // multiply. Its own failures reach us as errors; its log stays quiet unless asked.
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        let listen = self.listen
        let app = Application(
            router: router,
            server: ServeLimits.server(webSocketRouter: router),
            configuration: .init(address: .hostname(listen, port: port), serverName: "crosspoint"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let host = listen.contains(":") ? "[\(listen)]" : listen
                let url = "http://\(host):\(port)/?token=\(token)"
                let text = "Crosspoint control surface: \(url)\n" + oscAnnounce
                    + "(the token is in \(tokenFile ?? ServeAccess.tokenPath()); the page keeps it in a cookie)\n"
                _ = Glibc.write(STDOUT_FILENO, text, text.utf8.count)
            },
            logger: logger)
        // The command is synchronous: it waits for the server's task (which ends on SIGINT or
        // SIGTERM, once the server has shut down).
        let finished = Finished()
        Task {
            do {
                try await app.runService()
            } catch {
                finished.error = "cannot serve on \(listen) port \(port): \(ServeCommand.plain(error, option: "--port"))"
            }
            finished.semaphore.signal()
        }
        finished.semaphore.wait()
        if let error = finished.error { throw CommandError.invalid(error) }
    }

    /// A server's start error as a person reads it: the system's reason, and what to do.
    static func plain(_ error: any Error, option: String = "--osc") -> String {
        guard let io = error as? IOError else { return "\(error)" }
        switch io.errnoCode {
        case EADDRINUSE: return "the port is in use (another server, or a `crosspoint serve` already running); choose another with \(option), or 0 for any free one"
        case EADDRNOTAVAIL: return "this machine has no such address; use 127.0.0.1, ::1, 0.0.0.0 or one of its addresses (ip -brief address)"
        case EACCES: return "ports below 1024 need privileges; choose one from 1024 to 65535"
        default: return String(cString: strerror(io.errnoCode))
        }
    }

    private final class Finished: @unchecked Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        var error: String?
    }
}

/// Who may use the server: every request carries the token (header `Authorization: Bearer`,
/// the page's cookie, or `?token=` in the URL), on loopback too: another account on the machine
/// reaches a loopback port as easily as the user does. On loopback the request must also name a
/// loopback host (a DNS name another site points at 127.0.0.1 gets nothing: DNS rebinding).
/// Changes (POST, DELETE) must be JSON and, when the browser says where they come from
/// (Origin), come from the server's own page: another site's page in the same browser cannot
/// change the mixer.
struct ServeAccess: Sendable {
    let token: String
    let loopbackOnly: Bool

    /// The page's cookie: named after the token (two servers with two tokens on one host keep
    /// two cookies), HttpOnly (the page's script never holds it), SameSite=Strict (another
    /// site's page never sends it).
    var cookieName: String {
        var hash: UInt32 = 2_166_136_261
        for byte in token.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return "crosspoint-" + String(hash, radix: 16)
    }

    /// localhost, ::1, or an IPv4 literal 127.x.y.z (four numbers, not a name that starts so:
    /// `127.0.0.1.evil.example` is a name anyone can point anywhere).
    static func isLoopback(_ address: String) -> Bool {
        if address == "localhost" || address == "::1" { return true }
        let parts = address.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    static func tokenPath() -> String { PresetStore.configDirectory() + "/serve-token" }

    /// The token from a file the person gave.
    static func readToken(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError.file(path, "cannot read the token (\(String(cString: strerror(errno))))")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingSpaces()
        guard token.utf8.count >= 16, token.utf8.count <= 256, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x3B && $0 != 0x2C }) else {
            throw CommandError.file(path, "the token must be 16 to 256 printable characters without spaces, commas or semicolons")
        }
        return token
    }

    /// The stored token, made (random, mode 0600, in a 0700 folder) on first use.
    static func storedToken() throws -> String {
        let path = tokenPath()
        let directory = String(path.dropLast("/serve-token".count))
        try PrivateFiles.makeFolder(directory)
        if FileManager.default.fileExists(atPath: path) {
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
                throw CommandError.file(path, "is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
            }
            return try readToken(path)
        }
        // SystemRandomNumberGenerator reads the kernel's getrandom: fit for secrets.
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<24).map { _ in UInt8.random(in: 0...255, using: &random) }
        let token = bytes.map { String($0, radix: 16).padded(2).replacing(" ", with: "0") }.joined()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CommandError.file(path, "cannot store the token (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        let line = token + "\n"
        guard write(fd, line, line.utf8.count) == line.utf8.count else {
            throw CommandError.file(path, "cannot store the token (\(String(cString: strerror(errno))))")
        }
        return token
    }

    /// The token a request carries: its `Authorization: Bearer`, the page's cookie, or `?token=`.
    func given(_ request: Request) -> String? {
        if let bearer = request.headers[.authorization], bearer.hasPrefix("Bearer ") { return String(bearer.dropFirst(7)) }
        if let cookie = CookieHeader.value(cookieName, in: request.headers[values: .cookie]) { return cookie }
        return request.uri.queryParameters.get("token")
    }

    /// Nil when the request may go on; else the error to answer.
    func refusal(_ request: Request) -> APIError? {
        let authority = request.head.authority ?? ""
        if loopbackOnly {
            let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }.dropFirst()) : String(authority.split(separator: ":").first ?? "")
            guard ServeAccess.isLoopback(host) else {
                return APIError(403, "this server answers only to 127.0.0.1, localhost and [::1] (the request was for '\(host.printable)')", key: "host")
            }
        }
        // The page itself holds nothing secret: it loads without the token (and then says how
        // to open it), and asks the API with it.
        let isPage = request.method == .get && ServeAccess.pagePaths.contains(request.uri.path)
        if !isPage {
            let given = given(request)
            guard let given, ServeAccess.same(given, token) else {
                return APIError(401, given == nil ? "a token is needed: open the address `crosspoint serve` printed (it ends in ?token=...), or send Authorization: Bearer TOKEN; the token is in \(ServeAccess.tokenPath())" : "wrong token", key: "token")
            }
        }
        let changes = request.method == .post || request.method == .delete || request.method == .put || request.method == .patch
        if changes || request.uri.path == "/api/stream" {
            if let origin = request.headers[.origin], origin != "http://\(authority)", origin != "https://\(authority)" {
                return APIError(403, "requests from another site's page are refused (Origin \(origin.printable))", key: "origin")
            }
        }
        if changes, request.method != .delete {
            let type = request.headers[.contentType] ?? ""
            guard type.lowercased().hasPrefix("application/json") else {
                return APIError(415, "send JSON (Content-Type: application/json)", key: "body")
            }
        }
        return nil
    }

    /// A page opened with the right `?token=`: a redirect to the same page without it (out of
    /// the address bar and the history), setting the cookie the page's requests carry.
    func tokenRedirect(_ request: Request) -> Response? {
        guard request.method == .get, ServeAccess.pagePaths.contains(request.uri.path),
              let query = request.uri.queryParameters.get("token"), ServeAccess.same(query, token) else { return nil }
        let cookie = "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000"
        let rest = (request.uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") }
        let location = request.uri.path + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&"))
        return Response(status: .seeOther, headers: [.location: location, .setCookie: cookie, .cacheControl: "no-store"])
    }

    static let pagePaths: Set<String> = ["/", "/index.html", "/app.js", "/style.css"]

    /// Compares in time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = x.count ^ y.count
        for k in 0..<min(x.count, y.count) { difference |= Int(x[k] ^ y[k]) }
        return difference == 0
    }
}

/// Applies `ServeAccess` to every request, and answers every error (a route's, a missing
/// route, a body too large) as JSON.
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: ServeAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = access.refusal(request) { return ServeRoutes.reply(refusal) }
        if let redirect = access.tokenRedirect(request) { return redirect }
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return ServeRoutes.reply(error)
        } catch let error as HTTPError {
            let message = error.body ?? (error.status == .notFound ? "no such path: \(request.uri.path.printable)" : error.status.reasonPhrase)
            return ServeRoutes.reply(APIError(error.status.code, message, key: nil))
        } catch {
            return ServeRoutes.reply(APIError.from(error))
        }
    }
}

enum ServeRoutes {
    /// A body's bytes: a change of every key of the largest node (256 x 256) fits.
    static let bodyLimit = 8 << 20
    /// A body's JSON values, counted before it is decoded: a change set holds at most
    /// `SurfaceAPI.maximumParams` (every key of a 256 x 256 node, twice) and a few lists.
    static let valueLimit = SurfaceAPI.maximumParams + 4096

    static func reply(_ error: APIError) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        if error.status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: .init(code: error.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: error.json + "\n")))
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A file of the page: compiled in, or read from CROSSPOINT_WEB_DIR (working on the page).
    static func page(_ name: String, _ type: String, _ bytes: [UInt8]) -> Response {
        var body = bytes
        if let directory = ProcessInfo.processInfo.environment["CROSSPOINT_WEB_DIR"],
           let data = FileManager.default.contents(atPath: directory + "/" + name) {
            body = Array(data)
        }
        return Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache",
                                               .init("Content-Security-Policy")!: "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:",
                                               .init("X-Content-Type-Options")!: "nosniff"],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The body: one JSON object (strict JSON, RFC 8259: nothing before or after it) with
    /// exactly the `keys` given, no other.
    static func body(_ request: Request, keys: Set<String>) async throws -> JSONValue {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: bodyLimit)
        } catch {
            throw APIError(413, "the body is larger than \(bodyLimit >> 20) MiB", key: "body")
        }
        let values = buffer.withUnsafeReadableBytes { JSONSize.values(in: $0) }
        guard values <= valueLimit else {
            throw APIError(413, "the body holds more than \(valueLimit) JSON values: more than any change of any node", key: "body")
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(StrictJSON.self, from: Data(buffer: buffer)).value
        } catch {
            throw APIError(400, "the body is not JSON (\(StrictJSON.describe(error)))", key: "body")
        }
        guard case let .object(pairs) = value else {
            throw APIError(400, "the body must be a JSON object with \(keys.sorted().map { "\"\($0)\"" }.joined(separator: ", "))", key: "body")
        }
        if let unknown = pairs.map(\.0).first(where: { !keys.contains($0) }) {
            throw APIError(400, "unknown key '\(unknown.printable)' in the body; it takes \(keys.sorted().joined(separator: ", "))", key: unknown)
        }
        return value
    }

    static func name(_ request: Request) async throws -> String {
        guard case let .string(name) = try await body(request, keys: ["name"])["name"] else {
            throw APIError(400, "expected {\"name\": PRESET-NAME}", key: "name")
        }
        try PresetStore.check(name)
        return name
    }

    /// `{"app": APP, "to": DEVICE}`: what `crosspoint move APP --to DEVICE` takes (a stream's
    /// id or an application's name or process id; a device's name, description or id, or
    /// `default`), as text or a whole number.
    static func move(_ request: Request) async throws -> (app: String, to: String) {
        let body = try await body(request, keys: ["app", "to"])
        func word(_ key: String, _ example: String) throws -> String {
            switch body[key] {
            case let .string(text)? where !text.isEmpty && text.utf8.count <= 1024: return text
            case let .number(n)? where UInt32(exactly: n) != nil: return String(UInt32(exactly: n)!)
            default: throw APIError(400, "expected {\"app\": \"firefox\", \"to\": \"game\"}: \(key) is \(example)", key: key)
            }
        }
        return (try word("app", "a stream's id, an application's name or process id (see GET /api/apps)"),
                try word("to", "a sink's or a source's name, description or id, or \"default\""))
    }

    static func node(_ context: some RequestContext) throws -> String {
        guard let node = context.parameters.get("node"), !node.isEmpty, node.utf8.count <= 256 else {
            throw APIError(404, "name a node: /api/nodes/ID", key: "node")
        }
        return node
    }

    static func router(surface: Surface, store: PresetStore, access: ServeAccess) -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.middlewares.add(AccessMiddleware(access: access))

        router.get("/") { _, _ in page("index.html", "text/html; charset=utf-8", PackageResources.index_html) }
        router.get("/index.html") { _, _ in page("index.html", "text/html; charset=utf-8", PackageResources.index_html) }
        router.get("/app.js") { _, _ in page("app.js", "text/javascript; charset=utf-8", PackageResources.app_js) }
        router.get("/style.css") { _, _ in page("style.css", "text/css; charset=utf-8", PackageResources.style_css) }

        router.get("/api/status") { _, _ in
            let connected = surface.connected
            return json(JSONValue.object([("connected", .bool(connected)), ("daemon", .string(surface.remote ?? "default")),
                                          ("version", .string(crosspointVersion))]).compactText)
        }
        router.get("/api/params") { _, _ in json(Parameter.tableJSON.compactText) }
        router.get("/api/nodes") { _, _ in
            json(try await surface.perform { session in
                try? session.refresh()
                return NodeJSON.list(session)
            })
        }
        router.get("/api/nodes/:node") { _, context in
            let node = try node(context)
            return json(try await surface.perform { session in
                do { return try NodeJSON.document(session, node) } catch { throw APIError.from(error, key: "node") }
            })
        }
        router.post("/api/nodes/:node") { request, context in
            let node = try node(context)
            let body = try await body(request, keys: ["params"])
            return json(try await surface.perform { session in
                do { return try SurfaceAPI.change(body, node: node, session) } catch { throw APIError.from(error) }
            })
        }
        router.get("/api/nodes/:node/levels") { _, context in
            let node = try node(context)
            return json(try await surface.perform { session in
                do { return try SurfaceAPI.levels(node: node, session) } catch { throw APIError.from(error, key: "node") }
            })
        }
        router.post("/api/nodes/:node/save") { request, context in
            let node = try node(context)
            let name = try await name(request)
            return json(try await surface.perform { session in
                do { return try SurfaceAPI.save(name, to: store, node: node, session) } catch { throw APIError.from(error, key: "node") }
            })
        }
        router.post("/api/nodes/:node/load") { request, context in
            let node = try node(context)
            let name = try await name(request)
            return json(try await surface.perform { session in
                do { return try SurfaceAPI.load(name, from: store, node: node, session) } catch { throw APIError.from(error, key: "name") }
            })
        }
        router.post("/api/nodes/:node/learn") { request, context in
            let node = try node(context)
            let body = try await body(request, keys: ["key"])
            return json(try await surface.perform { session in
                do { return try SurfaceAPI.learn(body, node: node, session) } catch { throw APIError.from(error, key: "key") }
            })
        }
        router.get("/api/apps") { _, _ in
            json(try await surface.perform { session in
                do {
                    try session.refresh()
                    return try JSONText.encode(Apps.listing(session))
                } catch { throw APIError.from(error) }
            })
        }
        router.post("/api/apps/move") { request, _ in
            let (app, to) = try await move(request)
            return json(try await surface.perform { session in
                do {
                    try session.refresh()
                    let moved = try Apps.move(app, to: to, session)
                    surface.appsChanged()
                    return "{\"report\":\(NodeJSON.compact(moved.report)),\"said\":\(JSONValue.array(moved.lines.map(JSONValue.string)).compactText)}"
                } catch { throw APIError.from(error) }
            })
        }
        router.get("/api/presets") { _, _ in json(store.list()) }
        router.get("/api/presets/:name") { _, context in
            let name = context.parameters.get("name") ?? ""
            return json(try store.read(name))
        }
        router.delete("/api/presets/:name") { _, context in
            let name = context.parameters.get("name") ?? ""
            try store.delete(name)
            return json(JSONValue.object([("deleted", .string(name))]).compactText)
        }

        router.ws("/api/stream") { _, _ in .upgrade([:]) } onUpgrade: { inbound, outbound, _ in
            let (subscriber, messages) = surface.subscribe()
            defer { surface.unsubscribe(subscriber) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in messages { try await outbound.write(.text(text)) }
                }
                group.addTask {
                    for try await message in inbound.messages(maxSize: 4096) {
                        if case let .text(text) = message { surface.receive(text, from: subscriber) }
                    }
                }
                _ = try await group.next()
                group.cancelAll()
            }
        }
        return router
    }
}

/// Strict JSON through Foundation's decoder, as a `JSONValue` (the API's bodies; SPA-JSON,
/// which reads the node's own files, also takes PipeWire's relaxed syntax).
struct StrictJSON: Decodable {
    let value: JSONValue

    init(from decoder: any Decoder) throws { value = try JSONValue(from: decoder) }

    static func describe(_ error: any Error) -> String {
        if case let DecodingError.dataCorrupted(context) = error {
            return context.debugDescription.printable
        }
        return "unreadable"
    }
}
