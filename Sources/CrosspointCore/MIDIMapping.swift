#if canImport(Glibc)
import Glibc
#endif

/// What MIDI control moves which parameter, and how: the mappings users write in module
/// arguments, presets and `crosspoint midi map`, as plain values checked when made. The
/// parameter is one key of the parameter table (`Parameter.families`); how a control's
/// position becomes a value follows from the key's kind (`MIDIMapping.Law`).

/// A control on a MIDI surface.
public enum MIDIControl: Hashable, Sendable, CustomStringConvertible {
    /// A 7-bit control change (0...127).
    case controlChange(channel: UInt8, controller: UInt8)
    /// A 14-bit control change: the coarse value on `controller` (0...31), the fine one on
    /// `controller &+ 32`, as MIDI 1.0 pairs them.
    case controlChange14(channel: UInt8, controller: UInt8)
    /// A key or pad: note on and note off.
    case note(channel: UInt8, note: UInt8)
    /// The pitch bend of a channel (14 bits): the faders of Mackie Control surfaces.
    case pitchBend(channel: UInt8)
    /// A program change to one program: a press (a scene's recall).
    case programChange(channel: UInt8, program: UInt8)

    /// Reads `cc CH N`, `cc14 CH N`, `note CH N` or `bend CH`, with MIDI channels numbered
    /// 1 to 16 as surfaces and their manuals number them.
    public init(text: String) throws(CrosspointError) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        func number(_ at: Int, _ range: ClosedRange<Int>, _ what: String) throws(CrosspointError) -> UInt8 {
            guard let value = Int(words[at]), range.contains(value) else {
                throw .invalidValue(key: "control", reason: "'\(text)': the \(what) must be a whole number from \(range.lowerBound) to \(range.upperBound), got '\(words[at])'")
            }
            return UInt8(truncatingIfNeeded: value)
        }
        let usage = "write cc CHANNEL CONTROLLER, cc14 CHANNEL CONTROLLER, note CHANNEL NOTE, program CHANNEL PROGRAM or bend CHANNEL (channels 1 to 16)"
        guard let kind = words.first?.lowercased() else { throw .invalidValue(key: "control", reason: "empty: \(usage)") }
        switch (kind, words.count) {
        case ("cc", 3):
            self = .controlChange(channel: try number(1, 1...16, "channel") - 1, controller: try number(2, 0...127, "controller"))
        case ("cc14", 3):
            self = .controlChange14(channel: try number(1, 1...16, "channel") - 1, controller: try number(2, 0...31, "controller of a 14-bit pair (its fine half is that + 32)"))
        case ("note", 3):
            self = .note(channel: try number(1, 1...16, "channel") - 1, note: try number(2, 0...127, "note"))
        case ("bend", 2):
            self = .pitchBend(channel: try number(1, 1...16, "channel") - 1)
        case ("program", 3):
            self = .programChange(channel: try number(1, 1...16, "channel") - 1, program: try number(2, 0...127, "program"))
        default:
            throw .invalidValue(key: "control", reason: "'\(text)' is not a MIDI control: \(usage)")
        }
    }

    /// The text `init(text:)` reads.
    public var description: String {
        switch self {
        case let .controlChange(channel, controller): "cc \(Int(channel) + 1) \(controller)"
        case let .controlChange14(channel, controller): "cc14 \(Int(channel) + 1) \(controller)"
        case let .note(channel, note): "note \(Int(channel) + 1) \(note)"
        case let .pitchBend(channel): "bend \(Int(channel) + 1)"
        case let .programChange(channel, program): "program \(Int(channel) + 1) \(program)"
        }
    }

    /// The largest value the control sends: its positions are 0...steps.
    public var steps: Int {
        switch self {
        case .controlChange, .note, .programChange: 127
        case .controlChange14, .pitchBend: 16383
        }
    }
}

/// The fader law of the gains: a position from 0 (the bottom) to 1 (the top) to a linear gain.
/// Ardour's: gain = 2^((198 * p^(1/8) - 192) / 6), silence at the bottom. Unity (0 dB) sits at
/// p = (192/198)^8 = 0.7818 (7-bit 99.3: 99 is -0.07 dB, 100 +0.17 dB; 14-bit 12808), +6 dB at
/// the top; -20 dB at 0.33, -40 dB at 0.12, -60 dB at 0.04: the travel is spent where ears hear it.
public enum FaderLaw {
    /// The largest gain a fader reaches (+6.02 dB).
    public static let top = 2.0

    public static func gain(position p: Double) -> Double {
        guard p > 0 else { return 0 }
        let p = min(p, 1)
        return pow(2, (198 * pow(p, 1.0 / 8) - 192) / 6)
    }

    /// The inverse: where a fader sits for `gain` (its magnitude: a flipped polarity is kept by
    /// the mapping, not the fader); gains above the top sit at the top.
    public static func position(gain: Double) -> Double {
        let g = abs(gain)
        guard g > 0 else { return 0 }  // NaN too
        guard g < top else { return 1 }
        let root = (6 * log2(g) + 192) / 198
        return root <= 0 ? 0 : pow(root, 8)
    }
}

/// One mapping: a control, the key it moves, and how.
public struct MIDIMapping: Hashable, Sendable {
    /// How a control's position becomes the key's value: from the key's type and unit in the
    /// parameter table.
    public enum Law: Hashable, Sendable {
        /// Gains (master, inputs, outputs, cross-points): `FaderLaw`.
        case fader
        /// A number over its range, evenly (milliseconds: `ramp.ms`, `delay.out`).
        case linear(ClosedRange<Double>)
        /// A bool (a mute): on and off.
        case onOff
        /// A press recalls a scene (`scene.recall NAME [TIME]`): a request, not a value.
        case recall(SceneRecall)
    }

    /// How an on/off key follows its control.
    public enum Switch: String, Hashable, Sendable, CaseIterable {
        /// Each press (a note on, a control change rising to 64 or more) flips it.
        case toggle
        /// On while held (note on to note off, a control at 64 or more).
        case momentary
    }

    public let control: MIDIControl
    /// The key as written (indices or channel names), resolved against the node's channels
    /// when a message arrives: `gain.in.0`, `mute.in.FL`, `matrix.0.1`, `gain.master`.
    public let key: String
    public let kind: ParameterKind
    /// For on/off keys: toggle (the default) or momentary. Nil for the others.
    public let switchMode: Switch?
    /// Whether the key follows a fader or knob only once it crosses the key's value (on by
    /// default for continuous keys; on/off keys have no pickup).
    public let pickup: Bool

    /// From the table: a bool is on or off, a gain follows `FaderLaw`, a time its range.
    public let law: Law

    /// Checks the pair: a key MIDI can move (the table's `midiMappable`), a control that suits
    /// it, options that apply.
    public init(control: MIDIControl, key: String, switchMode: Switch? = nil, pickup: Bool? = nil) throws(CrosspointError) {
        guard let kind = ParameterKind(key: key) else { throw .unknownKey(key) }
        if kind == .sceneRecall {
            throw .invalidValue(key: key, reason: "a recall names its scene: map a note or a program change with scene.recall NAME [TIME]")
        }
        if case .programChange = control {
            throw .invalidValue(key: key, reason: "a program change recalls a scene (program CH N scene.recall NAME); map a fader, a knob or a note to \(key)")
        }
        let family = kind.family
        guard family.midiMappable else {
            let movable = ParameterKind.allCases.map(\.family).filter(\.midiMappable).map(\.pattern)
            throw .invalidValue(key: key, reason: "MIDI moves \(movable.dropLast().joinedBytes(separator: ", ")) and \(movable.last ?? ""); "
                + "\(key) is set by a command")
        }
        if family.type == .bool {
            if case .pitchBend = control {
                throw .invalidValue(key: key, reason: "a pitch bend cannot switch \(key): map a note or a button's cc")
            }
            if pickup == true {
                throw .invalidValue(key: key, reason: "pickup is for faders and knobs; \(key) is on or off")
            }
            self.switchMode = switchMode ?? .toggle
            self.pickup = false
            law = .onOff
        } else {
            if case .note = control {
                throw .invalidValue(key: key, reason: "a note can switch a mute, not move \(key): map a fader or a knob (cc, cc14, bend)")
            }
            if let switchMode {
                throw .invalidValue(key: key, reason: "\(switchMode.rawValue) is for mutes; \(key) follows its control continuously")
            }
            self.switchMode = nil
            self.pickup = pickup ?? true
            law = family.unit == .gain ? .fader : .linear(family.range)
        }
        self.control = control
        self.key = key
        self.kind = kind
    }

    /// A press of `control` (a note or a program change) recalls a scene, at once or over a time.
    public init(control: MIDIControl, recall: SceneRecall) throws(CrosspointError) {
        switch control {
        case .note, .programChange: break
        default:
            throw .invalidValue(key: SceneRecall.key, reason: "a scene is recalled by a note or a program change (note CH N, program CH N), not by \(control)")
        }
        self.control = control
        key = SceneRecall.key
        kind = .sceneRecall
        switchMode = nil
        pickup = false
        law = .recall(recall)
    }

    /// The value of the key at a control position (0...1), for continuous keys; `sign` is the
    /// polarity a cross-point keeps (-1 or 1).
    public func value(position: Double, sign: Double = 1) -> Double {
        switch law {
        case .fader: sign < 0 ? -FaderLaw.gain(position: position) : FaderLaw.gain(position: position)
        case let .linear(range): range.lowerBound + min(max(position, 0), 1) * (range.upperBound - range.lowerBound)
        case .onOff, .recall: position >= 0.5 ? 1 : 0
        }
    }

    /// Where the control sits for a value of the key (0...1).
    public func position(value: Double) -> Double {
        switch law {
        case .fader: FaderLaw.position(gain: value)
        case let .linear(range):
            range.upperBound > range.lowerBound ? min(max((value - range.lowerBound) / (range.upperBound - range.lowerBound), 0), 1) : 0
        case .onOff, .recall: value >= 0.5 ? 1 : 0
        }
    }
}
