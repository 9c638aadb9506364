// The control surface, `crosspoint serve`. It is the command line's own code (`Session`,
// `NodeView`, `ParamValue`, `Session.load`: this library) behind HTTP, so a change made on the
// page is checked, sent, confirmed and reported exactly as `crosspoint param` does it, and the
// node object the page draws is `show --json`'s. The page is served from here too: SwiftPM's
// `embedInCode` makes its files a `PackageResources` of this target only, and the routes that
// serve them are here.
//
//   browser ──HTTP──► Hummingbird router ──► AccessMiddleware (Host, token, Origin, JSON)
//      ▲                   │ handlers: perform { session in ... }  (a job, awaited)
//      │                   ▼
//      └──WebSocket── Surface thread ── owns PipeWireClient + Session, GraphWatcher,
//           (node, levels,             one LevelsWatcher per watched node
//            nodes, status)
//
// Here: the server, started and run until SIGINT or SIGTERM. Who may use it: `ServeAccess`
// (ServeAccess.swift), applied by `AccessMiddleware`; the routes: `ServeRoutes`; the one thread
// that owns PipeWire: `Surface` (Surface.swift); what the requests do: `SurfaceAPI`
// (SurfaceAPI.swift); the bounds before Hummingbird: ServeLimits.swift; OSC: OSCServer.swift.
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
// The page (`Surface/Web/`: index.html, app.js, style.css; compiled in with SwiftPM's `embedInCode`, or
// read from `CROSSPOINT_WEB_DIR` while working on it) draws only the cells in view (a 256 x 256
// grid scrolls), patches cells from each `node` message instead of rebuilding, animates meters
// in `requestAnimationFrame`, and coalesces its own changes to at most 30 requests a second,
// one in flight, the last value always sent.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Glibc
import Hummingbird
import Logging
import NIOCore

/// The control surface's servers (HTTP and WebSocket, and OSC when asked), as `crosspoint
/// serve` runs them.
package struct SurfaceServer {
    /// The daemon (nil: $PIPEWIRE_REMOTE, else pipewire-0).
    package let remote: String?
    /// The address to listen on, and the HTTP port (0 picks a free one).
    package let listen: String
    package let port: Int
    /// A file to read the token from instead of the stored one.
    package let tokenFile: String?
    /// The presets' folder (nil: `PresetStore.defaultDirectory()`).
    package let presets: String?
    /// The OSC port on the same address, if any (0 picks a free one).
    package let osc: Int?

    package init(remote: String?, listen: String, port: Int, tokenFile: String?, presets: String?, osc: Int?) {
        (self.remote, self.listen, self.port, self.tokenFile, self.presets, self.osc) = (remote, listen, port, tokenFile, presets, osc)
    }

    /// Serves until SIGINT or SIGTERM; throws when it cannot start (a port in use, an unknown
    /// address, an unreadable token).
    package func run() throws {
        let loopback = ServeAccess.isLoopback(listen)
        let token = try tokenFile.map(ServeAccess.readToken) ?? ServeAccess.storedToken()
        let access = ServeAccess(token: token, loopbackOnly: loopback)
        let surface = Surface(remote: remote)
        var oscLine = ""
        if let osc {
            let server = OSCServer(surface: surface, token: token)
            do {
                let bound = try server.start(host: listen, port: osc)
                let host = listen.contains(":") ? "[\(listen)]" : listen
                oscLine = "OSC: udp://\(host):\(bound) (send /crosspoint/token TOKEN first, then /crosspoint/NODE/KEY VALUE)\n"
            } catch {
                throw CommandError.invalid("cannot take OSC on \(listen) UDP port \(osc): \(SurfaceServer.plain(error))")
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
        let listen = self.listen, tokenFile = self.tokenFile, port = self.port
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
                finished.error = "cannot serve on \(listen) port \(port): \(SurfaceServer.plain(error, option: "--port"))"
            }
            finished.semaphore.signal()
        }
        finished.semaphore.wait()
        if let error = finished.error { throw CommandError.invalid(error) }
    }

    /// A server's start error as a person reads it: the system's reason, and what to do.
    package static func plain(_ error: any Error, option: String = "--osc") -> String {
        guard let io = error as? IOError else { return "\(error)" }
        switch io.errnoCode {
        case EADDRINUSE: return "the port is in use (another server, or a `crosspoint serve` already running); choose another with \(option), or 0 for any free one"
        case EADDRNOTAVAIL: return "this machine has no such address; use 127.0.0.1, ::1, 0.0.0.0 or one of its addresses (ip -brief address)"
        case EACCES: return "ports below 1024 need privileges; choose one from 1024 to 65535"
        default: return String(cString: strerror(io.errnoCode))
        }
    }

    private final class Finished: @unchecked Sendable {
        package let semaphore = DispatchSemaphore(value: 0)
        package var error: String?
    }
}
