import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire
import Glibc

/// What a node remembers: it restores its saved state when it starts, saves its changes
/// (atomically; every 200 ms while they keep coming; a failed save is retried, and the last
/// changes are saved when the node goes), records the links people make to its ports, re-makes
/// them when the peer appears again (a USB interface plugged back, a daemon restart) and
/// forgets a link a person removes. A node part (NodePart), the first: the others start from
/// the state it restores. Runs on the main loop and hears of the graph through the node's one
/// `GraphMirror` (its own tables of names: a link's ports must still be known when the link
/// goes).
final class NodeMemory: NodePart {
    private let node: FilterNode
    /// Asked whether a link is another part's (`NodeHost.isLinkOfAPart`).
    private unowned let host: NodeHost
    private let store: StateStore?
    private let keepLinks: Bool
    private let core: OpaquePointer
    private let loop: UnsafeMutablePointer<pw_loop>
    private var saveTimer: UnsafeMutablePointer<spa_source>?
    private var checkTimer: UnsafeMutablePointer<spa_source>?
    private var renameTimer: UnsafeMutablePointer<spa_source>?

    private(set) public var links: Set<RememberedLink> = []
    private var nodes: [UInt32: String] = [:]                       // id -> node.name
    /// id -> owner, port.name, and which port object it is: the daemon gives a freed id to the
    /// next object it makes (at once on 1.x), so an id alone does not say "the same port".
    private var ports: [UInt32: (node: UInt32, name: String, generation: UInt64)] = [:]
    private var portsSeen: UInt64 = 0
    private var live: [UInt32: (output: UInt32, input: UInt32)] = [:]  // link id -> port ids
    /// Links just removed, with the ports they joined (id and generation): settled after a moment.
    private var removedLinks: [(link: RememberedLink, output: PortRef, input: PortRef)] = []
    private struct PortRef { let id: UInt32; let generation: UInt64 }

    /// Whether the very port object `port` names is still there (not another one under its id).
    private func stillThere(_ port: PortRef) -> Bool { ports[port.id]?.generation == port.generation }
    /// Links asked for and not yet announced, with their proxies: a proxy is let go once its
    /// link exists (the link lingers) or the request is settled.
    private var requested: [(output: UInt32, input: UInt32, proxy: OpaquePointer)] = []

    init(node: FilterNode, host: NodeHost, core: OpaquePointer, loop: UnsafeMutablePointer<pw_loop>, persist: Bool, keepLinks: Bool) {
        self.node = node
        self.host = host
        self.core = core
        self.loop = loop
        self.keepLinks = keepLinks
        let name = node.configuration.nodeName
        var store: StateStore?
        if persist {
            do {
                store = try StateStore(nodeName: name)
            } catch {
                Log.warn("\(name): \(error); this node runs without saving its state (state.persist is ignored)")
            }
        }
        self.store = store
        if let store {
            let loaded = store.load(configured: node.configuration.mixer)
            if let note = loaded.note { Log.info("\(name): \(note)") }
            if let problem = loaded.problem { Log.warn("\(name): \(problem); starting from the module arguments") }
            if let state = loaded.state {
                do {
                    try node.update { m throws(CrosspointError) in m = try Mixer(preset: state.mixer) }
                    links = keepLinks ? state.links.elementSet : []
                    forgetLongAbsent()
                    Log.info("\(name): restored its state from \(store.file)")
                } catch {
                    Log.warn("\(name): the saved state does not apply (\(error)); starting from the module arguments")
                }
            }
        }
        let data = Unmanaged.passUnretained(self).toOpaque()
        saveTimer = cpshim_loop_add_timer(loop, { data, _ in NodeMemory.this(data).saveTimerFired() }, data)
        checkTimer = cpshim_loop_add_timer(loop, { data, _ in NodeMemory.this(data).settle() }, data)
        renameTimer = cpshim_loop_add_timer(loop, { data, _ in NodeMemory.this(data).finishRenames() }, data)
    }

    func mixerChanged(_ mixer: Mixer) { scheduleSave() }

    // The graph is watched even without state.links: a renamed port's links follow it.
    func graphChanged(_ event: GraphMirror.Event) {
        switch event {
        case let .added(global): globalAdded(global)
        case let .removed(id, _): globalRemoved(id: id)
        case .defaultsChanged: break
        }
    }

    /// Saves what is pending and lets go of its requests and timers (the same when the
    /// connection goes: the file is the memory's own).
    func destroy(connectionGone: Bool) {
        if let saveTimer { cpshim_loop_destroy_source(loop, saveTimer) }
        if let checkTimer { cpshim_loop_destroy_source(loop, checkTimer) }
        if let renameTimer { cpshim_loop_destroy_source(loop, renameTimer) }
        saveTimer = nil
        checkTimer = nil
        renameTimer = nil
        if dirty, !save() {
            Log.warn("\(node.configuration.nodeName): its last changes are not saved (\(lastFailure ?? "the save failed"))")
        }
        dropRequests { _ in true }
    }

    private static func this(_ data: UnsafeMutableRawPointer?) -> NodeMemory {
        Unmanaged<NodeMemory>.fromOpaque(data!).takeUnretainedValue()
    }

    // MARK: Saving

    /// How long after a change the state is written: the first change of a quiet node arms
    /// the timer, later ones do not push it back, so a steady stream of changes is written
    /// every 200 ms and a burst is one write.
    static let saveDelayMilliseconds: UInt64 = 200
    /// A failed save is tried again after 1 s, 2 s, 4 s, then every 5 s, until it succeeds.
    static func retryDelayMilliseconds(afterFailures failures: Int) -> UInt64 {
        failures >= 4 ? 5000 : 1000 << UInt64(max(failures, 1) - 1)
    }

    /// Changes not yet on disk.
    private var dirty = false
    private var saveArmed = false
    /// Saves that failed in a row, and the reasons already logged (each once).
    private var failures = 0
    private var lastFailure: String?
    private var loggedFailures: Set<String> = []

    private func scheduleSave() {
        guard store != nil else { return }
        dirty = true
        armSave(after: NodeMemory.saveDelayMilliseconds)
    }

    /// Arms the save timer unless it is armed already (a pending write or retry stands).
    private func armSave(after milliseconds: UInt64) {
        guard !saveArmed, let saveTimer else { return }
        saveArmed = cpshim_loop_arm_timer(loop, saveTimer, milliseconds) >= 0
    }

    private func saveTimerFired() {
        saveArmed = false
        if !save() { armSave(after: NodeMemory.retryDelayMilliseconds(afterFailures: failures)) }
    }

    /// Writes the state if it changed. A failure keeps it dirty (the caller retries) and is
    /// logged once per distinct reason until a save succeeds again.
    @discardableResult
    private func save() -> Bool {
        guard let store, dirty else { return true }
        let name = node.configuration.nodeName
        forgetLongAbsent()
        let state = NodeState(
            configured: NodeState.fingerprint(node.configuration.mixer), mixer: node.mixer.preset,
            links: links.sorted { $0.description < $1.description })
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        do {
            try store.save(state)
        } catch {
            failures = min(failures + 1, 1_000_000)
            let reason = error.description
            lastFailure = reason
            if loggedFailures.insert(reason).inserted {
                Log.warn("\(name): cannot save its state: \(reason); keeps the changes and retries (after 1, 2, 4, then every 5 s), logging a reason once")
            }
            return false
        }
        clock_gettime(CLOCK_MONOTONIC, &end)
        dirty = false
        if failures > 0 {
            Log.warn("\(name): saved its state again, after \(failures) failed attempt\(failures == 1 ? "" : "s")")
        }
        failures = 0
        lastFailure = nil
        loggedFailures = []
        Log.debug("\(name): saved its state in \((end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1_000_000) ms")
        return true
    }

    // MARK: Links

    private var ourID: UInt32? { node.nodeID }

    /// The remembered form of a live link, if one of its ends is ours and the link is the
    /// memory's to keep (`isOthers`).
    private func remembered(output: UInt32, input: UInt32) -> RememberedLink? {
        guard let ourID, let out = ports[output], let inp = ports[input] else { return nil }
        if host.isLinkOfAPart(output: output, input: input) { return nil }
        let link: RememberedLink
        if out.node == ourID, let peer = nodes[inp.node] {
            link = RememberedLink(port: out.name, peerNode: peer, peerPort: inp.name)
        } else if inp.node == ourID, let peer = nodes[out.node] {
            link = RememberedLink(port: inp.name, peerNode: peer, peerPort: out.name)
        } else {
            return nil
        }
        return isOthers(link) ? nil : link
    }

    /// A link another part of the node makes and removes: to one of the node's own virtual
    /// devices (VirtualDeviceHost). The memory neither remembers nor re-makes it (re-made from a
    /// memory older than the device, a link from an output into the node's own sink was a loop
    /// the host then cut). The output follower's links are told apart by the follower itself
    /// (`NodeHost.isLinkOfAPart` asks the parts): a person's link from an output that follows a device is
    /// remembered and re-made like any other.
    private func isOthers(_ link: RememberedLink) -> Bool {
        node.mixer.devices.contains(where: { $0.name == link.peerNode })
    }

    private func globalAdded(_ global: Registry.Global) {
        let id = global.id
        func value(_ key: String) -> String? { global.properties[key] }
        switch global.type {
        case "PipeWire:Interface:Node":
            if let name = value(PW_KEY_NODE_NAME) { nodes[id] = name }
        case "PipeWire:Interface:Port":
            guard let name = value(PW_KEY_PORT_NAME), let owner = value(PW_KEY_NODE_ID).flatMap({ UInt32($0) }) else { return }
            portsSeen &+= 1
            ports[id] = (owner, name, portsSeen)
            if owner == ourID { linkRenamed(port: id, name: name) }
            relink()
        case "PipeWire:Interface:Link":
            guard let output = value(PW_KEY_LINK_OUTPUT_PORT).flatMap({ UInt32($0) }),
                  let input = value(PW_KEY_LINK_INPUT_PORT).flatMap({ UInt32($0) }) else { return }
            live[id] = (output, input)
            dropRequests { $0.output == output && $0.input == input }
            if !renames.isEmpty {
                renameLinks.removeAll { $0.output == output && $0.input == input }
                if renameLinks.isEmpty && renames.allSatisfy({ $0.value.seen }) { finishRenames() }
            }
            if keepLinks, var link = remembered(output: output, input: input) {
                link.seen = NodeMemory.now()
                if links.update(with: link) == nil {
                    Log.debug("\(node.configuration.nodeName): remembers \(link)")
                    forgetLongAbsent()
                }
                scheduleSave()
            }
        default:
            break
        }
    }

    private func globalRemoved(id: UInt32) {
        if let link = live.removeValue(forKey: id) {
            // Whether a person removed it or its peer went away shows once the dust settles.
            if var remembered = remembered(output: link.output, input: link.input) {
                if links.contains(remembered) {
                    remembered.seen = NodeMemory.now()  // live until now
                    links.update(with: remembered)
                }
                if let output = ports[link.output], let input = ports[link.input] {
                    removedLinks.append((remembered, PortRef(id: link.output, generation: output.generation),
                                         PortRef(id: link.input, generation: input.generation)))
                }
                if let checkTimer { _ = cpshim_loop_arm_timer(loop, checkTimer, 300) }
            }
        }
        ports.removeValue(forKey: id)
        // A peer went away (its links may be announced gone before or after it): past the
        // limit of absent peers, the longest absent are forgotten.
        if nodes.removeValue(forKey: id) != nil, keepLinks, forgetLongAbsent() { scheduleSave() }
    }

    // MARK: Renamed and removed ports

    /// Renames under way: new port name -> the peers the old port was linked to (peer port id,
    /// whether our port is the output), and whether the new port has been announced.
    private var renames: [String: (peers: [(peer: UInt32, oursIsOutput: Bool)], seen: Bool)] = [:]
    /// Links asked for a renamed port and not yet announced.
    private var renameLinks: [(output: UInt32, input: UInt32)] = []

    /// Ports are being replaced by ports of new names: note the old ones' peers, rename the
    /// remembered links, and link each new port like its old one as soon as it is announced.
    func portsReplacing(_ pairs: [(old: String, new: String)]) -> Bool {
        for (old, new) in pairs {
            var peers: [(peer: UInt32, oursIsOutput: Bool)] = []
            if let oldID = portID(node: ourID, name: old) {
                for link in live.values {
                    if link.output == oldID { peers.append((link.input, true)) }
                    if link.input == oldID { peers.append((link.output, false)) }
                }
            }
            renames[new] = (peers, false)
            let renamed = links.filter { $0.port == old }
            for var link in renamed {
                links.remove(link)
                link.port = new
                links.insert(link)
            }
            if !renamed.isEmpty { scheduleSave() }
        }
        // Whatever happens, the new ports play within a second.
        if let renameTimer { _ = cpshim_loop_arm_timer(loop, renameTimer, 1000) }
        return true
    }

    /// A port of ours was announced: if it replaces a renamed one, link it to the same peers.
    private func linkRenamed(port id: UInt32, name: String) {
        guard let rename = renames[name], !rename.seen else { return }
        renames[name] = (rename.peers, true)
        for (peer, oursIsOutput) in rename.peers {
            guard let ourNode = ourID, let peerNode = ports[peer]?.node else { continue }
            let (output, input) = oursIsOutput ? (id, peer) : (peer, id)
            let (outputNode, inputNode) = oursIsOutput ? (ourNode, peerNode) : (peerNode, ourNode)
            guard let proxy = Link.create(on: core, outputNode: outputNode, outputPort: output,
                                          inputNode: inputNode, inputPort: input) else { continue }
            requested.append((output, input, proxy))
            renameLinks.append((output, input))
        }
        if renameLinks.isEmpty && renames.allSatisfy({ $0.value.seen }) { finishRenames() }
    }

    /// The new ports take over; the old ones go (with their links).
    private func finishRenames() {
        if let renameTimer { _ = cpshim_loop_arm_timer(loop, renameTimer, 0) }
        renames = [:]
        renameLinks = []
        node.finishReplacements()
    }

    /// The node removed ports (a person made it smaller): their links are forgotten, so a
    /// channel added later under the same name starts unlinked.
    func portsRemoved(_ names: [String]) {
        let gone = links.filter { names.contains($0.port) }
        guard !gone.isEmpty else { return }
        links.subtract(gone)
        Log.debug("\(node.configuration.nodeName): forgets \(gone.count) links of removed ports")
        scheduleSave()
    }

    /// Remembered links whose peer is absent, beyond `absentLimit`, are forgotten, the longest
    /// absent first: short-lived streams (a pw-cat per run) never come back.
    static let absentLimit = 64

    @discardableResult
    private func forgetLongAbsent() -> Bool {
        let absent = links.filter { peerPortID($0) == nil }
        guard absent.count > NodeMemory.absentLimit else { return false }
        let oldest = absent.sorted { ($0.seen ?? 0) < ($1.seen ?? 0) }.prefix(absent.count - NodeMemory.absentLimit)
        links.subtract(oldest)
        Log.debug("\(node.configuration.nodeName): forgets \(oldest.count) links of long-absent peers")
        return true
    }

    static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec)
    }

    /// A removed link whose two ports (the very same port objects) still exist was removed by a
    /// person: forget it. One whose peer went away (unplugged, restarted; a device that comes
    /// back has new ports) is kept, to be re-made when the peer returns.
    private func settle() {
        let pending = removedLinks
        removedLinks = []
        dropRequests { _ in true }
        for removal in pending where stillThere(removal.output) && stillThere(removal.input) {
            if links.remove(removal.link) != nil {
                Log.debug("\(node.configuration.nodeName): forgets \(removal.link)")
                scheduleSave()
            }
        }
        if forgetLongAbsent() { scheduleSave() }
        relink()
    }

    /// Forgets the requests that match, destroying their proxies (the links themselves linger).
    private func dropRequests(where match: ((output: UInt32, input: UInt32, proxy: OpaquePointer)) -> Bool) {
        for request in requested where match(request) { pw_proxy_destroy(request.proxy) }
        requested.removeAll(where: match)
    }

    private func portID(node owner: UInt32?, name: String) -> UInt32? {
        guard let owner else { return nil }
        return ports.first { $0.value.node == owner && $0.value.name == name }?.key
    }

    private func peerPortID(_ link: RememberedLink) -> UInt32? {
        let owners = nodes.filter { $0.value == link.peerNode }.map(\.key)
        return ports.first { owners.contains($0.value.node) && $0.value.name == link.peerPort }?.key
    }

    /// Makes every remembered link whose two ports exist and are not linked yet.
    private func relink() {
        for link in links where !isOthers(link) {
            guard let ours = portID(node: ourID, name: link.port), let peer = peerPortID(link) else { continue }
            let (output, input) = PortName.isInput(link.port) ? (peer, ours) : (ours, peer)
            if live.values.contains(where: { $0.output == output && $0.input == input })
                || requested.contains(where: { $0.output == output && $0.input == input }) { continue }
            if removedLinks.contains(where: { $0.link == link && stillThere($0.output) && stillThere($0.input) }) {
                continue  // just removed by a person, most likely: settle() decides
            }
            guard let outputNode = ports[output]?.node, let inputNode = ports[input]?.node,
                  let proxy = Link.create(on: core, outputNode: outputNode, outputPort: output,
                                          inputNode: inputNode, inputPort: input) else { continue }
            requested.append((output, input, proxy))
            Log.info("\(node.configuration.nodeName): re-made the link \(link)")
        }
    }
}
