import CrosspointCore

/// A key's value as OSC sends it.
package enum OSCValue: Equatable {
    case number(Double), bool(Bool), ints([Int]), names([String])

    /// Every readable key of `mixer` (a node over 1024 cross-points: not its cross-points) and
    /// `mute.master`.
    package static func state(of mixer: Mixer) -> [String: OSCValue] {
        var state: [String: OSCValue] = [Preset.masterMuteKey: .bool(mixer.masterMute)]
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

    package static func messages(node: String, _ values: [String: OSCValue]) -> [OSCMessage] {
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
