import CrosspointCore
import CrosspointPipeWire

/// One part of a node: what the node does besides mixing (its memory, its virtual devices,
/// its outputs that follow a device, its levels, its MIDI control, its rate watch). A part is
/// made by the node's owner, `NodeHost`, after the `FilterNode`, and sits in the owner's one
/// list of parts; the owner hands every part, in the list's order, what happens to the node,
/// and destroys the parts in the reverse order (as PipeWire's modules do from one `struct impl`
/// and one `impl_destroy`; as swift-log fans a message out over a list of handlers).
///
/// Every requirement has a default that does nothing: a part implements what it uses. All of
/// it runs on the main loop. A part keeps the node and the graph view it is given (unowned:
/// the owner outlives its parts); it never replaces another part's hook.
protocol NodePart: AnyObject {
    /// The write-only keys (access `.writeOnly` in the parameter table: PropInfo lists them,
    /// Props does not) this part takes out of a set-param before the mixer sees the rest.
    var claimedKeys: [String] { get }
    /// A set-param carried `entry`, whose key is one of `claimedKeys`.
    func request(_ entry: PropsCodec.Entry)
    /// The node accepted a change of its mixer (a set-param, a preset, a restored state, MIDI
    /// once it rests): `mixer` is the state now published.
    func mixerChanged(_ mixer: Mixer)
    /// The node is about to add ports for `mixer`: what the data thread will read through
    /// them is made now, before the data thread's table of ports is swapped.
    func preparePorts(for mixer: Mixer)
    /// A port of the group `kind` got buffers: a link to it runs.
    func portGotBuffers(_ kind: PortGroup.Kind)
    /// The graph changed: the node's one `GraphMirror` has taken the change in already.
    func graphChanged(_ event: GraphMirror.Event)
    /// True if the link between these two ports is one this part makes and keeps itself
    /// (the memory leaves those to it).
    func ownsLink(output: UInt32, input: UInt32) -> Bool
    /// Live ports are being renamed (each old and new `port.name`): the new ones exist, the old
    /// ones still play. A part that links the new ones like the old ones returns true and calls
    /// `FilterNode.finishReplacements` when done; if none does, the replacement finishes at once.
    func portsReplacing(_ pairs: [(old: String, new: String)]) -> Bool
    /// Ports the node no longer has were removed: their `port.name`s.
    func portsRemoved(_ names: [String])
    /// Lets go of everything the part holds. `connectionGone`: the node's connection is going
    /// (the daemon shuts down, the connection broke), and what the part made with it goes with
    /// it: let go of proxies only.
    func destroy(connectionGone: Bool)
}

extension NodePart {
    var claimedKeys: [String] { [] }
    func request(_ entry: PropsCodec.Entry) {}
    func mixerChanged(_ mixer: Mixer) {}
    func preparePorts(for mixer: Mixer) {}
    func portGotBuffers(_ kind: PortGroup.Kind) {}
    func graphChanged(_ event: GraphMirror.Event) {}
    func ownsLink(output: UInt32, input: UInt32) -> Bool { false }
    func portsReplacing(_ pairs: [(old: String, new: String)]) -> Bool { false }
    func portsRemoved(_ names: [String]) {}
}
