/// Outputs that follow a device: a group of mixer outputs linked to a device by name, or to
/// whatever the default device is, and kept linked to it by the node (CrosspointNode,
/// OutputFollower.swift) as devices come and go and the default changes.
///
/// Part of the `Mixer` (the `targets` key of the table): module arguments, set-param, Props,
/// the state file and presets carry them like any key. One line of text each:
///
///     DEVICE [outputs=C,C...] [offset=N]
///     default                                   every output, to the default sink, by position
///     default outputs=mon_FL,mon_FR             two outputs follow the default sink
///     alsa_output.usb-MOTU outputs=FL,FR offset=2
///                                               outputs FL and FR to the interface's channels 3-4
///
/// DEVICE is a sink's `node.name`, or `default` (the default sink). `outputs` are mixer outputs
/// by name or index (all when absent), stored by name. Without `offset`, each output goes to
/// the device's channel of its position (`FL` to `playback_FL`; `mon_FL` is at FL too); with
/// `offset=N`, the outputs in order go to the device's channels N, N+1, ... (as `crosspoint
/// route --offset` does).
public struct OutputTarget: Equatable, Sendable {
    /// At most this many groups a node.
    public static let limit = 16
    static let key = "targets"

    /// A sink's `node.name`, or `default`.
    public var device: String
    /// The outputs (names); empty: all of them.
    public var outputs: [String]
    /// Into the device's channels from this one, in order; nil: by position.
    public var offset: Int?

    public var followsDefault: Bool { device == "default" }

    public init(device: String, outputs: [String] = [], offset: Int? = nil) throws(CrosspointError) {
        guard (1...255).contains(device.utf8.count),
              device.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "," && !($0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? true) }) else {
            throw .invalidValue(key: Self.key, reason: "'\(device.prefix(80))' is not a device name (a node.name, or default)")
        }
        if let offset, !(0...63).contains(offset) {
            throw .invalidValue(key: Self.key, reason: "offset \(offset) is outside 0...63")
        }
        self.device = device
        self.outputs = outputs
        self.offset = offset
    }

    /// Reads `DEVICE [outputs=C,C...] [offset=N]`.
    public init(text: String) throws(CrosspointError) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        let usage = "write DEVICE [outputs=C,C] [offset=N], e.g. 'default' or 'alsa_output.usb-MOTU outputs=FL,FR offset=2'"
        guard let first = words.first else { throw .invalidValue(key: Self.key, reason: "an empty target: \(usage)") }
        var outputs: [String] = [], offset: Int?
        for word in words.dropFirst() {
            if word.hasPrefix("outputs=") {
                outputs = word.dropFirst("outputs=".count).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                guard !outputs.contains(where: \.isEmpty) else {
                    throw .invalidValue(key: Self.key, reason: "'\(word.prefix(80))' has an empty output: \(usage)")
                }
            } else if word.hasPrefix("offset=") {
                let digits = word.dropFirst("offset=".count)
                guard digits.count <= 3, let n = Int(digits) else {
                    throw .invalidValue(key: Self.key, reason: "'\(word.prefix(40))' is not an offset from 0 to 63")
                }
                offset = n
            } else {
                throw .invalidValue(key: Self.key, reason: "'\(word.prefix(40))' in '\(text.prefix(80))' is not an option (outputs=, offset=): \(usage)")
            }
        }
        try self.init(device: String(first), outputs: outputs, offset: offset)
    }

    /// The target as `init(text:)` reads it.
    public var text: String {
        device + (outputs.isEmpty ? "" : " outputs=" + outputs.joinedBytes(separator: ",")) + (offset.map { " offset=\($0)" } ?? "")
    }

    /// The outputs of `mixer` this group links, by index, in order (names it no longer has left out).
    public func outputIndices(in mixer: Mixer) -> [Int] {
        outputs.isEmpty ? Array(0..<mixer.outputs) : outputs.compactMap { mixer.outputChannels.firstIndex(of: $0) }
    }
}

extension Mixer {
    /// Replaces the output groups (lines of text; OutputTarget). Outputs are found by name or
    /// index and kept by name; an output is in one group at most. Nothing changes if anything
    /// is wrong.
    public mutating func setTargets(_ texts: [String]) throws(CrosspointError) {
        guard texts.count <= OutputTarget.limit else {
            throw .invalidValue(key: OutputTarget.key, reason: "holds \(texts.count) groups; at most \(OutputTarget.limit)")
        }
        var parsed: [OutputTarget] = []
        var taken = Set<String>()
        for (n, text) in texts.enumerated() {
            var target: OutputTarget
            do {
                target = try OutputTarget(text: text)
                target.outputs = try target.outputs.map { token throws(CrosspointError) in outputChannels[try outputIndex(token)] }
            } catch {
                throw .invalidValue(key: OutputTarget.key, reason: "target \(n) '\(text.prefix(80))': \(error.description)")
            }
            for name in target.outputs.isEmpty ? outputChannels : target.outputs where !taken.insert(name).inserted {
                throw .invalidValue(key: OutputTarget.key, reason: "target \(n) '\(text.prefix(80))': output \(name) is in another group")
            }
            parsed.append(target)
        }
        targets = parsed
    }

    /// A channel's position, for matching it with a device's channel (`mon_FL` is at FL).
    public static func channelPosition(_ channel: String) -> String { position(of: channel) }
}
