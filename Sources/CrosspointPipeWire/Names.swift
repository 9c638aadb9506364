/// The names Crosspoint gives in the graph, written once: its own node properties and its ports'
/// names. PipeWire's own property keys are PipeWire's `PW_KEY_*` (imported from its headers
/// through CPipeWire), never string literals.

/// Node properties of Crosspoint's own, read by the command line and the surface.
public enum CrosspointProperty {
    /// The number of mixer inputs, refreshed as ports come and go.
    public static let inputs = "crosspoint.inputs"
    /// The number of mixer outputs.
    public static let outputs = "crosspoint.outputs"
    /// The latest levels, while someone watches them (`LevelsCodec`).
    public static let levels = "crosspoint.levels"
    /// The node's virtual devices and their state (`game: ready (node 42); ...`).
    public static let devices = "crosspoint.devices"
    /// The node's output groups and the device each is linked to (`default: linked to ...`).
    public static let targets = "crosspoint.targets"
    /// The sample rate the node runs at, in Hz, once it has run (`RateWatch`): what `crosspoint
    /// delay` converts samples at.
    public static let rate = "crosspoint.rate"
}

/// A Crosspoint node's port names: `in_<channel>` for a mixer input, `out_<channel>` for a mixer
/// output, `midi_in` and `midi_out` for MIDI control.
public enum PortName {
    public static let inputPrefix = "in"
    public static let outputPrefix = "out"
    public static let midiPrefix = "midi"

    /// The name of the port of mixer input `channel`.
    public static func input(_ channel: String) -> String { "\(inputPrefix)_\(channel)" }
    /// The name of the port of mixer output `channel`.
    public static func output(_ channel: String) -> String { "\(outputPrefix)_\(channel)" }
    /// True if `name` is one of a node's input ports (a mixer input or `midi_in`).
    public static func isInput(_ name: String) -> Bool {
        name.hasPrefix(inputPrefix + "_") || name == "\(midiPrefix)_in"
    }
}
