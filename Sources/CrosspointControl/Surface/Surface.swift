#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointClient
import CrosspointCore
import Glibc
import Synchronization

/// The control surface's link to PipeWire: one thread that owns the connection (the client
/// objects are not thread-safe and deliver events only while their loop is iterated) and
/// does three things in turn, every 10 ms or as soon as events arrive:
///
/// - runs the jobs HTTP handlers hand it (`perform`), one at a time, in order, each with the
///   session;
/// - hears of changes through `GraphWatcher` (CrosspointClient): nodes, ports and links coming
///   and going in the registry (the graph is then read again, at most every 50 ms), and the
///   watched nodes' info (a Crosspoint node announces new params whenever its Props change,
///   whoever changed them); it pushes the node object again to the WebSockets that watch it,
///   when its text changed. So a `pw-cli set-param` reaches the page as a param event, not
///   by polling. The applications' streams (`Apps.surfaceView`: what plays and records where,
///   and the devices to move them to) are read again after a graph change that concerns them
///   (`Apps.graphSignature`: streams, sinks, sources and their links), at most every 250 ms and
///   only while a WebSocket is open, and pushed as an `apps` message when they differ;
/// - holds one level lease (33 ms) on every watched node, shared by every browser watching
///   it, and pushes the node's latest reading as it arrives.
///
/// When the daemon goes away it says so to every WebSocket, answers 503, and connects again
/// every second. (The surface as a whole: the header of SurfaceServer.swift.)
package final class Surface: @unchecked Sendable {
    package let remote: String?

    /// A WebSocket's end: what it watches, and where its messages go.
    package final class Subscriber: Sendable {
        package let id: Int
        package let messages: AsyncStream<String>.Continuation
        /// The node it watches, and whether it still needs that node's object.
        package let watch = Mutex<(node: UInt32?, fresh: Bool)>((nil, false))

        package init(id: Int, messages: AsyncStream<String>.Continuation) {
            self.id = id
            self.messages = messages
        }
    }

    private let jobs = Mutex<[@Sendable (Session?) -> Void]>([])
    private let subscribers = Mutex<[Int: Subscriber]>([:])
    private let nextSubscriber = Atomic<Int>(1)
    /// The last status, node list and apps message sent, for a WebSocket that just connected.
    private let latest = Mutex<(status: String, nodes: String, apps: String)>(("", "[]", ""))
    private let isConnected = Atomic<Bool>(false)

    // Owned by the surface's thread.
    private var session: Session?
    private var watcher: GraphWatcher?
    private var levels: [UInt32: LevelsWatcher] = [:]
    private var sent: [UInt32: String] = [:]
    private var graphPending = false
    private var refreshed = ContinuousClock.now
    private var dirty = Set<UInt32>()
    private var nodeList = ""
    /// The applications' streams: to be read again (the graph changed, a move was made), when
    /// they were last read, and the last `apps` message sent.
    private var appsPending = false
    private var appsRead = ContinuousClock.now
    private var appsMessage = ""
    /// `Apps.graphSignature` of the graph the apps were last read from.
    private var appsSignature = ""
    /// OSC (`serve --osc`): set before the thread starts; its followed nodes are watched too.
    package var osc: OSCServer?
    /// The OSC-followed nodes whose state OSC has had.
    private var oscPrimed = Set<UInt32>()

    /// How often a node publishes levels to the surface: 30 a second.
    package static let levelInterval = LevelWatch.fastestInterval

    package init(remote: String?) {
        self.remote = remote
    }

    package var connected: Bool { isConnected.load(ordering: .relaxed) }

    /// Starts the thread.
    package func start() {
        var thread = pthread_t()
        let me = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { argument in
            Unmanaged<Surface>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, me)
        pthread_detach(thread)
    }

    /// Runs `work` on the surface's thread with the session, and returns what it returns.
    /// Without a daemon: 503.
    package func perform<T: Sendable>(_ work: @escaping @Sendable (Session) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            jobs.withLock {
                $0.append { session in
                    guard let session else {
                        continuation.resume(throwing: APIError(503, "not connected to PipeWire (the daemon is away; retrying every second)", key: nil))
                        return
                    }
                    do {
                        continuation.resume(returning: try work(session))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }
    }

    /// Queues `work` on the surface's thread now, without waiting: jobs submitted from one
    /// thread run in the order submitted (OSC's stream of fader values, whose last must win).
    /// Without a daemon, or when `work` throws, `failed` gets the error.
    package func submit(_ work: @escaping @Sendable (Session) throws -> Void, failed: @escaping @Sendable (any Error) -> Void) {
        jobs.withLock {
            $0.append { session in
                guard let session else {
                    failed(APIError(503, "not connected to PipeWire (the daemon is away; retrying every second)", key: nil))
                    return
                }
                do { try work(session) } catch { failed(error) }
            }
        }
    }

    // MARK: WebSockets

    /// A new WebSocket's subscriber; it gets the status and the node list at once.
    package func subscribe() -> (Subscriber, AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(256))
        let subscriber = Subscriber(id: nextSubscriber.add(1, ordering: .relaxed).oldValue, messages: continuation)
        let (status, nodes, apps) = latest.withLock { ($0.status, $0.nodes, $0.apps) }
        if !status.isEmpty { continuation.yield(status) }
        continuation.yield(Surface.message("nodes", [("nodes", nodes)]))
        if !apps.isEmpty { continuation.yield(apps) }
        subscribers.withLock { $0[subscriber.id] = subscriber }
        return (subscriber, stream)
    }

    package func unsubscribe(_ subscriber: Subscriber) {
        subscribers.withLock { $0[subscriber.id] = nil }
        subscriber.messages.finish()
    }

    /// A message from a WebSocket: `{"watch": ID}` or `{"watch": null}`.
    package func receive(_ text: String, from subscriber: Subscriber) {
        guard text.utf8.count <= 1024, let message = JSONValue(parsing: text), case .object = message, let watch = message["watch"] else {
            subscriber.messages.yield(APIError(400, "expected {\"watch\": NODE-ID} or {\"watch\": null}", key: "watch").typed)
            return
        }
        switch watch {
        case .null:
            subscriber.watch.withLock { $0 = (nil, false) }
        case let .number(n) where UInt32(exactly: n) != nil:
            subscriber.watch.withLock { $0 = (UInt32(exactly: n), true) }
        default:
            subscriber.messages.yield(APIError(400, "watch: expected a node id (a whole number) or null", key: "watch").typed)
        }
    }

    /// `{"type": TYPE, key: value...}` where the values are JSON text already.
    package static func message(_ type: String, _ fields: [(String, String)]) -> String {
        "{\"type\":\"\(type)\"" + fields.map { ",\"\($0.0)\":\($0.1)" }.joined() + "}"
    }

    private func broadcast(_ text: String) {
        for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber.messages.yield(text) }
    }

    // MARK: The thread

    private func run() {
        var lastAttempt: ContinuousClock.Instant?
        while true {
            if session == nil {
                if lastAttempt.map({ ContinuousClock.now - $0 >= .seconds(1) }) ?? true {
                    lastAttempt = .now
                    connect()
                }
                if session == nil {
                    runJobs()
                    usleep(20_000)
                    continue
                }
            }
            do {
                try turn()
            } catch .disconnected {
                disconnect()
            } catch .cannotConnect {
                disconnect()
            } catch {
                // A node that went away while bound, a request the daemon refused: the next
                // turn goes on (the graph change that caused it is handled there).
                continue
            }
        }
    }

    private func connect() {
        do {
            let session = try Session(client: PipeWireClient(remote: remote))
            watcher = try GraphWatcher(session.client)
            self.session = session
            isConnected.store(true, ordering: .relaxed)
            publishStatus()
            sent.removeAll()
            graphPending = true
            appsPending = true
            appsSignature = ""
        } catch {
            session = nil
            watcher = nil
        }
    }

    private func disconnect() {
        levels.removeAll()
        watcher = nil
        session = nil
        sent.removeAll()
        appsMessage = ""
        latest.withLock { $0.apps = "" }
        isConnected.store(false, ordering: .relaxed)
        publishStatus()
    }

    private func publishStatus() {
        let status = Surface.message("status", [("connected", connected ? "true" : "false"),
                                                ("daemon", JSONValue.string(remote ?? "default").compactText)])
        latest.withLock { $0.status = status }
        broadcast(status)
    }

    private func runJobs() {
        let pending = jobs.withLock { jobs in defer { jobs.removeAll() }; return jobs }
        for job in pending { job(session) }
    }

    /// One turn: events, jobs, what is watched, what changed, levels.
    private func turn() throws(ClientError) {
        guard let session, let watcher else { return }
        try session.client.iterateOnce(milliseconds: 10)
        runJobs()

        // What the WebSockets watch, and who needs a node's object now.
        let watching = subscribers.withLock { Array($0.values) }.map { s in (s, s.watch.withLock { $0 }) }
        let watched = Set(watching.compactMap { $0.1.node })
        var oscNodes: [UInt32: String] = [:]
        for name in osc?.followedNodes ?? [] {
            if let target = try? session.target(name) { oscNodes[target.node.id] = name }
        }
        watcher.follow(watched.union(oscNodes.keys))
        for id in levels.keys where !watched.contains(id) {
            try? levels[id]?.release()
            levels[id] = nil
        }

        // Nodes, ports or links came or went: read the graph again (at most every 50 ms).
        if watcher.takeGraphChange() { graphPending = true }
        if graphPending, ContinuousClock.now - refreshed >= .milliseconds(50) {
            graphPending = false
            refreshed = .now
            try? session.refresh()
            publishNodes(session)
            dirty.formUnion(watched)
            let signature = Apps.graphSignature(session.graph)
            if signature != appsSignature {
                appsSignature = signature
                appsPending = true
            }
        }
        // The applications' streams, for the pages (none open: read when one connects).
        if appsPending, !watching.isEmpty, ContinuousClock.now - appsRead >= .milliseconds(250) {
            appsPending = false
            appsRead = .now
            publishApps(session)
        }
        dirty.formUnion(watcher.takeChangedNodes())

        // OSC subscribers: the followed nodes' keys that changed.
        if let osc {
            for (id, name) in oscNodes where dirty.contains(id) || !oscPrimed.contains(id) {
                if let target = try? session.target(name), let mixer = try? session.mixer(of: target) {
                    osc.nodeChanged(name, mixer)
                    oscPrimed.insert(id)
                }
                if !watched.contains(id) { dirty.remove(id) }
            }
            oscPrimed.formIntersection(oscNodes.keys)
        }

        // Push the watched nodes' objects that changed, and to whoever has not had one yet.
        let fresh = Set(watching.filter { $0.1.fresh }.compactMap { $0.1.node })
        for id in watched where dirty.contains(id) || fresh.contains(id) {
            dirty.remove(id)
            let text: String
            do {
                text = try NodeJSON.document(session, id)
            } catch {
                for (subscriber, watch) in watching where watch.node == id {
                    subscriber.messages.yield(Surface.message("gone", [("id", "\(id)")]))
                    // Only if it still watches this node: a page may have asked for another
                    // since `watching` was read (after a daemon restart it asks for its node's
                    // old id, then, once the list comes, for the new one).
                    subscriber.watch.withLock { if $0.node == id { $0 = (nil, false) } }
                }
                sent[id] = nil
                continue
            }
            let changed = sent[id] != text
            sent[id] = text
            let message = Surface.message("node", [("node", text)])
            for (subscriber, watch) in watching where watch.node == id && (changed || watch.fresh) {
                subscriber.messages.yield(message)
                subscriber.watch.withLock { if $0.node == id { $0.fresh = false } }
            }
        }
        for id in sent.keys where !watched.contains(id) { sent[id] = nil }

        // Levels: a lease on every watched node, the latest reading pushed.
        for id in watched where levels[id] == nil && sent[id] != nil {
            levels[id] = try? LevelsWatcher(session.client, node: id, interval: Surface.levelInterval)
        }
        for (id, lease) in levels {
            var latest: LevelReading?
            do {
                while let reading = try lease.next(within: 0) { latest = reading }
            } catch .disconnected {
                throw .disconnected
            } catch {
                levels[id] = nil
                continue
            }
            guard let latest else { continue }
            // Each ducking rule's reduction now, in dB (the page shows it on the strips it lowers).
            let ducking = "[" + latest.ducking.map { Level.json($0) }.joined(separator: ",") + "]"
            let message = Surface.message("levels", [("id", "\(id)"), ("interval", "\(latest.interval)"),
                                                     ("inputs", NodeJSON.levels(latest.inputs)),
                                                     ("outputs", NodeJSON.levels(latest.outputs)), ("duck", ducking)])
            for (subscriber, watch) in watching where watch.node == id { subscriber.messages.yield(message) }
        }
    }

    /// A job made a change the registry may not show (a move to the device a stream is on
    /// already changes only its target): the apps are read again at the next turn. Called on
    /// the surface's thread (from a job).
    package func appsChanged() {
        appsPending = true
        appsRead = .now - .seconds(1)
    }

    private func publishApps(_ session: Session) {
        guard let view = try? Apps.surfaceView(session) else { return }
        let message = Surface.message("apps", [("apps", NodeJSON.compact(view.apps)), ("sinks", NodeJSON.compact(view.sinks)),
                                               ("sources", NodeJSON.compact(view.sources)),
                                               ("defaultSink", NodeJSON.compact(view.defaultSink)),
                                               ("defaultSource", NodeJSON.compact(view.defaultSource))])
        guard message != appsMessage else { return }
        appsMessage = message
        latest.withLock { $0.apps = message }
        broadcast(message)
    }

    private func publishNodes(_ session: Session) {
        let list = NodeJSON.list(session)
        guard list != nodeList else { return }
        nodeList = list
        latest.withLock { $0.nodes = list }
        broadcast(Surface.message("nodes", [("nodes", list)]))
    }
}

extension APIError {
    /// As a WebSocket message.
    package var typed: String {
        Surface.message("error", [("error", JSONValue.string(message).compactText), ("key", key.map { JSONValue.string($0).compactText } ?? "null")])
    }
}
