/// `midi.learn`: a request to the running node, not a setting (a write-only key, like
/// `levels.watch`): map the next control that moves to a key. `[ "gain.in.0" ]` starts
/// learning, `[]` stops it; learning stops by itself after `timeoutSeconds`, or once a
/// control is learned (its mapping is added to `midi.map`).
public struct MIDILearn: Equatable, Sendable {
    public static let key = "midi.learn"
    public static let timeoutSeconds = 60

    /// The key to map, or nil to stop learning.
    public let target: String?

    /// Reads the request: a list of one key a MIDI control can move, or an empty list.
    public init(_ value: ParameterValue) throws(CrosspointError) {
        switch value {
        case .names([]), .ints([]): target = nil
        case let .names(names) where names.count == 1:
            // The control does not matter here: any key a fader can move, a CC can.
            _ = try MIDIMapping(control: .controlChange(channel: 0, controller: 0), key: names[0])
            target = names[0]
        default:
            throw .invalidValue(key: Self.key, reason: "expects a list of one key, like [ \"gain.in.0\" ], or [] to stop; got \(value)")
        }
    }

    /// The mapping the controls that moved make for `key` (what `MIDIInbox.collect` gave), or
    /// nil while none suits it: for a mute, a note or a button's press (a control change
    /// rising to 64 or more); for the others, a control change (a 14-bit pair when its fine
    /// half moved with it) or a pitch bend.
    public static func mapping(from records: [MIDIRecord], for key: String) -> MIDIMapping? {
        guard let kind = ParameterKind(key: key) else { return nil }
        let onOff = kind.family.type == .bool
        for record in records {
            let control: MIDIControl
            switch record.message {
            case let .noteOn(channel, note, _) where onOff:
                control = .note(channel: channel, note: note)
            case let .controlChange(channel, controller, _) where onOff:
                guard record.presses > 0 else { continue }
                control = .controlChange(channel: channel, controller: controller)
            case let .controlChange(channel, controller, _):
                let fine = records.contains {
                    if case let .controlChange(c, n, _) = $0.message { c == channel && n == controller &+ 32 } else { false }
                }
                if controller >= 32 && controller < 64, records.contains(where: {
                    if case let .controlChange(c, n, _) = $0.message { c == channel && n == controller - 32 } else { false }
                }) { continue }  // the fine half of a pair: its coarse half is learned
                control = controller < 32 && fine ? .controlChange14(channel: channel, controller: controller)
                    : .controlChange(channel: channel, controller: controller)
            case let .pitchBend(channel, _) where !onOff:
                control = .pitchBend(channel: channel)
            default:
                continue
            }
            if let mapping = try? MIDIMapping(control: control, key: key) { return mapping }
        }
        return nil
    }
}
