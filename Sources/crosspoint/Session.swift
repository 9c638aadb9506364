import ArgumentParser
import CrosspointCore
import CrosspointClient
import CrosspointPipeWire
import Glibc

/// What the command line itself finds wrong; `CrosspointError` (values, indices, shapes) and
/// `ClientError` (the daemon) pass through as they are.
enum CommandError: Error, CustomStringConvertible {
    case unknownNode(String, crosspointNodes: [String])
    case notCrosspoint(String, id: UInt32)
    case whichNode([String])
    case unknownSink(String, sinks: [String])
    case file(String, String)
    case invalid(String)
    case notApplied(node: String, detail: String)

    var description: String {
        switch self {
        case let .unknownNode(token, nodes):
            "unknown node '\(token)'; " + (nodes.isEmpty
                ? "there is no Crosspoint node on this daemon"
                : "the Crosspoint nodes are: " + nodes.joined(separator: ", "))
        case let .notCrosspoint(token, id):
            "node '\(token)' (id \(id)) is not a Crosspoint node (it has no crosspoint.inputs property)"
        case let .whichNode(nodes):
            nodes.isEmpty ? "there is no Crosspoint node on this daemon"
                : "there are several Crosspoint nodes; name one: " + nodes.joined(separator: ", ")
        case let .unknownSink(token, sinks):
            "unknown sink '\(token)'; " + (sinks.isEmpty ? "this daemon has no Audio/Sink" : "the sinks are: " + sinks.joined(separator: ", "))
        case let .file(path, reason):
            "\(path): \(reason)"
        case let .invalid(reason):
            reason
        case let .notApplied(node, detail):
            "\(node) did not take the change (\(detail)); the daemon's log says why"
        }
    }
}

/// `--remote`, shared by every command that talks to PipeWire.
struct Connection: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The PipeWire daemon to talk to: a socket name such as pipewire-0 (default: $PIPEWIRE_REMOTE, else pipewire-0).",
        valueName: "name"))
    var remote: String?

    func connect() throws -> Session { try Session(client: PipeWireClient(remote: remote)) }
}

/// A Crosspoint node found in the graph, with its ports in order.
struct Target {
    let node: GraphNode
    let inputs: [GraphPort]
    let outputs: [GraphPort]

    /// Port names, falling back to the node's naming (`in_<channel>`) for ports not (yet) listed.
    func inputName(_ i: Int, _ mixer: Mixer) -> String { i < inputs.count ? inputs[i].name : "in_\(mixer.inputChannels[i])" }
    func outputName(_ j: Int, _ mixer: Mixer) -> String { j < outputs.count ? outputs[j].name : "out_\(mixer.outputChannels[j])" }
}

/// One connection to the daemon and what it showed when the command started.
final class Session {
    let client: PipeWireClient
    private(set) var graph: GraphSnapshot

    init(client: PipeWireClient) throws {
        self.client = client
        graph = try client.snapshot()
    }

    var crosspointNodes: [GraphNode] { graph.nodes.filter { $0.crosspointShape != nil } }

    private func label(_ node: GraphNode) -> String { "\(node.name) (id \(node.id))" }

    /// Finds a Crosspoint node by id, node.name or node.description; with no token, the only one.
    func target(_ token: String?) throws -> Target {
        let node: GraphNode
        if let token {
            guard let found = find(token, among: graph.nodes) else {
                throw CommandError.unknownNode(token, crosspointNodes: crosspointNodes.map(label))
            }
            node = found
        } else {
            guard crosspointNodes.count == 1 else { throw CommandError.whichNode(crosspointNodes.map(label)) }
            node = crosspointNodes[0]
        }
        guard node.crosspointShape != nil else { throw CommandError.notCrosspoint(token ?? node.name, id: node.id) }
        return Target(node: node, inputs: graph.ports(of: node.id, .input), outputs: graph.ports(of: node.id, .output))
    }

    /// A Crosspoint node's shape: from its Props (its port counts can change live), else
    /// from its `crosspoint.inputs` and `crosspoint.outputs` properties.
    func shape(of node: GraphNode) -> (inputs: Int, outputs: Int) {
        let props = try? client.props(ofNode: node.id)
        return props.flatMap { Mixer.shape(in: $0) } ?? node.crosspointShape ?? (0, 0)
    }

    /// Finds an Audio/Sink by id, node.name or node.description.
    func sink(_ token: String) throws -> GraphNode {
        let sinks = graph.nodes.filter(\.isSink)
        guard let sink = find(token, among: sinks) else { throw CommandError.unknownSink(token, sinks: sinks.map(label)) }
        return sink
    }

    private func find(_ token: String, among nodes: [GraphNode]) -> GraphNode? {
        if let id = UInt32(token), let node = nodes.first(where: { $0.id == id }) { return node }
        return nodes.first { $0.name == token } ?? nodes.first { $0.description == token }
    }

    /// The node's mixer as its Props describe it now.
    func mixer(of target: Target) throws -> Mixer {
        let props = try client.props(ofNode: target.node.id)
        let shape = Mixer.shape(in: props) ?? target.node.crosspointShape!
        // Ports that are leaving (fading out after a live resize) come last: take the first ones.
        func channels(_ ports: [GraphPort], _ count: Int) -> [String]? {
            let names = ports.compactMap(\.channel)
            return names.count >= count ? Array(names.prefix(count)) : nil
        }
        return try Mixer(
            inputs: shape.inputs, outputs: shape.outputs,
            inputChannels: channels(target.inputs, shape.inputs), outputChannels: channels(target.outputs, shape.outputs),
            props: props)
    }

    /// Reads the node's mixer, changes a copy with the mixer's own (validating) setters, sends
    /// the keys that differ, and checks that the node took them. Nothing is sent when `change`
    /// throws. Prints what changed.
    @discardableResult
    func change(_ target: Target, _ change: (inout Mixer) throws(CrosspointError) -> Void) throws -> Mixer {
        let before = try mixer(of: target)
        var after = before
        try change(&after)
        let changed = Parameter.all(for: before).filter { $0 != .channelMap && before.value(of: $0) != after.value(of: $0) }
        let mute: Bool? = before.masterMute != after.masterMute ? after.masterMute : nil
        guard !changed.isEmpty || mute != nil else {
            print("\(target.node.name): nothing to change")
            return after
        }
        try client.setProps(
            ofNode: target.node.id, changed.map { PropsEntry(key: $0.key, value: after.value(of: $0)) }, masterMute: mute)
        try verify(target, is: after)

        var lines = changed.map { p in
            (describe(p, target, after).map { "\(p.key) (\($0))" } ?? p.key)
                + ": \(show(before.value(of: p), p)) -> \(show(after.value(of: p), p))"
        }
        if let mute { lines.insert("master mute: \(mute ? "off -> on" : "on -> off")", at: 0) }
        let shown = 12
        for line in lines.prefix(shown) { print("\(target.node.name): \(line)") }
        if lines.count > shown { print("\(target.node.name): ... and \(lines.count - shown) more (\(lines.count) parameters changed)") }
        return after
    }

    /// Waits (up to 3 s: a node in another process applies a change after the daemon has
    /// passed it on) until the node's Props describe `expected`.
    private func verify(_ target: Target, is expected: Mixer) throws {
        let deadline = ContinuousClock.now + .seconds(3)
        while true {
            let now = try mixer(of: target)
            if now == expected { return }
            guard ContinuousClock.now < deadline else {
                guard now.inputs == expected.inputs, now.outputs == expected.outputs else {
                    throw CommandError.notApplied(node: target.node.name, detail: "its number of ports changed meanwhile")
                }
                let wrong = Parameter.all(for: now).filter { now.value(of: $0) != expected.value(of: $0) }
                throw CommandError.notApplied(node: target.node.name, detail: wrong.isEmpty
                    ? "the master mute or a channel name differs"
                    : "\(wrong.count) parameters differ, first \(wrong[0].key) = \(now.value(of: wrong[0]))")
            }
            usleep(50_000)
        }
    }

    /// What a key acts on, by port names (`in_FL -> out_FR`), for the lines a change prints.
    private func describe(_ p: Parameter, _ target: Target, _ mixer: Mixer) -> String? {
        switch p.kind {
        case .crosspoint: "\(target.inputName(p.input, mixer)) -> \(target.outputName(p.output, mixer))"
        case .inputGain, .inputMute: target.inputName(p.input, mixer)
        case .outputGain, .outputMute: target.outputName(p.output, mixer)
        default: nil
        }
    }

    private func show(_ value: ParameterValue, _ p: Parameter) -> String {
        switch value {
        case let .number(v) where p == .ramp: "\(Gain.format(v)) ms"
        case let .number(v) where p.kind.family.type == .int: Gain.format(v)
        case let .number(v): v == 0 ? "-inf" : "\(Gain.formatDecibels(v)) dB (\(Gain.format(decimal(Float(v)))))"
        case let .bool(b): b ? "on" : "off"
        default: value.description
        }
    }

    /// Re-reads the graph (after making links).
    func refresh() throws { graph = try client.snapshot() }
}
