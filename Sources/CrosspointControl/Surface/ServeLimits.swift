// The surface server's bounds, before a request reaches Hummingbird's router (RELIABILITY.md,
// "The servers' bounds", lists each with the test that hits it):
//
//   connections     at most `connectionsPerAddress` open at once from one address and
//                   `connections` in all; one more is closed at once, unanswered
//   a request head  at most `headBytes` (request line and headers): 431, closed
//   a slow head     a head not finished `headSeconds` after its first byte (or a connection
//                   that sends nothing that long): 408, closed
//   idle            a connection without a request for `idleSeconds`: closed (Hummingbird)
//   header fields   at most `headerFields`: 431, closed (SwiftNIO's parser, past its own
//                   limit, would leave the connection open unanswered)
//   bodies          `ServeRoutes.bodyLimit` bytes and `ServeRoutes.valueLimit` JSON values
//   WebSocket       messages of 4 kB (the router's `inbound.messages(maxSize:)`)
//
// `ServeGuard` sits first in every connection's pipeline, before SwiftNIO's HTTP parser: it
// reads the same bytes (`RequestHeadScanner`, RequestHeads.swift) and passes them on.

import Glibc
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

package enum ServeLimits {
    package static let connectionsPerAddress = 16
    package static let connections = 256
    package static let headBytes = 16 * 1024
    /// 10 s; `CROSSPOINT_SERVE_HEAD_SECONDS` (1 to 10) shortens it, for the test that hits it.
    package static let headSeconds: Int64 = shortened("CROSSPOINT_SERVE_HEAD_SECONDS", to: 10)
    /// 60 s; `CROSSPOINT_SERVE_IDLE_SECONDS` (1 to 60) shortens it, for the test that hits it.
    package static let idleSeconds: Int64 = shortened("CROSSPOINT_SERVE_IDLE_SECONDS", to: 60)

    /// `seconds`, or fewer (1 or more) where the environment `variable` says so: only the
    /// tests that hit a time bound set one, to wait less than the bound itself.
    private static func shortened(_ variable: String, to seconds: Int64) -> Int64 {
        guard let text = getenv(variable), let shorter = Int64(String(cString: text)), (1...seconds).contains(shorter) else { return seconds }
        return shorter
    }
    package static let headerFields = 100
    /// SwiftNIO's own limit, above ours: past it the connection would hang unanswered.
    package static let parserHeaderFields = 1000

    /// Hummingbird's HTTP/1 server with WebSocket upgrade, each connection guarded.
    package static func server(webSocketRouter: Router<BasicWebSocketRequestContext>) -> HTTPServerBuilder {
        let webSocketResponder = webSocketRouter.buildResponder()
        let counter = ConnectionCounter()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: .seconds(idleSeconds),
                         httpDecoderConfiguration: .init(maxHeaderFieldSize: headBytes, maxHeaderListSize: headBytes, maxHeaderFieldCount: parserHeaderFields)))
        return HTTPServerBuilder { responder in
            GuardedChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder,
                                                               configuration: configuration),
                           counter: counter)
        }
    }
}

/// Open connections per address.
package final class ConnectionCounter: Sendable {
    private let open = Mutex<(all: Int, by: [String: Int])>((0, [:]))

    /// Counts a new connection from `address`; false (not counted) when over a limit.
    package func take(_ address: String) -> Bool {
        open.withLock { state in
            let mine = state.by[address, default: 0]
            guard state.all < ServeLimits.connections, mine < ServeLimits.connectionsPerAddress else { return false }
            state.all += 1
            state.by[address] = mine + 1
            return true
        }
    }

    package func give(_ address: String) {
        open.withLock { state in
            state.all -= 1
            let mine = state.by[address, default: 1] - 1
            state.by[address] = mine > 0 ? mine : nil
        }
    }
}

/// A child channel with `ServeGuard` in front of what `inner` sets up.
package struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    package typealias Value = Inner.Value
    package let inner: Inner
    package let counter: ConnectionCounter

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.pipeline.addHandler(ServeGuard(counter: counter)).flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    package func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
