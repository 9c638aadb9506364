#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore
import CrosspointPipeWire

/// What the API's requests do, on the surface's thread, with the command line's own code:
/// the node's object is `show --json`'s, a change set goes through `Session.change` (checked
/// by the mixer's setters, sent, confirmed), a preset is `save`'s file and `load`'s check.
package enum SurfaceAPI {
    /// The most keys and values one change set may hold (every key of a 256 x 256 node, twice).
    package static let maximumParams = 2 * 2 * (256 * 256 + 4 * 256 + 16)

    /// Applies `{"params": [KEY, VALUE, ...]}` to node `token`: every pair checked in order,
    /// then sent at once; any error and nothing is sent. Answers
    /// `{"report": CHANGE-REPORT, "node": NODE, "warnings": [...]}`.
    package static func change(_ body: JSONValue, node token: String, _ session: Session) throws -> String {
        let items = try pairs(body)
        let target = try session.target(token)
        let report = Reporter.capturing()
        var order: [Parameter] = []
        var notes: [String] = []
        var requests: [(Parameter, ParameterValue)] = []
        let after = try session.change(target, exact: true, keys: { order }, report: report) { m in
            order += try set(items, on: &m, notes: &notes, requests: &requests)
        }
        // Requests to the running node (write-only keys: `scene.recall`), after the settings they came with.
        for (p, value) in requests {
            try session.request(target, p, value, against: after)
            report.say("\(target.name): \(p.key) \(value)")
        }
        for note in notes { report.warn(note) }
        return try answer(report, session, target)
    }

    /// Whether `change` would take `body` for node `token` as the node is now; sends nothing.
    package static func check(_ body: JSONValue, node token: String, _ session: Session) throws {
        let items = try pairs(body)
        let target = try session.target(token)
        var m = try session.mixer(of: target)
        var notes: [String] = []
        var requests: [(Parameter, ParameterValue)] = []
        _ = try set(items, on: &m, notes: &notes, requests: &requests)
    }

    /// The list of KEY, VALUE items of `{"params": [...]}`.
    private static func pairs(_ body: JSONValue) throws -> [JSONValue] {
        guard case .object = body, let params = body["params"] else {
            throw APIError(400, "expected {\"params\": [KEY, VALUE, ...]}", key: "params")
        }
        guard case let .array(items) = params, !items.isEmpty, items.count % 2 == 0 else {
            throw APIError(400, "params: expected a list of KEY, VALUE pairs (an even number of items, at least 2)", key: "params")
        }
        guard items.count <= maximumParams else {
            throw APIError(400, "params: \(items.count / 2) pairs is more than any node has keys", key: "params")
        }
        return items
    }

    /// Sets every pair on `m`, in order; returns the keys to send.
    private static func set(
        _ items: [JSONValue], on m: inout Mixer, notes: inout [String], requests: inout [(Parameter, ParameterValue)]
    ) throws -> [Parameter] {
        var order: [Parameter] = []
        for k in stride(from: 0, to: items.count, by: 2) {
            guard case let .string(key) = items[k] else {
                throw APIError(400, "params[\(k)]: expected a key such as \"matrix.0.1\", got \(items[k].compactText.printable)", key: "params")
            }
            do {
                order += try set(key, items[k + 1], on: &m, notes: &notes, requests: &requests)
            } catch let error as APIError {
                throw error
            } catch let error as CrosspointError {
                throw APIError(400, CommandError.from(error, m).description, key: key)
            } catch {
                throw APIError.from(error, key: key)
            }
        }
        return order
    }

    /// MIDI learn: `{"key": KEY}` asks the node to map the next control that moves on its
    /// midi_in to KEY (`midi.learn`, as `crosspoint midi learn` does); `{"key": null}` stops.
    /// Answers `{"learning": KEY or null}`; the mapping arrives in the node's `midi.map`.
    package static func learn(_ body: JSONValue, node token: String, _ session: Session) throws -> String {
        let key: String?
        switch body["key"] {
        case let .string(k)?: key = k
        case .null?: key = nil
        default: throw APIError(400, "expected {\"key\": \"gain.in.0\"} (a key a MIDI control can move) or {\"key\": null}", key: "key")
        }
        let target = try session.target(token)
        let mixer = try session.mixer(of: target)
        if let key {
            do {
                _ = try MIDILearn(.names([key]))
                _ = try Parameter.typed(key, in: mixer)
            } catch let error as CrosspointError {
                throw APIError(400, CommandError.from(error, mixer).description, key: "key")
            }
            guard mixer.midi.ports else {
                throw APIError(400, "\(target.name) has no MIDI ports: switch them on (midi = true, or `crosspoint midi on`)", key: "key")
            }
        }
        try session.request(target, Parameter(.midiLearn), .names(key.map { [$0] } ?? []), against: mixer)
        return JSONValue.object([("learning", key.map(JSONValue.string) ?? .null)]).compactText
    }

    /// Sets one key on the mixer; returns the keys to send.
    private static func set(
        _ key: String, _ json: JSONValue, on m: inout Mixer, notes: inout [String], requests: inout [(Parameter, ParameterValue)]
    ) throws -> [Parameter] {
        if key == Preset.masterMuteKey {
            guard case let .bool(mute) = json else { throw APIError(400, "\(key): expected true or false", key: key) }
            m.setMasterMute(mute)
            return []
        }
        let p: Parameter
        do {
            p = try Parameter.typed(key, in: m)
        } catch {
            guard case CrosspointError.unknownKey = error else { throw error }
            throw APIError(400, "unknown parameter '\(key.printable)'; the keys are those of `crosspoint params`, and mute.master", key: key)
        }
        guard p.kind != .levelsWatch else {
            throw APIError(400, "levels.watch is not for the API: read levels from /api/nodes/NODE/levels or the WebSocket", key: key)
        }
        guard p.kind != .midiLearn else {
            throw APIError(400, "midi.learn is a request to the node, not a setting: use `crosspoint midi learn`", key: key)
        }
        let value: ParameterValue
        switch json {
        case let .string(text) where p.kind.family.access == .writeOnly && p.kind.family.type == .names:
            // A request's words in one string, as OSC sends them: `s "show 10s"`.
            value = .names(text.split(separator: " ").map(String.init))
        case let .string(text) where p.kind.family.type == .float:
            // Gains and the ramp as typed (`-6dB`, `2x`, `10ms`), by the command line's rules;
            // every other key takes its JSON type (true/false, a number, a list), not text.
            var exact = true
            value = try ParamValue.parse(text, for: p, in: m, linear: false, note: &notes, exact: &exact)
        case let .number(v):
            value = .number(v)
        case let .bool(b):
            value = .bool(b)
        case let .array(items) where items.allSatisfy({ if case .number = $0 { true } else { false } }):
            let ints = items.compactMap { item -> Int? in
                if case let .number(n) = item { Int(exactly: n) } else { nil }
            }
            guard ints.count == items.count else { throw APIError(400, "\(key): expected whole numbers", key: key) }
            value = .ints(ints)
        case let .array(items) where items.allSatisfy({ if case .string = $0 { true } else { false } }):
            value = .names(items.compactMap { if case let .string(s) = $0 { s } else { nil } })
        default:
            let expected = switch p.kind.family.type {
            case .bool: "true or false"
            case .int: "a whole number from 1 to 256"
            case .intArray: "a list of integers such as [1, 0]"
            case .names: "a list of channel names such as [\"FL\", \"FR\"]"
            case .float: "a number (linear) or text such as \"-6dB\""
            }
            throw APIError(400, "\(key): expects \(expected), got \(json.compactText.prefix(40).description.printable)", key: key)
        }
        try m.set(p, to: value)
        if p.kind.family.access == .writeOnly {
            // A request to the running node (`scene.recall`), checked here as the node will
            // check it, sent once the settings of the same set are.
            requests.append((p, value))
            return []
        }
        return Parameter.keysSent(for: p, m)
    }

    /// A change's answer: what changed, the node now, and any warnings.
    private static func answer(_ report: Reporter, _ session: Session, _ target: Target) throws -> String {
        let node = (try? NodeJSON.document(session, target.node.id)) ?? "null"
        let warnings = JSONValue.array((report.capture?.warnings ?? []).map(JSONValue.string)).compactText
        return "{\"report\":\(report.capture?.json ?? "null"),\"node\":\(node),\"warnings\":\(warnings)}"
    }

    // MARK: Presets

    /// Loads preset `name` from `store` into node `token`.
    package static func load(_ name: String, from store: PresetStore, node token: String, _ session: Session) throws -> String {
        let text = try store.read(name)
        let preset = try PresetFile.decode(text, source: "preset '\(name)'")
        let target = try session.target(token)
        let report = Reporter.capturing()
        try session.load(preset, source: "preset '\(name)'", into: target, report: report)
        return try answer(report, session, target)
    }

    /// Node `token` as preset `name` in `store`.
    package static func save(_ name: String, to store: PresetStore, node token: String, _ session: Session) throws -> String {
        let text = try NodeJSON.document(session, token)
        try store.write(name, text)
        return JSONValue.object([("saved", .string(name))]).compactText
    }

    /// Stores node `token`'s mix as scene `name` (replacing one of that name), as `crosspoint
    /// scene store` does. Answers as a change set does.
    package static func storeScene(_ name: String, node token: String, _ session: Session) throws -> String {
        let target = try session.target(token)
        let report = Reporter.capturing()
        do {
            try Scene.checkName(name)  // refused before the node is read
        } catch {
            throw APIError(400, error.description, key: "name")
        }
        try session.change(target, keys: { [Parameter(.scenes)] }, report: report) { m in try m.storeScene(named: name) }
        return try answer(report, session, target)
    }

    /// One reading of node `token`'s levels, as `crosspoint meter --once --json` prints it.
    package static func levels(node token: String, _ session: Session) throws -> String {
        let target = try session.target(token)
        let reading = try session.reading(of: target, interval: LevelWatch.fastestInterval)
        let reply = MeterView.json(reading, try MeterChannels(session, target))
        return "{\"interval\":\(reading.interval)," + reply.dropFirst()
    }
}
