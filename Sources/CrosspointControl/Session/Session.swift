import CrosspointClient
import CrosspointCore
import CrosspointPipeWire
import Glibc

/// One connection to the daemon and what it showed when the command started: every command
/// that talks to PipeWire works through one, and so does the control surface's thread
/// (`Surface`) and, through it, OSC.
package final class Session {
    package let client: PipeWireClient
    package private(set) var graph: GraphSnapshot

    package init(client: PipeWireClient) throws {
        self.client = client
        graph = try client.snapshot()
    }

    // MARK: Finding nodes

    package var crosspointNodes: [GraphNode] { graph.nodes.filter { $0.crosspointShape != nil } }

    package func label(_ node: GraphNode) -> String { "\(node.name.printable) (id \(node.id))" }

    /// Finds a Crosspoint node by id, node.name or node.description; with no token, the only one.
    package func target(_ typed: String?) throws -> Target {
        let node: GraphNode
        let token = typed.map(CommandLineWords.restore)
        if let token {
            guard let found = find(token, among: graph.nodes) else {
                let (ordered, close) = NameSuggestions.rank(token, crosspointNodes) { [$0.name, $0.description] }
                throw CommandError.unknownNode(token, crosspointNodes: ordered.map(label),
                                               suggestion: NameSuggestions.phrase(close.map { $0.name.printable }))
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
    package func shape(of node: GraphNode) -> (inputs: Int, outputs: Int) {
        let props = try? client.props(ofNode: node.id)
        return props.flatMap { Mixer.shape(in: $0) } ?? node.crosspointShape ?? (0, 0)
    }

    /// Finds an Audio/Sink by id, node.name or node.description.
    package func sink(_ typed: String) throws -> GraphNode {
        let token = CommandLineWords.restore(typed)
        let sinks = graph.nodes.filter(\.isSink)
        guard let sink = find(token, among: sinks) else { throw unknownSink(token) }
        return sink
    }

    /// The error for a sink that is not there: the sinks closest to `token` first, and "did you mean".
    package func unknownSink(_ token: String) -> CommandError {
        let (ordered, close) = NameSuggestions.rank(token, graph.nodes.filter(\.isSink)) { [$0.name, $0.description] }
        return .unknownSink(token, sinks: ordered.map(label), suggestion: NameSuggestions.phrase(close.map { $0.name.printable }))
    }

    /// The node `token` names among `nodes`: by id, else node.name, else node.description.
    package func find(_ token: String, among nodes: [GraphNode]) -> GraphNode? {
        if let id = UInt32(token), let node = nodes.first(where: { $0.id == id }) { return node }
        return nodes.first { $0.name == token } ?? nodes.first { $0.description == token }
    }

    /// The node's mixer as its Props describe it now.
    package func mixer(of target: Target) throws -> Mixer {
        let props = try client.props(ofNode: target.node.id)
        let shape = Mixer.shape(in: props) ?? target.node.crosspointShape!
        // Ports that are leaving (fading out after a live resize) come last: take the first ones.
        func channels(_ ports: [GraphPort], _ count: Int) -> [String]? {
            let names = ports.compactMap(\.channel)
            return names.count >= count ? Array(names.prefix(count)) : nil
        }
        do {
            return try Mixer(
                inputs: shape.inputs, outputs: shape.outputs,
                inputChannels: channels(target.inputs, shape.inputs), outputChannels: channels(target.outputs, shape.outputs),
                props: props)
        } catch {
            throw CommandError.from(error, nil)
        }
    }

    // MARK: Changing a node

    /// Reads the node's mixer, changes a copy with the mixer's own (validating) setters, sends
    /// the keys that differ, and checks that the node took them. Nothing is sent when `change`
    /// throws. Reports what changed.
    ///
    /// - `exact`: any difference is a change. Otherwise (a level typed in dB) a gain whose
    ///   level in dB is the same at the report's 0.1 dB is left as it is: nothing audible would
    ///   change.
    /// - `keys`: the keys to send (a resize, a rename, `param`), in this order, asked once
    ///   `change` has run; by default the keys that differ between the mixer before and after.
    @discardableResult
    package func change(
        _ target: Target, exact: Bool = true, keys: (() -> [Parameter])? = nil, report: Reporter,
        _ change: (inout Mixer) throws -> Void
    ) throws -> Mixer {
        let before = try mixer(of: target)
        var after = before
        do {
            try change(&after)
        } catch let error as CrosspointError {
            throw CommandError.from(error, before)
        }
        var unchanged: [String] = []
        var sent: [Parameter]
        if let keys {
            var seen = Set<Parameter>()
            // A key given twice is sent once, where it was given last.
            let ordered = keys().reversed().filter { seen.insert($0).inserted }.reversed()
            // A key the node no longer has once the call is applied (`gain.out.3`, then
            // `outputs 2`) would change nothing: it is left out.
            sent = ordered.filter { p in
                exists(p, in: after) && !(exists(p, in: before) && before.value(of: p) == after.value(of: p))
            }
        } else {
            // A rule's own keys (`duck.depth.0`) go with `duck`, which carries them.
            sent = Parameter.all(for: before).filter {
                $0 != .channelMap && !$0.kind.family.hasRule && before.value(of: $0) != after.value(of: $0)
            }
        }
        if !exact {
            sent.removeAll { p in
                guard p.kind.family.type == .float, p.kind.family.unit == .gain, exists(p, in: before),
                      case let .number(old) = before.value(of: p), case let .number(new) = after.value(of: p),
                      signedDecibels(old) == signedDecibels(new) else { return false }
                unchanged.append("\(p.key) is already \(signedDecibels(old)) dB")
                return true
            }
        }
        let mute: Bool? = before.masterMute != after.masterMute ? after.masterMute : nil
        var result = ChangeReport(node: target.node.name, id: target.node.id, changes: [])
        guard !sent.isEmpty || mute != nil else {
            report.say("\(target.name): nothing to change" + (unchanged.isEmpty ? "" : " (\(unchanged.joined(separator: "; ")))"))
            try report.emit(result)
            return before
        }
        let entries = sent.map { PropsEntry(key: $0.key, value: after.value(of: $0)) }
        try client.setProps(ofNode: target.node.id, entries, masterMute: mute)
        try confirm(target, entries, masterMute: mute)

        var lines: [String] = []
        if let mute {
            result.changes.append(.init(key: Preset.masterMuteKey, what: nil, before: .bool(!mute), after: .bool(mute)))
            lines.append("master mute: \(mute ? "off -> on" : "on -> off")")
        }
        for (p, entry) in zip(sent, entries) {
            let old = exists(p, in: before) ? before.value(of: p) : nil
            let what = describe(p, target, after)
            result.changes.append(.init(key: entry.key, what: what, before: old.map(ReportValue.init), after: ReportValue(entry.value)))
            let label = what.map { "\(entry.key) (\($0.printable))" } ?? entry.key
            let new = show(entry.value, p, reference: old)
            lines.append(old.map { "\(label): \(show($0, p, reference: entry.value)) -> \(new)" } ?? "\(label): set to \(new)")
        }
        let shown = 12
        if lines.count > shown {
            lines = Array(lines.prefix(shown)) + ["... and \(lines.count - shown) more (\(lines.count) parameters changed)"]
        }
        for line in lines { report.say("\(target.name): \(line)") }
        try report.emit(result)
        return after
    }

    /// Finds node `token` (as `target(_:)` does) and changes it (as `change(_:exact:keys:report:_:)`
    /// does): what a command that changes a node does, given the node as typed. `keys`: only
    /// these are sent, in this order (a resize, a rename, the `devices` or `targets` list, whose
    /// channels the node makes itself); by default every key that differs.
    @discardableResult
    package func change(
        node token: String?, exact: Bool = true, keys: [Parameter]? = nil, report: Reporter, _ change: (inout Mixer) throws -> Void
    ) throws -> Mixer {
        try self.change(try target(token), exact: exact, keys: keys.map { keys in { keys } }, report: report, change)
    }

    /// Sends a request to the running node (a write-only key: `midi.learn`, `scene.recall`),
    /// alone: checked first against the node's mixer as the node will check it, so that a bad
    /// one fails here with the node's words. Nothing to confirm in Props: a request is not state.
    package func request(_ target: Target, _ p: Parameter, _ value: ParameterValue, against known: Mixer? = nil) throws {
        var probe = try known ?? mixer(of: target)
        do throws(CrosspointError) {
            try probe.set(p, to: value)
        } catch {
            throw CommandError.from(error, probe)
        }
        try client.setProps(ofNode: target.node.id, [PropsEntry(key: p.key, value: value)], masterMute: nil)
    }

    /// Whether a key exists on a mixer of that shape.
    private func exists(_ p: Parameter, in mixer: Mixer) -> Bool { p.exists(in: mixer) }

    /// Waits until the node's Props show every key sent with the value sent (up to 3 s: a
    /// node in another process applies a change after the daemon has passed it on). Only the
    /// keys sent are compared: another client changing other keys meanwhile is no failure.
    private func confirm(_ target: Target, _ entries: [PropsEntry], masterMute: Bool?) throws {
        let deadline = ContinuousClock.now + .seconds(3)
        var wait = 2_000
        while true {
            let props = try client.props(ofNode: target.node.id)
            var now: [String: ParameterValue] = [:]
            for entry in props { if let key = entry.key { now[key] = entry.value.parameterValue } }
            let wrong = entries.first { entry in
                guard let value = now[entry.key] else {
                    // A large node lists only its non-zero cross-points.
                    return !(entry.key.hasPrefix("matrix.") && entry.value == .number(0))
                }
                return !same(value, entry.value)
            }
            let muteWrong = masterMute.map { now["mute"] != .bool($0) } ?? false
            if wrong == nil && !muteWrong { return }
            guard ContinuousClock.now < deadline else {
                let detail = if let wrong {
                    "\(wrong.key) is \(now[wrong.key]?.description ?? "missing"), sent \(wrong.value)"
                } else {
                    "the master mute is not \(masterMute! ? "on" : "off")"
                }
                throw CommandError.notApplied(node: target.node.name, detail: detail)
            }
            usleep(useconds_t(wait))
            wait = min(wait * 2, 50_000)
        }
    }

    /// Equal, numbers to Float precision (the node keeps gains and the ramp as Float in Props).
    private func same(_ a: ParameterValue, _ b: ParameterValue) -> Bool {
        if case let .number(x) = a, case let .number(y) = b { return x == y || abs(x - y) <= 1e-6 * max(1, abs(y)) }
        return a == b
    }

    /// What a key acts on, by port names (`in_FL -> out_FR`), for the lines a change prints.
    package func describe(_ p: Parameter, _ target: Target, _ mixer: Mixer) -> String? {
        if p.kind.family.hasRule { return "rule \(p.rule)" }
        return switch (p.kind.family.hasInput, p.kind.family.hasOutput) {
        case (true, true): "\(target.inputName(p.input, mixer)) -> \(target.outputName(p.output, mixer))"
        case (true, false): target.inputName(p.input, mixer)
        case (false, true): target.outputName(p.output, mixer)
        case (false, false): nil
        }
    }

    /// A value as a report line prints it. A gain whose 0.1 dB text is the same as the
    /// `reference`'s, though the values differ, gets two decimals (`-6.02 dB -> -6.00 dB`).
    private func show(_ value: ParameterValue, _ p: Parameter, reference: ParameterValue?) -> String {
        // A scene is a line of thousands of words: its name says which.
        if p.kind == .scenes, case let .names(lines) = value {
            return "[" + lines.map { String($0.prefix { $0 != " " }) }.joined(separator: " ") + "]"
        }
        return switch value {
        case let .number(v) where p.kind.family.unit == .milliseconds: "\(Gain.formatMilliseconds(v)) ms"
        case let .number(v) where p.kind.family.unit == .decibels: "\(Gain.format(v)) dB"
        case let .number(v) where p.kind.family.type == .int || p.kind.family.unit == .fraction: Gain.format(v)
        case let .number(v):
            if v == 0 { "-inf" } else {
                "\(level(v, reference)) dB (\(Gain.format(decimal(Float(v)))))"
            }
        case let .bool(b): b ? "on" : "off"
        case let .names(names): names.joined(separator: " ").printable
        case let .ints(values): values.map(String.init).joined(separator: ",")
        }
    }

    private func level(_ v: Double, _ reference: ParameterValue?) -> String {
        if case let .number(r) = reference, r != v, signedDecibels(r) == signedDecibels(v) { return signedDecibels(v, places: 2) }
        return signedDecibels(v)
    }

    // MARK: The graph

    /// Re-reads the graph (`crosspoint meter` follows a node whose ports change).
    package func refresh() throws { graph = try client.snapshot() }
}
