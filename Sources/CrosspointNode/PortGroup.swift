import CCrosspointShim
import CPipeWire
import CrosspointPipeWire

/// One kind of a node's ports, in order: the handles `pw_filter_add_port` gave (what the data
/// thread's port table holds) and the name each port was made under. A node has an input group
/// and an output group of mono audio ports, one port per mixer channel, and, while MIDI control
/// is on, a MIDI input and a MIDI output group of one port each; the code that adds, renames
/// and removes ports is written once, over the groups.
///
/// Lives on the main loop; the data thread sees only the port tables made from `handles`.
struct PortGroup {
    enum Kind: CaseIterable {
        /// `in_<channel>`: a mixer input.
        case audioInput
        /// `out_<channel>`: a mixer output.
        case audioOutput
        /// `midi_in`: MIDI control from controllers (its one channel is `in`).
        case midiInput
        /// `midi_out`: feedback to them (its one channel is `out`).
        case midiOutput

        var isMIDI: Bool { self == .midiInput || self == .midiOutput }
    }

    let kind: Kind
    /// The port objects, in channel order.
    private(set) var handles: [UnsafeMutableRawPointer?] = []
    /// The channel each port carries now (its name is `prefix_channel`).
    private(set) var channels: [String] = []

    init(_ kind: Kind) { self.kind = kind }

    var count: Int { handles.count }

    var direction: spa_direction {
        switch kind {
        case .audioInput, .midiInput: SPA_DIRECTION_INPUT
        case .audioOutput, .midiOutput: SPA_DIRECTION_OUTPUT
        }
    }

    /// The start of each port's `port.name`.
    var prefix: String {
        switch kind {
        case .audioInput: PortName.inputPrefix
        case .audioOutput: PortName.outputPrefix
        case .midiInput, .midiOutput: PortName.midiPrefix
        }
    }

    /// The port's `format.dsp`: what the graph may link it to.
    var format: String { kind.isMIDI ? MIDIControlCenter.portFormat : "32 bit float mono audio" }

    /// The first part of a port's `object.path` after the node's name, as an adapter's ports
    /// have (`input_0`, `output_3`, `control_0`, `notify_0`).
    var pathPrefix: String {
        switch kind {
        case .audioInput: "input"
        case .audioOutput: "output"
        case .midiInput: "control"
        case .midiOutput: "notify"
        }
    }

    /// The `port.name` of a port carrying `channel`.
    func portName(_ channel: String) -> String { "\(prefix)_\(channel)" }

    mutating func append(_ handle: UnsafeMutableRawPointer?, channel: String) {
        handles.append(handle)
        channels.append(channel)
    }

    /// Port `index` is now `handle` (a renamed port's replacement, made under its new name).
    mutating func replace(_ index: Int, with handle: UnsafeMutableRawPointer?) {
        handles[index] = handle
    }

    /// Port `index` is to carry `channel` (its replacement is made under that name).
    mutating func rename(_ index: Int, to channel: String) {
        channels[index] = channel
    }

    /// Removes the ports after the first `count`: their handles and names, in order.
    mutating func removeAll(after count: Int) -> [(handle: UnsafeMutableRawPointer?, name: String)] {
        guard count < handles.count else { return [] }
        let gone = zip(handles[count...], channels[count...]).map { ($0, portName($1)) }
        handles.removeLast(handles.count - count)
        channels.removeLast(channels.count - count)
        return gone
    }
}
