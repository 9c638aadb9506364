import CrosspointClient
import CrosspointCore
import CrosspointPipeWire

/// A node's state and links, as a table and as JSON.
package struct NodeView {
    package let target: Target
    package let mixer: Mixer
    package let graph: GraphSnapshot
    /// One reading of the levels, shown with `--levels`.
    package var levels: LevelReading?
    /// What the node says of its virtual devices (`deviceStatus(_:)`), by device name.
    package var deviceStatus: [String: String] = [:]

    package init(target: Target, mixer: Mixer, graph: GraphSnapshot) {
        (self.target, self.mixer, self.graph) = (target, mixer, graph)
    }

    /// The node property `crosspoint.devices` (`game: ready (node 42); chat: waiting (node 57
    /// has this name)`) by device name; empty when the node has no devices or says nothing.
    package static func deviceStatus(_ session: Session, _ target: Target, _ mixer: Mixer) -> [String: String] {
        guard !mixer.devices.isEmpty,
              let text = (try? session.client.properties(ofNode: target.node.id))?[CrosspointProperty.devices] else { return [:] }
        // Entries are `NAME: STATE`, joined by "; " (a name holds no ':' nor ';'): a piece that
        // does not start with a device's name and ": " belongs to the state before it.
        let names = Set(mixer.devices.map(\.name))
        var status: [String: String] = [:]
        var last: String?
        for piece in text.split(separator: ";", omittingEmptySubsequences: false) {
            let entry = piece.first == " " ? piece.dropFirst() : piece[...]
            if let colon = entry.firstIndex(of: ":"), names.contains(String(entry[..<colon])),
               entry[colon...].hasPrefix(": ") {
                let name = String(entry[..<colon])
                status[name] = String(entry[entry.index(colon, offsetBy: 2)...])
                last = name
            } else if let last {
                status[last, default: ""] += ";" + piece
            }
        }
        return status
    }

    package var inputNames: [String] { (0..<mixer.inputs).map { target.inputName($0, mixer) } }
    package var outputNames: [String] { (0..<mixer.outputs).map { target.outputName($0, mixer) } }
    /// The names as the table prints them (escaped).
    private var inputLabels: [String] { inputNames.map(\.printable) }
    private var outputLabels: [String] { outputNames.map(\.printable) }

    /// What input or output `k` is linked to. Its port is found by name (`in_FL`): a renamed
    /// channel gets a new port object, listed after the others, so position alone would pair
    /// the links with the wrong channel; by position only when no port has the name.
    package func peers(_ ports: [GraphPort], _ names: [String], _ k: Int) -> [String] {
        if k < names.count, let port = ports.first(where: { $0.name == names[k] }) { return graph.peers(of: port) }
        return k < ports.count ? graph.peers(of: ports[k]) : []
    }

    // MARK: JSON

    /// The preset with the node's description, ports and links: `show --json` and `save`.
    package var document: NodeDocument {
        var document = NodeDocument(
            preset: mixer.preset, id: target.node.id, name: target.node.name, description: target.node.description,
            inputPorts: inputNames, outputPorts: outputNames,
            inputLinks: (0..<mixer.inputs).map { peers(target.inputs, inputNames, $0) },
            outputLinks: (0..<mixer.outputs).map { peers(target.outputs, outputNames, $0) })
        let own = Set(mixer.devices.map(\.name))
        document.sinks = graph.nodes.filter { $0.mediaClass == MediaClass.sink && !own.contains($0.name) }
            .sorted { $0.id < $1.id }.map { [$0.name, $0.description] }
        for device in mixer.devices {
            guard let node = graph.nodes.first(where: { $0.name == device.name }) else { continue }
            // A sink's players link into its playback ports; a source's recorders take from its capture ports.
            let side: GraphPort.Direction = device.kind.feedsInputs ? .input : .output
            let ports = Set(graph.ports.filter { $0.nodeID == node.id && $0.direction == side }.map(\.id))
            var names: [String] = []
            for link in graph.links {
                let peer = ports.contains(link.inputPort) ? link.outputPort : ports.contains(link.outputPort) ? link.inputPort : nil
                guard let peer, let owner = graph.port(peer)?.nodeID, owner != target.node.id,
                      let name = graph.node(owner)?.description, !names.contains(name) else { continue }
                names.append(name)
            }
            document.deviceStreams[device.name] = names
        }
        document.deviceStatus = deviceStatus
        document.morph = mixer.morphPosition
        return document
    }

    // MARK: Table

    /// A gain as a cell: its text in dB and its colour.
    private func cell(_ gain: Float) -> (String, Terminal.Style?) {
        let style: Terminal.Style? = gain == 0 ? .dim : gain < 0 ? .magenta : gain == 1 ? .green : .yellow
        return (signedDecibels(Double(gain)), style)
    }

    /// A key's value as a cell, by its type and unit in the parameter table: a gain in dB, a
    /// time in ms (blank for none), a bool as its word's initial (`M` for a mute; blank when off).
    private func cell(_ p: Parameter) -> (String, Terminal.Style?) {
        let family = p.kind.family
        switch mixer.value(of: p) {
        case let .number(v) where family.unit == .milliseconds: return v == 0 ? ("", nil) : (Gain.formatMilliseconds(v) + "ms", .cyan)
        case let .number(v) where family.type == .float && family.unit == .gain: return cell(Float(v))
        case let .number(v): return (Gain.format(v), nil)
        case let .bool(on): return (on ? String(NodeView.word(family).prefix(1)).uppercased() : "", .red)
        default: return ("", nil)
        }
    }

    /// A number of one value as the first line says it: `ramp 10 ms`, a gain in dB.
    private func said(_ kind: ParameterKind) -> String {
        let family = kind.family
        if kind == .morph, mixer.morphScenes.count == 2 {
            return "morph \(Gain.format(mixer.morphPosition)) (\(mixer.morphScenes[0]) 0 to \(mixer.morphScenes[1]) 1)"
        }
        guard case let .number(v) = mixer.value(of: Parameter(kind)) else { return NodeView.word(family) }
        let value = family.unit == .milliseconds ? Gain.formatMilliseconds(v) + " ms"
            : family.type == .float && family.unit == .gain ? signedDecibels(v) + " dB" : Gain.format(v)
        return NodeView.word(family) + " " + value
    }

    /// What the table calls a key: its pattern's first word (`gain`, `mute`, `delay`, `ramp`).
    private static func word(_ family: ParameterFamily) -> String { String(family.pattern.prefix { $0 != "." }) }

    /// The keys of one value per output (`gain.out`, `mute.out`, `delay.out`), a row each
    /// under the outputs' names; and those of one value per input beyond the rows' gain and
    /// mute (`gain.in`, `mute.in`), a line each under the table. The first row (the outputs'
    /// gains) always, the others when a value in them is not the default.
    private static let outputRows = ParameterKind.allCases.filter { kind in
        let f = kind.family
        return f.access == .readWrite && f.hasOutput && !f.hasInput && [.float, .int, .bool].contains(f.type)
    }
    private static let inputLines = ParameterKind.allCases.filter { kind in
        let f = kind.family
        return f.access == .readWrite && f.hasInput && !f.hasOutput && [.float, .int, .bool].contains(f.type)
            && kind != .inputGain && kind != .inputMute
    }
    /// The numbers of one value, after the master on the first line (`ramp 10 ms`).
    private static let globals = ParameterKind.allCases.filter { kind in
        let f = kind.family
        return f.access == .readWrite && !f.hasOutput && !f.hasInput && !f.hasRule && [.float, .int].contains(f.type) && f.carried != .shape
            && kind != .masterGain
    }

    /// Column headers people can read. The output names, or the part after their common
    /// prefix ("out_", then shown in the corner), in this order of preference: on one line if
    /// no wider than a cell (or 8); on one line if every column then fits the terminal's
    /// `room` (always when piped: no width); on two lines, split at the last "_" ("stream" over
    /// "FL"), if the parts are short; else on one line, the columns split into blocks. Returns
    /// the header lines (one string per column), the corner label and the column width.
    private func columnHeaders(cellWidth: Int, room: Int?) -> (lines: [[String]], corner: String, width: Int) {
        let names = outputLabels
        let narrow = max(cellWidth, 8)
        let longest = names.map(\.count).max() ?? 0
        if longest <= narrow { return ([names], "", max(cellWidth, longest)) }
        let prefix = commonPrefix(names)
        let short = names.map { String($0.dropFirst(prefix.count)) }
        let widest = short.map(\.count).max() ?? 0
        if widest <= narrow || short.count * (widest + 1) <= room ?? Int.max { return ([short], prefix, max(cellWidth, widest)) }
        let split = short.map { name -> [String] in
            guard let cut = name.lastIndex(of: "_"), cut != name.startIndex else { return [name, ""] }
            return [String(name[..<cut]), String(name[name.index(after: cut)...])]
        }
        let part = split.flatMap { $0 }.map(\.count).max() ?? 0
        if part <= max(narrow, 10) { return ([split.map { $0[0] }, split.map { $0[1] }], prefix, max(cellWidth, part)) }
        return ([short], prefix, max(cellWidth, widest))
    }

    package func text(_ t: Terminal) -> String {
        var out = "\(t.paint(target.name, .bold)) (node \(target.node.id)) \"\(target.node.description.printable)\": "
            + "\(counted(mixer.inputs, "input")) x \(counted(mixer.outputs, "output")); "
            + "master \(signedDecibels(Double(mixer.masterGain))) dB\(mixer.masterMute ? " " + t.paint("MUTED", .red) : "")"
            + NodeView.globals.filter { $0 != .morph || mixer.morphScenes.count == 2 }.map { "; " + said($0) }.joined() + "\n"
        out += "Gains in dB: -inf = silence, ø = flipped polarity, M = muted.\nRows are inputs, columns are outputs.\n"
        if let levels { out += MeterView.levelsNote(levels) + "\n" }
        out += "\n"

        let cells = (0..<mixer.inputs).map { i in (0..<mixer.outputs).map { cell(mixer.crosspoint(input: i, output: $0)) } }
        let outRows = NodeView.outputRows.map { kind in
            (label: NodeView.word(kind.family), cells: (0..<mixer.outputs).map { cell(Parameter(kind, output: $0)) },
             changed: (0..<mixer.outputs).map { mixer.value(of: Parameter(kind, output: $0)) != kind.family.defaultParameterValue })
        }
        let inGains = mixer.inputGains.map(cell)
        let inLevels = levels.map { r in (0..<mixer.inputs).map { MeterView.cell(r.inputs, $0) } }
        let outLevels = levels.map { r in (0..<mixer.outputs).map { MeterView.cell(r.outputs, $0) } }
        let cellWidth = max(4, (cells.flatMap { $0 } + outRows.flatMap(\.cells) + (outLevels ?? [])).map(\.0.count).max() ?? 4)
        let gainWidth = max(4, inGains.map(\.0.count).max()!)
        let levelWidth = inLevels.map { max(5, $0.map(\.0.count).max() ?? 5) + 1 } ?? 0
        let rowLabels = max(inputLabels.map(\.count).max()!, 4)
        let (headers, corner, width) = columnHeaders(
            cellWidth: cellWidth, room: t.width.map { $0 - (rowLabels + 1 + gainWidth + 1 + 4 + levelWidth + 3) })

        let labelWidth = max(rowLabels, corner.count)
        let left = labelWidth + 1 + gainWidth + 1 + 4 + levelWidth + 3  // label gain mute [level] " | "
        let perBlock = max(1, ((t.width ?? Int.max) - left) / (width + 1))

        for start in stride(from: 0, to: mixer.outputs, by: perBlock) {
            let columns = start..<min(mixer.outputs, start + perBlock)
            if columns.count < mixer.outputs {
                out += t.paint("outputs \(columns.lowerBound) to \(columns.upperBound - 1) of \(mixer.outputs)", .bold) + "\n"
            }
            func row(_ label: String, _ labelStyle: Terminal.Style?, _ gain: (String, Terminal.Style?),
                     _ mute: (String, Terminal.Style?), _ values: [(String, Terminal.Style?)],
                     level: (String, Terminal.Style?) = ("", nil)) -> String {
                var line = t.paint(label.padded(labelWidth, right: true), labelStyle) + " "
                line += t.paint(gain.0.padded(gainWidth), gain.1) + " " + t.paint(mute.0.padded(4), mute.1)
                if levelWidth > 0 { line += t.paint(level.0.padded(levelWidth), level.1) }
                line += " | "
                line += values.map { t.paint($0.0.padded(width), $0.1) }.joined(separator: " ")
                return line.trimmingTrailingSpaces() + "\n"
            }
            let none: (String, Terminal.Style?) = ("", nil)
            for (n, line) in headers.enumerated() {
                out += row(n == 0 ? corner : "", .bold, n == 0 ? ("gain", .bold) : none, n == 0 ? ("mute", .bold) : none,
                           columns.map { (line[$0], .bold) }, level: n == 0 ? ("level", .bold) : none)
            }
            for (n, outRow) in outRows.enumerated() where n == 0 || columns.contains(where: { outRow.changed[$0] }) {
                out += row(outRow.label, .bold, none, none, columns.map { outRow.cells[$0] })
                if n == 0, let outLevels { out += row("level", .bold, none, none, columns.map { outLevels[$0] }) }
            }
            out += String(repeating: "-", count: left - 2) + "+" + String(repeating: "-", count: columns.count * (width + 1)) + "\n"
            for i in 0..<mixer.inputs {
                out += row(inputLabels[i], .bold, inGains[i], (mixer.inputMutes[i] ? "M" : "", .red), columns.map { cells[i][$0] },
                           level: inLevels?[i] ?? none)
            }
            out += "\n"
        }
        for kind in NodeView.inputLines where (0..<mixer.inputs).contains(where: {
            mixer.value(of: Parameter(kind, input: $0)) != kind.family.defaultParameterValue
        }) {
            out += "\(t.paint(kind.family.presetKey, .bold)): " + (0..<mixer.inputs).map { i in
                let (text, style) = cell(Parameter(kind, input: i))
                return inputLabels[i] + " " + t.paint(text.isEmpty ? "-" : text, style)
            }.joined(separator: ", ") + "\n\n"
        }
        out += "Links:\n" + links(t)
        return out
    }

    /// Each port and what it is linked to; runs of three or more unlinked ports on one line.
    private func links(_ t: Terminal) -> String {
        let all = inputLabels.enumerated().map { ($1, "<-", peers(target.inputs, inputNames, $0).map(\.printable)) }
            + outputLabels.enumerated().map { ($1, "->", peers(target.outputs, outputNames, $0).map(\.printable)) }
        let nameWidth = all.map(\.0.count).max() ?? 0
        var out = ""
        var k = 0
        while k < all.count {
            let (name, arrow, peers) = all[k]
            if peers.isEmpty {
                var end = k
                while end + 1 < all.count, all[end + 1].2.isEmpty, all[end + 1].1 == arrow { end += 1 }
                if end - k >= 2 {
                    out += "  \(name) to \(all[end].0): " + t.paint("not linked", .dim) + "\n"
                    k = end + 1
                    continue
                }
                out += "  \(name.padded(nameWidth, right: true)) " + t.paint("not linked", .dim) + "\n"
            } else {
                out += "  \(name.padded(nameWidth, right: true)) \(arrow) " + t.paint(peers.joined(separator: ", "), .cyan) + "\n"
            }
            k += 1
        }
        return out
    }

    private func commonPrefix(_ names: [String]) -> String {
        guard var prefix = names.first else { return "" }
        for name in names.dropFirst() { while !name.hasPrefix(prefix) { prefix.removeLast() } }
        // Cut after the last "_" so that a channel name is never split.
        if let underscore = prefix.lastIndex(of: "_") { return String(prefix[...underscore]) }
        return ""
    }
}
