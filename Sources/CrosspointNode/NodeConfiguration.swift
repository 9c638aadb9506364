import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// A module argument that is wrong, and why.
public struct ArgumentError: Error, Equatable, CustomStringConvertible {
    public let argument: String
    public let reason: String
    public var description: String { "argument '\(argument)': \(reason)" }

    public init(argument: String, reason: String) {
        self.argument = argument
        self.reason = reason
    }
}

/// One documented module argument (the README's table is made from `NodeConfiguration.arguments`).
public struct ModuleArgument: Sendable {
    public let name: String
    public let example: String
    public let summary: String
}

/// What the module's arguments ask for: the node's name and properties, and its mixer.
public struct NodeConfiguration: Sendable {
    public var nodeName = "crosspoint"
    public var nodeDescription: String
    public var mixer: Mixer
    /// Save the state on every change and restore it on load (`state.persist`).
    public var persistState = true
    /// Remember the links people make and re-make them when the peer returns (`state.links`).
    public var rememberLinks = true
    /// Other `node.*`, `media.*`, `object.*`, `priority.*` properties, passed to the node as given.
    public var extraProperties: [(String, String)] = []

    public static let arguments: [ModuleArgument] = [
        .init(name: PW_KEY_NODE_NAME, example: "\"crosspoint\"", summary: "Node name, used by pw-link and `crosspoint`"),
        .init(name: PW_KEY_NODE_DESCRIPTION, example: "\"Crosspoint 2x1\"", summary: "Name shown in Helvum and qpwgraph"),
        .init(name: "inputs", example: "2", summary: "Number of input ports, 1 to 256 (default: from input.position, else 2)"),
        .init(name: "outputs", example: "1", summary: "Number of output ports, 1 to 256 (default: from output.position, else 2)"),
        .init(name: "input.position", example: "[ FL FR ]", summary: "Channel names of the inputs (default MONO; FL FR; AUX0 AUX1 ...)"),
        .init(name: "output.position", example: "[ MONO ]", summary: "Channel names of the outputs (same defaults)"),
        .init(name: "matrix", example: "[ [ 0.5 ] [ 0.5 ] ]", summary: "Cross-point gains: one row per input, each one gain per output"),
        .init(name: "channel-map", example: "[ -1 -1 0 1 ]", summary: "Core Audio channel map instead of a matrix: per output, its input or -1"),
        .init(name: "gain.master", example: "1.0", summary: "Master gain (linear)"),
        .init(name: "ramp.ms", example: "10", summary: "Ramp time of every gain change, ms (0 = jump)"),
        .init(name: "state.persist", example: "true", summary: "Save the state in $XDG_STATE_HOME/crosspoint/<node.name>/ and restore it on load"),
        .init(name: "state.links", example: "true", summary: "Remember the links made to the ports and re-make them when the peer returns"),
        .init(name: "midi", example: "true", summary: "MIDI control: a midi_in port for controllers and a midi_out port for their feedback (default false)"),
        .init(name: "midi.map", example: "[ \"cc 1 7 gain.in.0\" ]",
              summary: "MIDI mappings, one string each: CONTROL KEY [toggle or momentary] [nopickup] (README: MIDI control)"),
        .init(name: "devices", example: "[ { type = sink name = game description = \"Game\" } ]",
              summary: "Virtual devices applications choose: sinks feeding inputs, sources carrying outputs (README: Crosspoint as your sound output); streams sent (send, to=) and received (receive, from= or session=) over the network (README: Beyond one machine)"),
        .init(name: "targets", example: "[ { device = default outputs = [ FL FR ] } ]",
              summary: "Outputs that follow a device: a sink by node.name, or default, matched by position or from an offset"),
        .init(name: "duck", example: "[ \"mic lowers=music_FL,music_FR depth=-15\" ]",
              summary: "Ducking rules, one string each: TRIGGER lowers=CHANNEL,CHANNEL [depth=DB] [threshold=DB] ... (README: Ducking)"),
        .init(name: "delay.out", example: "{ FL = 180 FR = 180 }",
              summary: "Delays of outputs in ms (0 to 1000), by output name or index, or a list of one per output"),
    ]

    static let passThroughPrefixes = ["node.", "media.", "object.", "priority.", "audio.rate"]

    /// Parses the module's SPA-JSON arguments (nil or empty: all defaults). Every error names
    /// the argument the person wrote: a key given twice, a key with no value, an unknown key,
    /// a value of the wrong form or out of range.
    public init(arguments text: String?) throws(ArgumentError) {
        var pairs: [(String, SPAJSONValue)] = []
        // ASCII white space told without Unicode's property tables (BENCHMARKS.md, "Footprint").
        if let text, !text.allSatisfy({ c in c.asciiValue.map { $0 == 0x20 || (0x09...0x0D).contains($0) } ?? c.isWhitespace }) {
            guard case let .object(object)? = SPAJSONValue(parsing: text) else {
                throw ArgumentError(argument: String(text.prefix(80)), reason: "the arguments are not a SPA-JSON object { key = value ... }")
            }
            pairs = object
        }
        var values: [String: SPAJSONValue] = [:]
        var extra: [(String, String)] = []
        let known = NodeConfiguration.arguments.map(\.name).elementSet
        var seen = Set<String>()
        for (key, value) in pairs {
            guard seen.insert(key).inserted else {
                throw ArgumentError(argument: key, reason: "is given twice; give each argument once")
            }
            if case .missing = value {
                throw ArgumentError(argument: key, reason: "has no value (write \(key) = value)")
            }
            if known.contains(key) {
                values[key] = value
            } else if NodeConfiguration.passThroughPrefixes.contains(where: { key.startsWithBytes($0) }) {
                extra.append((key, value.text))
            } else {
                throw ArgumentError(
                    argument: key,
                    reason: "unknown argument; known are " + NodeConfiguration.arguments.map(\.name).joinedBytes(separator: ", "))
            }
        }

        let inputNames = try values["input.position"].map { v throws(ArgumentError) in try Self.names(v, "input.position") }
        let outputNames = try values["output.position"].map { v throws(ArgumentError) in try Self.names(v, "output.position") }
        let rows = try values["matrix"].map { v throws(ArgumentError) in try Self.matrix(v) }
        let map = try values["channel-map"].map { v throws(ArgumentError) in try Self.channelMap(v) }
        if rows != nil && map != nil {
            throw ArgumentError(argument: "channel-map", reason: "give either matrix or channel-map, not both")
        }
        // Each count comes from one argument, and an error about it names that argument.
        let (inputs, inputsFrom): (Int, String) =
            if let v = values["inputs"] { (try Self.count(v, "inputs"), "inputs") }
            else if let inputNames { (inputNames.count, "input.position") }
            else if let rows { (rows.count, "matrix") }
            else { (2, "inputs") }
        let (outputs, outputsFrom): (Int, String) =
            if let v = values["outputs"] { (try Self.count(v, "outputs"), "outputs") }
            else if let outputNames { (outputNames.count, "output.position") }
            else if let first = rows?.first { (first.count, "matrix") }
            else if let map { (map.sources.count, "channel-map") }
            else { (2, "outputs") }
        for (count, argument, what) in [(inputs, inputsFrom, "inputs"), (outputs, outputsFrom, "outputs")]
        where !Mixer.channelLimit.contains(count) {
            throw ArgumentError(argument: argument, reason: "gives \(count) \(what); a node has 1 to 256")
        }
        try Self.check("input.position") { () throws(CrosspointError) in
            if let inputNames { try Mixer.checkChannels(inputNames, count: inputs, what: "input") }
        }
        try Self.check("output.position") { () throws(CrosspointError) in
            if let outputNames { try Mixer.checkChannels(outputNames, count: outputs, what: "output") }
        }
        var mixer: Mixer
        do {
            mixer = try Mixer(inputs: inputs, outputs: outputs, inputChannels: inputNames, outputChannels: outputNames)
        } catch {
            throw ArgumentError(argument: "inputs", reason: error.description)  // checked above; not expected
        }
        // Before the matrix: the channels the devices add are part of the shape a matrix covers.
        if let v = values["devices"] {
            let texts = try Self.deviceTexts(v)
            try Self.apply("devices", to: &mixer) { m throws(CrosspointError) in try m.setDevices(texts) }
        }
        try Self.apply("matrix", to: &mixer) { m throws(CrosspointError) in if let rows { try m.setMatrix(rows: rows) } }
        try Self.apply("channel-map", to: &mixer) { m throws(CrosspointError) in if let map { try m.apply(map) } }
        if let v = values["gain.master"] {
            let gain = try Self.number(v, "gain.master")
            try Self.apply("gain.master", to: &mixer) { m throws(CrosspointError) in try m.setMasterGain(gain) }
        }
        if let v = values["ramp.ms"] {
            let ms = try Self.number(v, "ramp.ms")
            try Self.apply("ramp.ms", to: &mixer) { m throws(CrosspointError) in try m.setRamp(milliseconds: ms) }
        }
        var flags: [String: Bool] = [:]
        for key in ["state.persist", "state.links", "midi"] {
            guard let v = values[key] else { continue }
            guard case let .bool(flag) = v else {
                throw ArgumentError(argument: key, reason: "must be true or false, got \(v)")
            }
            flags[key] = flag
        }
        if let v = values[PW_KEY_NODE_NAME] {
            guard case let .string(name) = v, !name.isEmpty else {
                throw ArgumentError(argument: PW_KEY_NODE_NAME, reason: "must be a non-empty string, got \(v)")
            }
            nodeName = name
        }
        if let on = flags["midi"] { mixer.setMIDIPorts(on) }
        if let v = values["midi.map"] {
            let texts = try Self.lines(v, argument: "midi.map", item: "mapping", example: "\"cc 1 7 gain.in.0\"", plural: "mappings")
            try Self.apply("midi.map", to: &mixer) { m throws(CrosspointError) in try m.setMIDIMappings(texts) }
        }
        if let v = values["targets"] {
            let texts = try Self.targetTexts(v)
            try Self.apply("targets", to: &mixer) { m throws(CrosspointError) in try m.setTargets(texts) }
        }
        if let v = values["duck"] {
            let texts = try Self.lines(v, argument: "duck", item: "rule", example: "\"mic lowers=music_FL depth=-15\"", plural: "rules")
            try Self.apply("duck", to: &mixer) { m throws(CrosspointError) in try m.setDucking(texts) }
        }
        if let v = values["delay.out"] {
            let delays = try Self.outputDelays(v, in: mixer)
            try Self.apply("delay.out", to: &mixer) { m throws(CrosspointError) in
                for (j, ms) in delays { try m.setOutputDelay(j, milliseconds: ms) }
            }
        }
        self.mixer = mixer
        nodeDescription = values[PW_KEY_NODE_DESCRIPTION]?.text ?? "Crosspoint \(inputs)x\(outputs)"
        extraProperties = extra
        persistState = flags["state.persist"] ?? true
        rememberLinks = flags["state.links"] ?? true
    }

    /// An argument that is a list of lines of text (`midi.map`, `duck`): each item a string,
    /// checked by the model afterwards.
    private static func lines(_ value: SPAJSONValue, argument: String, item: String, example: String, plural: String) throws(ArgumentError) -> [String] {
        guard case let .array(items) = value else {
            throw ArgumentError(argument: argument, reason: "must be a list of \(plural) like [ \(example) ], got \(value)")
        }
        var texts: [String] = []
        for (n, entry) in items.enumerated() {
            guard case let .string(text) = entry else {
                throw ArgumentError(argument: argument, reason: "\(item) \(n) is not a string like \(example): \(entry)")
            }
            texts.append(text)
        }
        return texts
    }

    private static func apply(
        _ argument: String, to mixer: inout Mixer, _ change: (inout Mixer) throws(CrosspointError) -> Void
    ) throws(ArgumentError) {
        do { try change(&mixer) } catch { throw ArgumentError(argument: argument, reason: error.description) }
    }

    /// A check that changes nothing, its error named after `argument`.
    private static func check(_ argument: String, _ body: () throws(CrosspointError) -> Void) throws(ArgumentError) {
        do { try body() } catch { throw ArgumentError(argument: argument, reason: error.description) }
    }

    private static func number(_ value: SPAJSONValue, _ argument: String) throws(ArgumentError) -> Double {
        guard case let .number(n) = value else {
            throw ArgumentError(argument: argument, reason: "must be a number, got \(value)")
        }
        return n
    }

    private static func count(_ value: SPAJSONValue, _ argument: String) throws(ArgumentError) -> Int {
        let n = try number(value, argument)
        do { return try Mixer.count(n, key: argument) } catch {
            throw ArgumentError(argument: argument, reason: "must be a whole number from 1 to 256, got \(value)")
        }
    }

    private static func names(_ value: SPAJSONValue, _ argument: String) throws(ArgumentError) -> [String] {
        switch value {
        case let .array(items): return items.map(\.text)
        case let .string(s): return s.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        default: throw ArgumentError(argument: argument, reason: "must be a list of channel names like [ FL FR ], got \(value)")
        }
    }

    private static func matrix(_ value: SPAJSONValue) throws(ArgumentError) -> [[Double]] {
        guard case let .array(rows) = value, !rows.isEmpty else {
            throw ArgumentError(argument: "matrix", reason: "must be a list of rows like [ [ 1 0 ] [ 0 1 ] ], got \(value)")
        }
        var result: [[Double]] = []
        for (i, row) in rows.enumerated() {
            guard case let .array(cells) = row else {
                throw ArgumentError(argument: "matrix", reason: "row \(i) is not a list of gains: \(row)")
            }
            var gains: [Double] = []
            for cell in cells {
                guard case let .number(g) = cell else {
                    throw ArgumentError(argument: "matrix", reason: "row \(i) holds \(cell), which is not a number")
                }
                gains.append(g)
            }
            result.append(gains)
        }
        return result
    }

    private static func channelMap(_ value: SPAJSONValue) throws(ArgumentError) -> ChannelMap {
        guard case let .array(items) = value, !items.isEmpty else {
            throw ArgumentError(argument: "channel-map", reason: "must be a list like [ 0 0 ] or [ -1 -1 0 1 ], got \(value)")
        }
        var sources: [Int] = []
        for item in items {
            guard case let .number(n) = item, let index = Int(exactly: n) else {
                throw ArgumentError(argument: "channel-map", reason: "\(item) is not an input index or -1")
            }
            sources.append(index)
        }
        return ChannelMap(sources)
    }
}

extension NodeConfiguration {
    /// The module arguments as Markdown, for the README.
    public static func markdownTable() -> String {
        (["| argument | example | meaning |", "|---|---|---|"]
            + arguments.map { "| `\($0.name)` | `\($0.example)` | \($0.summary) |" }).joinedBytes(separator: "\n")
    }
}
