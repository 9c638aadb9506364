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
//   /crosspoint/token TOKEN            the surface's token: the sender (its address and port) is
//                                      heard from now on; first in a bundle, it admits the bundle
//
// Only the user controls the mix, on loopback too: a sender is heard once it sent the token
// from its address and port (at most `maximumTrusted` remembered, the longest silent forgotten
// first). A stranger gets nothing back, ever (no reply can be aimed at someone else's address
// with a forged source), and costs a parse and a count: refusals from strangers are logged at
// most once a second, with their count. A heard sender's bad packet is refused whole (a bundle
// applies all its messages or none) with one `/crosspoint/error REASON` naming the first bad
// message, never longer than `maximumReply` bytes. Datagrams are read whole up to 65,536 bytes.
// Subscriptions are bounded: `maximumSubscribers` addresses, `maximumNodesPerSubscriber` nodes
// each, only nodes there are. The packets are read by `OSC` (CrosspointCore, fuzzed).

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore
import NIOCore
import NIOPosix
import Synchronization

package final class OSCServer: @unchecked Sendable {
    private let surface: Surface
    private let token: String
    private var channel: Channel?

    /// Who gets changes: each subscriber's address and the nodes it follows.
    private let subscriptions = Mutex(OSCSubscribers(capacity: OSCServer.maximumSubscribers, nodesEach: OSCServer.maximumNodesPerSubscriber))
    /// The senders that gave the token, with when each was last heard (ContinuousClock).
    private let trusted = Mutex<[SocketAddress: ContinuousClock.Instant]>([:])
    /// Packets waiting for the surface's thread, in order: each one's changes by node, its
    /// sender, and what to call it in an error.
    private let pending = Mutex<[Packet]>([])
    /// Strangers' packets not yet logged, and when the last such line was written.
    private let strangers = Mutex<(count: Int, addresses: Set<SocketAddress>, logged: ContinuousClock.Instant?)>((0, [], nil))
    /// The last state sent to subscribers, per node (surface thread only).
    private var lastSent: [String: [String: OSCValue]] = [:]

    /// At most this many subscribers (a new one beyond that takes the place of the one that
    /// subscribed longest ago).
    package static let maximumSubscribers = 64
    /// At most this many nodes followed by one subscriber.
    package static let maximumNodesPerSubscriber = 16
    /// At most this many senders remembered as having given the token.
    package static let maximumTrusted = 256
    /// An error reply's most bytes.
    package static let maximumReply = 320

    private struct Packet {
        package var changes: [(node: String, pairs: [JSONValue])]
        package let sender: SocketAddress
        package let isBundle: Bool
    }

    package init(surface: Surface, token: String) {
        self.surface = surface
        self.token = token
    }

    /// Binds the UDP port; returns the port bound.
    package func start(host: String, port: Int) throws -> Int {
        // No SO_REUSEADDR: on UDP it lets a second server bind the same port and take half the
        // packets; a port in use is an error said plainly (SurfaceServer.plain).
        let channel = try DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // Whole datagrams: OSC's largest packet (a UDP datagram is at most 65,507 bytes).
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: OSC.maximumPacket))
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Handler(server: self)) } }
            .bind(host: host, port: port).wait()
        self.channel = channel
        surface.osc = self
        return channel.localAddress?.port ?? port
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        package typealias InboundIn = AddressedEnvelope<ByteBuffer>
        package let server: OSCServer
        package init(server: OSCServer) { self.server = server }

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            var buffer = envelope.data
            let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
            server.receive(bytes, from: envelope.remoteAddress)
        }
    }

    // MARK: Receiving

    package func receive(_ packet: [UInt8], from sender: SocketAddress) {
        let messages: [OSCMessage]
        do {
            messages = try OSC.messages(in: packet)
        } catch {
            if heard(sender) { refuse(error.description, to: sender) } else { stranger(sender) }
            return
        }
        // The token, alone or first in a bundle, admits the sender; anything else from a
        // sender that has not given it is a stranger's.
        var rest = messages[...]
        if let first = rest.first, first.address == "/crosspoint/token" {
            guard case let .string(given)? = first.arguments.first, first.arguments.count == 1, ServeAccess.same(given, token) else {
                if heard(sender) { refuse("/crosspoint/token: wrong token", to: sender) } else { stranger(sender) }
                return
            }
            trust(sender)
            rest = rest.dropFirst()
        }
        guard heard(sender) else {
            stranger(sender)
            return
        }
        guard !rest.isEmpty else { return }
        let isBundle = messages.count > 1
        // Read every message before acting on any: a bad one refuses the packet whole.
        var changes: [(node: String, pairs: [JSONValue])] = []
        var controls: [() -> Void] = []
        for message in rest {
            let parts = message.parts
            let bad = { (reason: String) in
                self.refuse((isBundle ? "the bundle is refused, nothing in it applied: " : "") + "\(message.address.printable): \(reason)", to: sender)
            }
            guard parts.count >= 2, parts[0] == "crosspoint" else {
                return bad("addresses start with /crosspoint/")
            }
            switch (parts.count, parts[1]) {
            case (2, "token"):
                return bad("the token goes first")
            case (2, "subscribe"):
                guard case let .string(node)? = message.arguments.first, (1...2).contains(message.arguments.count) else {
                    return bad("give a node name and, if replies go to another port, the port: /crosspoint/subscribe s:crosspoint i:9000")
                }
                var address = sender
                if message.arguments.count == 2 {
                    guard case let .int(port) = message.arguments[1], (1...65535).contains(port), let ip = sender.ipAddress,
                          let replyTo = try? SocketAddress(ipAddress: ip, port: Int(port)) else {
                        return bad("the port must be a whole number (i) from 1 to 65535")
                    }
                    address = replyTo
                }
                controls.append { self.subscribe(address, to: node, from: sender) }
            case (2, "unsubscribe"):
                // /crosspoint/unsubscribe [NODE] [PORT]: what /crosspoint/subscribe made.
                var node: String?, address = sender
                for argument in message.arguments {
                    if case let .string(n) = argument { node = n }
                    if case let .int(port) = argument, let ip = sender.ipAddress,
                       let replyTo = try? SocketAddress(ipAddress: ip, port: Int(port)) { address = replyTo }
                }
                controls.append {
                    self.subscriptions.withLock { $0.remove(node, for: address) }
                }
            case (3, _):
                let node = String(parts[1]), key = String(parts[2])
                guard let value = Self.json(message.arguments) else {
                    return bad("give a value (a number, T or F, a string, or several for a list)")
                }
                if let k = changes.firstIndex(where: { $0.node == node }) {
                    changes[k].pairs += [.string(key), value]
                } else {
                    changes.append((node, [.string(key), value]))
                }
            default:
                return bad("expected /crosspoint/NODE/KEY, /crosspoint/subscribe or /crosspoint/unsubscribe")
            }
        }
        if changes.isEmpty {
            for control in controls { control() }
        } else {
            queue(Packet(changes: changes, sender: sender, isBundle: isBundle), then: controls)
        }
    }

    /// Queues a packet's changes. Jobs run in the order queued (one event loop thread
    /// receives), so a fader's stream ends on its last value; what arrives while a change is
    /// being applied waits and goes as one change set per node (a key's last value) when every
    /// packet in it is good, or packet by packet, each whole or not at all, so that a bad packet
    /// refuses only itself.
    private func queue(_ packet: Packet, then controls: [() -> Void]) {
        let isFirst = pending.withLock { all -> Bool in
            all.append(packet)
            return all.count == 1
        }
        guard isFirst else {
            for control in controls { control() }
            return
        }
        surface.submit({ session in
            let waiting = self.pending.withLock { all in defer { all.removeAll() }; return all }
            guard !waiting.isEmpty else { return }
            var nodes: [String] = [], lists: [String: [[JSONValue]]] = [:]
            for packet in waiting {
                for change in packet.changes {
                    if lists[change.node] == nil { nodes.append(change.node) }
                    lists[change.node, default: []].append(change.pairs)
                }
            }
            let merged = nodes.map { ($0, Self.merged(lists[$0] ?? [])) }
            if (try? Self.check(merged, session)) != nil {
                for (node, pairs) in merged {
                    do { try Self.apply(node, pairs, session) } catch {
                        self.refuse("/crosspoint/\(node.printable): \(APIError.from(error).message)", to: waiting[0].sender)
                    }
                }
                return
            }
            for packet in waiting {
                let all = packet.changes.map { ($0.node, $0.pairs) }
                do {
                    try Self.check(all, session)
                } catch let error as Refusal {
                    self.refuse((packet.isBundle ? "the bundle is refused, nothing in it applied: " : "") + error.reason, to: packet.sender)
                    continue
                } catch {
                    continue
                }
                for (node, pairs) in all {
                    do { try Self.apply(node, pairs, session) } catch {
                        self.refuse("/crosspoint/\(node.printable): \(APIError.from(error).message)", to: packet.sender)
                    }
                }
            }
        }, failed: { error in
            let waiting = self.pending.withLock { all in defer { all.removeAll() }; return all }
            for packet in waiting { self.refuse("/crosspoint: \(APIError.from(error).message)", to: packet.sender) }
        })
        for control in controls { control() }
    }

    private struct Refusal: Error { let reason: String }

    /// Checks each node's change against the node as it is, sending nothing; throws the first
    /// refusal, naming its message.
    private static func check(_ changes: [(String, [JSONValue])], _ session: Session) throws {
        for (node, pairs) in changes {
            do {
                try SurfaceAPI.check(.object([("params", .array(pairs))]), node: node, session)
            } catch {
                let api = APIError.from(error)
                // The message's address, then why (which names the key already, or not).
                let key = api.key.map { "/" + $0.printable } ?? ""
                var message = api.message
                if let k = api.key, message.hasPrefix(k + ": ") { message.removeFirst(k.count + 2) }
                throw Refusal(reason: "/crosspoint/\(node.printable)\(key): \(message)")
            }
        }
    }

    private static func apply(_ node: String, _ pairs: [JSONValue], _ session: Session) throws {
        _ = try SurfaceAPI.change(.object([("params", .array(pairs))]), node: node, session)
    }

    /// KEY, VALUE pairs of several messages as one list: each key once, at its last value, in the
    /// order keys first came.
    package static func merged(_ lists: [[JSONValue]]) -> [JSONValue] {
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

    /// Whether `sender` gave the token (and when it was last heard, now).
    private func heard(_ sender: SocketAddress) -> Bool {
        trusted.withLock { all in
            guard all[sender] != nil else { return false }
            all[sender] = .now
            return true
        }
    }

    /// Remembers `sender` as having given the token; past the bound, the longest silent goes.
    private func trust(_ sender: SocketAddress) {
        trusted.withLock { all in
            if all[sender] == nil, all.count >= Self.maximumTrusted, let oldest = all.min(by: { $0.value < $1.value })?.key {
                all[oldest] = nil
            }
            all[sender] = .now
        }
    }

    /// A stranger's packet: counted, never answered; the count is logged at most once a second.
    private func stranger(_ sender: SocketAddress) {
        let line = strangers.withLock { state -> String? in
            state.count += 1
            if state.addresses.count < 1000 { state.addresses.insert(sender) }
            let now = ContinuousClock.now
            if let logged = state.logged, now - logged < .seconds(1) { return nil }
            defer { state = (0, [], now) }
            return "osc: ignored \(state.count) packet\(state.count == 1 ? "" : "s") from \(state.addresses.count) address\(state.addresses.count == 1 ? "" : "es") that did not send /crosspoint/token TOKEN first"
        }
        if let line { printError(line) }
    }

    /// An argument list as the API's JSON value: one argument as itself, several as a list.
    package static func json(_ arguments: [OSCArgument]) -> JSONValue? {
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

    /// A heard sender's refused packet: a log line and one short error back.
    private func refuse(_ reason: String, to sender: SocketAddress) {
        printError("osc: ignored from \(sender): \(reason)")
        var text = reason
        while text.utf8.count > Self.maximumReply - 48 { text = String(text.dropLast(16)) + "…" }
        send([OSCMessage(address: "/crosspoint/error", arguments: [.string(text)])], to: sender)
    }

    // MARK: Subscriptions and sending

    /// Subscribes `address` (the sender's, or another port of its machine) to `node`, if the
    /// node is there and the bounds allow; the node's keys go there at once.
    private func subscribe(_ address: SocketAddress, to node: String, from sender: SocketAddress) {
        Task {
            do {
                let state = try await surface.perform { session -> [String: OSCValue] in
                    let target = try session.target(node)
                    return OSCValue.state(of: try session.mixer(of: target))
                }
                let added = subscriptions.withLock { $0.add(node, for: address) }
                if case let .replaced(oldest) = added {
                    printError("osc: \(Self.maximumSubscribers) subscribers: \(oldest) no longer hears changes (it subscribed longest ago)")
                }
                if added == .tooManyNodes {
                    refuse("/crosspoint/subscribe \(node.printable): at most \(Self.maximumNodesPerSubscriber) nodes a subscriber: unsubscribe one first", to: sender)
                    return
                }
                send(OSCValue.messages(node: node, state), to: address)
            } catch {
                self.refuse("/crosspoint/subscribe \(node.printable): \(APIError.from(error).message)", to: sender)
            }
        }
    }

    /// The nodes someone follows (the surface watches them).
    package var followedNodes: Set<String> { subscriptions.withLock { $0.followed } }

    /// The surface's thread: node `name` is now `mixer`; its subscribers get what changed.
    package func nodeChanged(_ name: String, _ mixer: Mixer) {
        let state = OSCValue.state(of: mixer)
        defer { lastSent[name] = state }
        guard let before = lastSent[name] else { return }
        let changed = state.filter { before[$0.key] != $0.value }
        guard !changed.isEmpty else { return }
        let messages = OSCValue.messages(node: name, changed)
        for address in subscriptions.withLock({ $0.following(name) }) { send(messages, to: address) }
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
