import NIOCore

/// Counts the connection, bounds its request heads in size and time, and passes every byte on.
package final class ServeGuard: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer

    private let counter: ConnectionCounter
    private var scanner = RequestHeadScanner(limit: ServeLimits.headBytes, fieldLimit: ServeLimits.headerFields)
    private var address: String?
    private var timer: Scheduled<Void>?
    /// Closed by this handler (over a bound) or gone: nothing more is read.
    private var refused = false

    package init(counter: ConnectionCounter) { self.counter = counter }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    package func channelActive(context: ChannelHandlerContext) {
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

    package func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let address { counter.give(address) }
        address = nil
        refused = true
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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
