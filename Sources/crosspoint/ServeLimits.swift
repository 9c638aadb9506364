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

enum ServeLimits {
    static let connectionsPerAddress = 16
    static let connections = 256
    static let headBytes = 16 * 1024
    /// 10 s; `CROSSPOINT_SERVE_HEAD_SECONDS` (1 to 10) shortens it, for the test that hits it.
    static let headSeconds: Int64 = shortened("CROSSPOINT_SERVE_HEAD_SECONDS", to: 10)
    /// 60 s; `CROSSPOINT_SERVE_IDLE_SECONDS` (1 to 60) shortens it, for the test that hits it.
    static let idleSeconds: Int64 = shortened("CROSSPOINT_SERVE_IDLE_SECONDS", to: 60)

    /// `seconds`, or fewer (1 or more) where the environment `variable` says so: only the
    /// tests that hit a time bound set one, to wait less than the bound itself.
    private static func shortened(_ variable: String, to seconds: Int64) -> Int64 {
        guard let text = getenv(variable), let shorter = Int64(String(cString: text)), (1...seconds).contains(shorter) else { return seconds }
        return shorter
    }
    static let headerFields = 100
    /// SwiftNIO's own limit, above ours: past it the connection would hang unanswered.
    static let parserHeaderFields = 1000

    /// Hummingbird's HTTP/1 server with WebSocket upgrade, each connection guarded.
    static func server(webSocketRouter: Router<BasicWebSocketRequestContext>) -> HTTPServerBuilder {
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
final class ConnectionCounter: Sendable {
    private let open = Mutex<(all: Int, by: [String: Int])>((0, [:]))

    /// Counts a new connection from `address`; false (not counted) when over a limit.
    func take(_ address: String) -> Bool {
        open.withLock { state in
            let mine = state.by[address, default: 0]
            guard state.all < ServeLimits.connections, mine < ServeLimits.connectionsPerAddress else { return false }
            state.all += 1
            state.by[address] = mine + 1
            return true
        }
    }

    func give(_ address: String) {
        open.withLock { state in
            state.all -= 1
            let mine = state.by[address, default: 1] - 1
            state.by[address] = mine > 0 ? mine : nil
        }
    }
}

/// A child channel with `ServeGuard` in front of what `inner` sets up.
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let counter: ConnectionCounter

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.pipeline.addHandler(ServeGuard(counter: counter)).flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Counts the connection, bounds its request heads in size and time, and passes every byte on.
final class ServeGuard: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let counter: ConnectionCounter
    private var scanner = RequestHeadScanner(limit: ServeLimits.headBytes, fieldLimit: ServeLimits.headerFields)
    private var address: String?
    private var timer: Scheduled<Void>?
    /// Closed by this handler (over a bound) or gone: nothing more is read.
    private var refused = false

    init(counter: ConnectionCounter) { self.counter = counter }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard address == nil, !refused else { return }
        let from = context.remoteAddress?.ipAddress ?? "?"
        guard counter.take(from) else {
            // Too many from there: closed before a byte is read, no answer.
            refused = true
            context.close(promise: nil)
            return
        }
        address = from
        arm(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let address { counter.give(address) }
        address = nil
        refused = true
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard scanner.state != .passive else {
            context.fireChannelRead(data)
            return
        }
        let buffer = unwrapInboundIn(data)
        let verdict = buffer.withUnsafeReadableBytes { scanner.feed($0) }
        switch verdict {
        case .fine:
            break
        case .tooLarge:
            refuse(context, 431, "Request Header Fields Too Large", "the request line and headers are larger than \(ServeLimits.headBytes / 1024) kB")
            return
        case .tooManyFields:
            refuse(context, 431, "Request Header Fields Too Large", "the request has more than \(ServeLimits.headerFields) header fields")
            return
        case let .malformed(reason):
            refuse(context, 400, "Bad Request", reason)
            return
        }
        if scanner.state == .passive {
            timer?.cancel()
            timer = nil
        } else if scanner.inHead {
            if timer == nil { arm(context) }
        } else {
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    /// The head timer: a head not finished in time (or nothing at all sent) closes the connection.
    private func arm(_ context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: .seconds(ServeLimits.headSeconds)) { [self] in
            timer = nil
            guard !refused, scanner.state != .passive else { return }
            refuse(loopBound.value, 408, "Request Timeout", "the request's head did not arrive within \(ServeLimits.headSeconds) s")
        }
    }

    /// Answers with an error (JSON, as every error of the API) and closes.
    private func refuse(_ context: ChannelHandlerContext, _ status: Int, _ phrase: String, _ message: String) {
        refused = true
        timer?.cancel()
        timer = nil
        let body = APIError(status, message, key: "request").json + "\n"
        let text = "HTTP/1.1 \(status) \(phrase)\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n" + body
        let buffer = context.channel.allocator.buffer(string: text)
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in context.close(promise: nil) }
    }
}
