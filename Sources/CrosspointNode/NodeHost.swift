import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// The owner of one node: assembles it and its parts in one place and tears them down in one
/// place, in reverse order, as PipeWire's modules do from one `struct impl` and one
/// `impl_destroy`. It holds the `FilterNode` (the filter, its ports, the hand-off to the
/// renderer, publishing), the node's one view of the graph (`GraphMirror`: one registry
/// listener for every part), and the parts (NodePart) in one list, in the order they are made
/// and told of things:
///
/// 1. `NodeMemory`: restores the saved state first (the others start from it), saves changes,
///    remembers and re-makes links;
/// 2. `VirtualDeviceHost`: the virtual devices, made from the restored state (`DeviceKind`);
/// 3. `OutputFollower`: output groups kept linked to their devices;
/// 4. `LevelPublisher`: the levels, while watched (`levels.watch`);
/// 5. `MIDIControlCenter`: MIDI control (`midi.learn`, what arrives, feedback);
/// 6. `SceneMotion`: scene recalls over time (`scene.recall`);
/// 7. `RateWatch`: the rate the data thread runs at.
///
/// The node tells its owner what happens (`FilterNode.host`); the owner hands it to every part
/// in the list's order, as swift-log fans a message out over its handlers: an accepted change
/// of the mixer, a change of the graph, a set-param's write-only requests (each to the part
/// that claims its key), ports renamed or removed. Whether a link is a part's is a question the
/// owner asks its parts. Runs on the main loop.
public final class NodeHost {
    public let node: FilterNode
    private var graph: GraphMirror?
    private var parts: [any NodePart] = []
    /// Called when the filter fails (its connection breaks): the module schedules its end.
    private let onFailure: (String) -> Void
    private var tornDown = false

    /// Makes the node on `core` (which must outlive it), then its parts.
    public init(core: OpaquePointer, configuration: NodeConfiguration, onFailure: @escaping (String) -> Void) throws(NodeError) {
        node = try FilterNode(core: core, configuration: configuration)
        self.onFailure = onFailure
        node.host = self
        let loop = node.loop
        let graph = GraphMirror(core: core, onEvent: { [unowned self] event in
            for part in self.parts { part.graphChanged(event) }
        })
        self.graph = graph
        // Always: besides the state file and remembered links, it keeps a renamed port's links.
        parts.append(NodeMemory(node: node, host: self, core: core, loop: loop,
                                persist: configuration.persistState, keepLinks: configuration.rememberLinks))
        // After the memory: the devices are made from the restored state.
        parts.append(VirtualDeviceHost(node: node, core: core, graph: graph))
        parts.append(OutputFollower(node: node, graph: graph))
        parts.append(LevelPublisher(node: node, loop: loop))
        parts.append(MIDIControlCenter(node: node, loop: loop))
        parts.append(SceneMotion(node: node, loop: loop))
        parts.append(RateWatch(node: node, loop: loop))
    }

    /// Destroys the parts (the last made first), the graph view, then the node.
    /// `connectionGone`: the connection is going, and what the parts made with it goes with it
    /// (the virtual devices): they let go of their proxies only.
    public func tearDown(connectionGone: Bool) {
        guard !tornDown else { return }
        tornDown = true
        for part in parts.reversed() { part.destroy(connectionGone: connectionGone) }
        graph?.destroy()
        graph = nil
        node.destroy()
        // After the node: it frees the crossings the parts handed the data thread.
        parts = []
    }

    // MARK: What the node tells its parts

    func mixerChanged(_ mixer: Mixer) {
        for part in parts { part.mixerChanged(mixer) }
    }

    /// Hands each write-only request of a set-param to the part that claims its key; returns
    /// the other entries, which go to the mixer.
    func takeRequests(_ entries: [PropsCodec.Entry]) -> [PropsCodec.Entry] {
        let (claimed, others) = PropsCodec.split(entries, claimed: parts.flatMap(\.claimedKeys).elementSet)
        for entry in claimed {
            parts.first { part in part.claimedKeys.contains { $0 == entry.key } }?.request(entry)
        }
        return others
    }

    /// True if one of the parts makes and keeps the link between these ports.
    func isLinkOfAPart(output: UInt32, input: UInt32) -> Bool {
        parts.contains { $0.ownsLink(output: output, input: input) }
    }

    func preparePorts(for mixer: Mixer) {
        for part in parts { part.preparePorts(for: mixer) }
    }

    /// True if a part links the new ports and finishes the replacement itself.
    func portsReplacing(_ pairs: [(old: String, new: String)]) -> Bool {
        var taken = false
        for part in parts where part.portsReplacing(pairs) { taken = true }
        return taken
    }

    func portsRemoved(_ names: [String]) {
        for part in parts { part.portsRemoved(names) }
    }

    func portGotBuffers(_ kind: PortGroup.Kind) {
        for part in parts { part.portGotBuffers(kind) }
    }

    func filterFailed(_ message: String) { onFailure(message) }
}
