#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore
import Hummingbird
import HummingbirdWebSocket
import NIOCore

package enum ServeRoutes {
    /// A body's bytes: a change of every key of the largest node (256 x 256) fits.
    package static let bodyLimit = 8 << 20
    /// A body's JSON values, counted before it is decoded: a change set holds at most
    /// `SurfaceAPI.maximumParams` (every key of a 256 x 256 node, twice) and a few lists.
    package static let valueLimit = SurfaceAPI.maximumParams + 4096

    package static func reply(_ error: APIError) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        if error.status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: .init(code: error.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: error.json + "\n")))
    }

    package static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A file of the page: compiled in, or read from CROSSPOINT_WEB_DIR (working on the page).
    package static func page(_ name: String, _ type: String, _ bytes: [UInt8]) -> Response {
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
    package static func body(_ request: Request, keys: Set<String>) async throws -> JSONValue {
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

    package static func name(_ request: Request) async throws -> String {
        guard case let .string(name) = try await body(request, keys: ["name"])["name"] else {
            throw APIError(400, "expected {\"name\": PRESET-NAME}", key: "name")
        }
        try PresetStore.check(name)
        return name
    }

    /// `{"app": APP, "to": DEVICE}`: what `crosspoint move APP --to DEVICE` takes (a stream's
    /// id or an application's name or process id; a device's name, description or id, or
    /// `default`), as text or a whole number.
    package static func move(_ request: Request) async throws -> (app: String, to: String) {
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

    package static func node(_ context: some RequestContext) throws -> String {
        guard let node = context.parameters.get("node"), !node.isEmpty, node.utf8.count <= 256 else {
            throw APIError(404, "name a node: /api/nodes/ID", key: "node")
        }
        return node
    }

    package static func router(surface: Surface, store: PresetStore, access: ServeAccess) -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.middlewares.add(AccessMiddleware(access: access))

        router.get("/") { _, _ in page("index.html", "text/html; charset=utf-8", PackageResources.index_html) }
        router.get("/index.html") { _, _ in page("index.html", "text/html; charset=utf-8", PackageResources.index_html) }
        router.get("/app.js") { _, _ in page("app.js", "text/javascript; charset=utf-8", PackageResources.app_js) }
        router.get("/style.css") { _, _ in page("style.css", "text/css; charset=utf-8", PackageResources.style_css) }

        router.get("/api/status") { _, _ in
            let connected = surface.connected
            return json(JSONValue.object([("connected", .bool(connected)), ("daemon", .string(surface.remote ?? "default")),
                                          ("version", .string(CrosspointVersion.string))]).compactText)
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
        router.post("/api/nodes/:node/scenes") { request, context in
            let node = try node(context)
            guard case let .string(name) = try await body(request, keys: ["store"])["store"] else {
                throw APIError(400, "expected {\"store\": SCENE-NAME}", key: "store")
            }
            return json(try await surface.perform { session in
                do { return try SurfaceAPI.storeScene(name, node: node, session) } catch { throw APIError.from(error, key: "store") }
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
