// `crosspoint serve --osc PORT`: Open Sound Control over UDP beside the control surface, for
// TouchOSC, Open Stage Control or show software. The same keys and values as set-param and the
// API, through the same code: a message becomes a change set of `SurfaceAPI.change` (checked,
// sent, confirmed like `crosspoint param`), run on the surface's thread.
//
//   /crosspoint/NODE/KEY VALUE...     set KEY of NODE: a number (i, f, d, h), true/false (T, F),
//                                      a string as typed on the command line ("-6dB"), or several
//                                      values for a list (channel-map, input.position, midi.map)
//   a bundle                           its messages, applied together, one change set per node
//   /crosspoint/subscribe NODE [PORT]  the sender (at PORT, if given: TouchOSC listens on a port
//                                      of its own) gets NODE's keys now, then every change
//   /crosspoint/unsubscribe [NODE]     stops that (every node without one)
//   /crosspoint/token TOKEN            off loopback: the sender may send changes from now on
//
// Bad messages are ignored with a log line on standard error and a `/crosspoint/error REASON`
// back to the sender; nothing is changed. The packets are read by `OSC` (CrosspointCore,
// fuzzed). Bound to the surface's address: loopback by default; elsewhere the surface's token
// rules apply (a sender is heard once it sent the token).

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore
import Glibc
import NIOCore
import NIOPosix
import Synchronization

final class OSCServer: @unchecked Sendable {
    private let surface: Surface
    private let token: String?
    private var channel: Channel?

    /// Who gets changes: each subscriber's address and the nodes it follows.
    private let subscriptions = Mutex<[SocketAddress: Set<String>]>([:])
    /// Off loopback: the senders that gave the token.
    private let trusted = Mutex<Set<SocketAddress>>([])
    /// Changes waiting for the surface's thread, per node, each message's (or bundle's) pairs
    /// with its sender, in order.
    private let pending = Mutex<[String: [(pairs: [JSONValue], sender: SocketAddress)]]>([:])
    /// The last state sent to subscribers, per node (surface thread only).
    private var lastSent: [String: [String: OSCValue]] = [:]

    /// At most this many subscribers (a new one beyond that takes the place of another).
    static let maximumSubscribers = 64

    init(surface: Surface, token: String?) {
        self.surface = surface
        self.token = token
    }

    /// Binds the UDP port; returns the port bound.
    func start(host: String, port: Int) throws -> Int {
        let channel = try DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Handler(server: self)) } }
            .bind(host: host, port: port).wait()
        self.channel = channel
        surface.osc = self
        return channel.localAddress?.port ?? port
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let server: OSCServer
        init(server: OSCServer) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            var buffer = envelope.data
            let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
            server.receive(bytes, from: envelope.remoteAddress)
        }
    }

    // MARK: Receiving

    func receive(_ packet: [UInt8], from sender: SocketAddress) {
        let messages: [OSCMessage]
        do {
            messages = try OSC.messages(in: packet)
        } catch {
            refuse(error.description, to: sender)
            return
        }
        var changes: [(node: String, pairs: [JSONValue])] = []
        for message in messages {
            let parts = message.parts
            guard parts.count >= 2, parts[0] == "crosspoint" else {
                refuse("\(message.address.printable): addresses start with /crosspoint/", to: sender)
                continue
            }
            switch (parts.count, parts[1]) {
            case (2, "token"):
                guard let token, case let .string(given)? = message.arguments.first, message.arguments.count == 1,
                      Self.same(given, token) else {
                    refuse("/crosspoint/token: wrong token", to: sender)
                    continue
                }
                _ = trusted.withLock { $0.insert(sender) }
                continue
            default:
                break
            }
            guard heard(sender) else {
                refuse("\(message.address.printable): send /crosspoint/token TOKEN first (the server is not on loopback)", to: sender)
                continue
            }
            switch (parts.count, parts[1]) {
            case (2, "subscribe"):
                guard case let .string(node)? = message.arguments.first, (1...2).contains(message.arguments.count) else {
                    refuse("/crosspoint/subscribe: give a node name and, if replies go to another port, the port: /crosspoint/subscribe s:crosspoint i:9000", to: sender)
                    continue
                }
                var address = sender
                if message.arguments.count == 2 {
                    guard case let .int(port) = message.arguments[1], (1...65535).contains(port), let ip = sender.ipAddress,
                          let replyTo = try? SocketAddress(ipAddress: ip, port: Int(port)) else {
                        refuse("/crosspoint/subscribe: the port must be a whole number (i) from 1 to 65535", to: sender)
                        continue
                    }
                    address = replyTo
                }
                subscribe(address, to: node)
            case (2, "unsubscribe"):
                // /crosspoint/unsubscribe [NODE] [PORT]: what /crosspoint/subscribe made.
                var node: String?, address = sender
                for argument in message.arguments {
                    if case let .string(n) = argument { node = n }
                    if case let .int(port) = argument, let ip = sender.ipAddress,
                       let replyTo = try? SocketAddress(ipAddress: ip, port: Int(port)) { address = replyTo }
                }
                subscriptions.withLock { all in
                    if let node { all[address]?.remove(node) } else { all[address] = nil }
                    if all[address]?.isEmpty == true { all[address] = nil }
                }
            case (3, _):
                let node = String(parts[1]), key = String(parts[2])
                guard let value = Self.json(message.arguments) else {
                    refuse("\(message.address.printable): give a value (a number, T or F, a string, or several for a list)", to: sender)
                    continue
                }
                if let k = changes.firstIndex(where: { $0.node == node }) {
                    changes[k].pairs += [.string(key), value]
                } else {
                    changes.append((node, [.string(key), value]))
                }
            default:
                refuse("\(message.address.printable): expected /crosspoint/NODE/KEY, /crosspoint/subscribe or /crosspoint/unsubscribe", to: sender)
            }
        }
        for change in changes { queue(change.node, change.pairs, from: sender) }
    }

    /// Queues a node's change. Jobs run in the order queued (one event loop thread receives), so
    /// a fader's stream ends on its last value; what arrives while a change is being applied
    /// waits and goes as one change set (a key's last value), or, if that set is refused, message
    /// by message, so that a bad message refuses only itself.
    private func queue(_ node: String, _ pairs: [JSONValue], from sender: SocketAddress) {
        let isNew = pending.withLock { all -> Bool in
            if all[node] != nil {
                all[node]!.append((pairs, sender))
                return false
            }
            all[node] = [(pairs, sender)]
            return true
        }
        guard isNew else { return }
        surface.submit({ session in
            guard let waiting = self.pending.withLock({ all in defer { all[node] = nil }; return all[node] }) else { return }
            func apply(_ pairs: [JSONValue]) throws {
                _ = try SurfaceAPI.change(.object([("params", .array(pairs))]), node: node, session)
            }
            do {
                try apply(Self.merged(waiting.map(\.pairs)))
                return
            } catch where waiting.count > 1 {
                // One of them is bad: each on its own.
            } catch {
                self.refuse("/crosspoint/\(node.printable): \(APIError.from(error).message)", to: waiting[0].sender)
                return
            }
            for message in waiting {
                do { try apply(message.pairs) } catch {
                    self.refuse("/crosspoint/\(node.printable): \(APIError.from(error).message)", to: message.sender)
                }
            }
        }, failed: { error in
            let waiting = self.pending.withLock { $0.removeValue(forKey: node) } ?? []
            for message in waiting { self.refuse("/crosspoint/\(node.printable): \(APIError.from(error).message)", to: message.sender) }
        })
    }

    /// KEY, VALUE pairs of several messages as one list: each key once, at its last value, in the
    /// order keys first came.
    static func merged(_ lists: [[JSONValue]]) -> [JSONValue] {
        var keys: [String] = [], values: [String: JSONValue] = [:]
        for pairs in lists {
            var k = 0
            while k + 1 < pairs.count {
                if case let .string(key) = pairs[k] {
                    if values[key] == nil { keys.append(key) }
                    values[key] = pairs[k + 1]
                }
                k += 2
            }
        }
        return keys.flatMap { [JSONValue.string($0), values[$0]!] }
    }

    /// Whether the server hears `sender`: always on loopback without a token, else once it gave it.
    private func heard(_ sender: SocketAddress) -> Bool {
        token == nil || trusted.withLock { $0.contains(sender) }
    }

    /// Compares in constant time (the surface's token rule).
    private static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// An argument list as the API's JSON value: one argument as itself, several as a list.
    static func json(_ arguments: [OSCArgument]) -> JSONValue? {
        func one(_ a: OSCArgument) -> JSONValue? {
            switch a {
            case let .int(v): .number(Double(v))
            case let .float(v): .number(Double(v))
            case let .double(v): .number(v)
            case let .int64(v): .number(Double(v))
            case let .bool(v): .bool(v)
            case let .string(s): .string(s)
            case .blob, .none: nil
            }
        }
        let values = arguments.compactMap(one)
        guard values.count == arguments.count, !values.isEmpty else { return nil }
        return values.count == 1 ? values[0] : .array(values)
    }

    private func refuse(_ reason: String, to sender: SocketAddress) {
        printError("osc: ignored from \(sender): \(reason)")
        send([OSCMessage(address: "/crosspoint/error", arguments: [.string(reason)])], to: sender)
    }

    // MARK: Subscriptions and sending

    private func subscribe(_ sender: SocketAddress, to node: String) {
        subscriptions.withLock { all in
            if all[sender] == nil, all.count >= Self.maximumSubscribers, let other = all.keys.first { all[other] = nil }
            all[sender, default: []].insert(node)
        }
        // The node's keys now, from the surface's thread.
        Task {
            do {
                let state = try await surface.perform { session -> [String: OSCValue] in
                    let target = try session.target(node)
                    return OSCValue.state(of: try session.mixer(of: target))
                }
                send(OSCValue.messages(node: node, state), to: sender)
            } catch {
                self.refuse("/crosspoint/subscribe \(node.printable): \(APIError.from(error).message)", to: sender)
            }
        }
    }

    /// The nodes someone follows (the surface watches them).
    var followedNodes: Set<String> { subscriptions.withLock { $0.values.reduce(into: Set<String>()) { $0.formUnion($1) } } }

    /// The surface's thread: node `name` is now `mixer`; its subscribers get what changed.
    func nodeChanged(_ name: String, _ mixer: Mixer) {
        let state = OSCValue.state(of: mixer)
        defer { lastSent[name] = state }
        guard let before = lastSent[name] else { return }
        let changed = state.filter { before[$0.key] != $0.value }
        guard !changed.isEmpty else { return }
        let messages = OSCValue.messages(node: name, changed)
        for (address, nodes) in subscriptions.withLock({ $0 }) where nodes.contains(name) { send(messages, to: address) }
    }

    /// Sends `messages` in bundles that fit a datagram.
    private func send(_ messages: [OSCMessage], to address: SocketAddress) {
        guard let channel, !messages.isEmpty else { return }
        var start = 0
        while start < messages.count {
            var size = 16, end = start
            while end < messages.count, size + messages[end].bytes.count + 4 < 60_000 {
                size += messages[end].bytes.count + 4
                end += 1
            }
            end = max(end, start + 1)
            let packet = end - start == 1 ? messages[start].bytes : OSC.bundle(Array(messages[start..<end]))
            let buffer = channel.allocator.buffer(bytes: packet)
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
            start = end
        }
    }
}

/// A key's value as OSC sends it.
enum OSCValue: Equatable {
    case number(Double), bool(Bool), ints([Int]), names([String])

    /// Every readable key of `mixer` (a node over 1024 cross-points: not its cross-points) and
    /// `mute.master`.
    static func state(of mixer: Mixer) -> [String: OSCValue] {
        var state: [String: OSCValue] = ["mute.master": .bool(mixer.masterMute)]
        let crosspoints = mixer.inputs * mixer.outputs <= 1024
        for p in Parameter.all(for: mixer) where p.kind.family.access == .readWrite && (crosspoints || p.kind != .crosspoint) {
            switch mixer.value(of: p) {
            case let .number(v): state[p.key] = .number(v)
            case let .bool(v): state[p.key] = .bool(v)
            case let .ints(v): state[p.key] = .ints(v)
            case let .names(v): state[p.key] = .names(v)
            }
        }
        return state
    }

    static func messages(node: String, _ values: [String: OSCValue]) -> [OSCMessage] {
        values.sorted { $0.key < $1.key }.map { key, value in
            let arguments: [OSCArgument] = switch value {
            case let .number(v): [.float(Float(v))]
            case let .bool(v): [.bool(v)]
            case let .ints(v): v.map { .int(Int32(clamping: $0)) }
            case let .names(v): v.map { .string($0) }
            }
            return OSCMessage(address: "/crosspoint/\(node)/\(key)", arguments: arguments)
        }
    }
}
