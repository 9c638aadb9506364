/// A node's MIDI control as part of its state: whether it has its MIDI ports, and its mappings.
/// Set through the parameter table like every other key (`midi`, `midi.map`), so the module
/// arguments, set-param, the state file, presets and the command line all carry it the same way.
///
/// A mapping is written as one line of text, the same everywhere:
///
///     CONTROL KEY [toggle|momentary] [nopickup]
///     cc 1 7 gain.in.0
///     cc14 1 0 gain.master nopickup
///     note 1 60 mute.in.FL momentary
///     bend 9 gain.out.1
public struct MIDISetup: Equatable, Sendable {
    /// At most this many mappings (a controller has a few hundred controls at most).
    public static let mappingLimit = 256

    /// The node has a `midi_in` port (controllers drive the mappings) and a `midi_out` port
    /// (the mapped controls are sent every change, for motorized faders and lights).
    public var ports = false
    public private(set) var mappings: [MIDIMapping] = []

    public init() {}

    /// Mappings from their lines of text; an error names the line and what is wrong with it.
    /// The same control may move several keys; the same control and key twice is refused.
    public mutating func setMappings(_ texts: [String]) throws(CrosspointError) {
        guard texts.count <= Self.mappingLimit else {
            throw .invalidValue(key: "midi.map", reason: "holds \(texts.count) mappings; at most \(Self.mappingLimit)")
        }
        var next: [MIDIMapping] = []
        for (n, text) in texts.enumerated() {
            let mapping: MIDIMapping
            do { mapping = try MIDIMapping(text: text) } catch {
                throw .invalidValue(key: "midi.map", reason: "mapping \(n) '\(text.prefix(80))': \(error.description)")
            }
            if next.contains(where: { $0.control == mapping.control && $0.key == mapping.key }) {
                throw .invalidValue(key: "midi.map", reason: "mapping \(n) '\(mapping.text)' is given twice")
            }
            next.append(mapping)
        }
        mappings = next
    }

    /// The mappings as lines of text.
    public var texts: [String] { mappings.map(\.text) }
}

extension MIDIMapping {
    /// Reads `CONTROL KEY [toggle|momentary] [nopickup]` (see `MIDISetup`).
    public init(text: String) throws(CrosspointError) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let usage = "write CONTROL KEY [toggle|momentary] [nopickup], e.g. 'cc 1 7 gain.in.0' or 'note 1 60 mute.in.0 momentary', or CONTROL scene.recall NAME [TIME]"
        guard let first = words.first else { throw .invalidValue(key: "midi.map", reason: "an empty mapping: \(usage)") }
        let controlWords = first.lowercased() == "bend" ? 2 : 3
        guard words.count > controlWords else {
            throw .invalidValue(key: "midi.map", reason: "'\(text.prefix(80))' names no key: \(usage)")
        }
        let control = try MIDIControl(text: words[..<controlWords].joinedBytes(separator: " "))
        if words[controlWords] == SceneRecall.key {
            // CONTROL scene.recall NAME [TIME]: a press recalls the scene.
            let rest = Array(words[(controlWords + 1)...])
            guard (1...2).contains(rest.count) else {
                throw .invalidValue(key: "midi.map", reason: "'\(text.prefix(80))': write CONTROL scene.recall NAME [TIME], e.g. 'program 1 5 scene.recall show 10s'")
            }
            try self.init(control: control, recall: try SceneRecall(.names(rest)))
            return
        }
        var switchMode: Switch?, pickup: Bool?
        for option in words[(controlWords + 1)...] {
            switch option.lowercased() {
            case "toggle": switchMode = .toggle
            case "momentary": switchMode = .momentary
            case "nopickup": pickup = false
            case "pickup": pickup = true
            default:
                throw .invalidValue(key: "midi.map", reason: "'\(option.prefix(40))' in '\(text.prefix(80))' is not an option (toggle, momentary, pickup, nopickup)")
            }
        }
        try self.init(control: control, key: words[controlWords], switchMode: switchMode, pickup: pickup)
    }

    /// The mapping as `init(text:)` reads it, defaults left out.
    public var text: String {
        if case let .recall(recall) = law {
            return "\(control) \(key) " + (recall.milliseconds == 0 ? recall.name : "\(recall.name) \(Gain.format(recall.milliseconds))ms")
        }
        var text = "\(control) \(key)"
        if switchMode == .momentary { text += " momentary" }
        if law != .onOff && !pickup { text += " nopickup" }
        return text
    }
}

extension Mixer {
    /// Switches the MIDI ports on or off.
    public mutating func setMIDIPorts(_ on: Bool) { midi.ports = on }

    /// Replaces the MIDI mappings (lines of text). Each key must name a parameter of this mixer
    /// now (`gain.in.4` on a node of 4 inputs is refused); a mapping whose channel goes later
    /// stays, and moves nothing until the node has it again.
    public mutating func setMIDIMappings(_ texts: [String]) throws(CrosspointError) {
        var setup = midi
        try setup.setMappings(texts)
        for (n, mapping) in setup.mappings.enumerated() {
            do { _ = try Parameter(key: mapping.key, in: self) } catch {
                throw .invalidValue(key: "midi.map", reason: "mapping \(n) '\(mapping.text)': \(error.description)")
            }
        }
        midi = setup
    }
}
