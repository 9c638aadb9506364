/// Virtual devices: what applications and the desktop's sound settings choose. A virtual sink
/// is a playback device (`pw-play --target game`, `paplay --device=game`, the default device)
/// whose channels feed mixer inputs; a virtual source is a recording device
/// (`pw-record --target stream-mix`, a call's microphone) that carries mixer outputs.
///
/// Part of the `Mixer` (the `devices` key of the table), so the module arguments, set-param,
/// Props, the state file, presets and the command line carry them like any key. The node makes
/// one PipeWire device per entry (CrosspointNode, VirtualDeviceHost.swift); this file is the
/// model alone. A device is written as one line of text, the same everywhere:
///
///     sink|source NAME [position=P,P...] [channels=C,C...] [default] [description=TEXT...]
///     send|receive NAME to=|from=ADDRESS:PORT [session=NAME] ... (NetworkStreams.swift)
///     sink game description=Game
///     sink chat position=MONO
///     source stream-mix channels=stream_FL,stream_FR description=Stream mix
///
/// `position`: the device's channels (SPA channel names; FL,FR when absent). `channels`: the
/// mixer channels they carry, one per position, by name or index (inputs for a sink, outputs
/// for a source); when absent, `NAME_POSITION` (`game_FL`): channels the mixer lacks are
/// added to it (`Mixer.setDevices`). `default`: made the desktop's default device when it is
/// created. `description`, last, takes the rest of the line: the name the sound settings show.
public struct VirtualDevice: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A playback device: applications play into it, its channels feed mixer inputs.
        case sink
        /// A recording device: mixer outputs feed it, applications record from it.
        case source
        /// A stream sent over the network: mixer outputs feed it (NetworkStreams.swift).
        case send
        /// A stream received from the network: its channels feed mixer inputs.
        case receive

        /// True for the kinds whose channels feed mixer inputs (sink, receive); the others
        /// carry mixer outputs.
        public var feedsInputs: Bool { self == .sink || self == .receive }
        /// True for the kinds that go over the network.
        public var isNetwork: Bool { self == .send || self == .receive }
    }

    /// At most this many devices a node.
    public static let limit = 32
    /// The longest device name (a PipeWire `node.name`).
    public static let nameLimit = 48
    /// The longest description.
    public static let descriptionLimit = 127

    public var kind: Kind
    /// The device's `node.name`: what `--target`, `--device` and `wpctl` use.
    public var name: String
    /// The device's `node.description`: what the sound settings show.
    public var description: String
    /// Its channels' positions (`audio.position`).
    public var positions: [String]
    /// The mixer channels (names) its positions carry, in order: inputs for a sink, outputs for
    /// a source.
    public var channels: [String]
    /// Made the default device when created.
    public var isDefault: Bool
    /// Where and how a `send` or `receive` goes over the network (nil for the other kinds).
    public var network: NetworkStream?

    /// The key every error names.
    static let key = "devices"

    public init(kind: Kind, name: String, description: String? = nil, positions: [String] = ["FL", "FR"],
                channels: [String]? = nil, isDefault: Bool = false, network: NetworkStream? = nil) throws(CrosspointError) {
        try VirtualDevice.check(name: name)
        try VirtualDevice.check(positions: positions)
        self.kind = kind
        self.name = name
        self.description = description ?? name
        self.positions = positions
        self.channels = channels ?? VirtualDevice.defaultChannels(name: name, positions: positions)
        self.isDefault = isDefault
        self.network = kind.isNetwork ? network ?? NetworkStream() : nil
        try VirtualDevice.check(description: self.description)
        if let network = self.network { try network.check(sending: kind == .send, name: name) }
        guard !(isDefault && kind.isNetwork) else {
            throw .invalidValue(key: Self.key, reason: "'\(name)' goes over the network: it cannot be the default device")
        }
        guard self.channels.count == positions.count else {
            throw .invalidValue(key: Self.key, reason: "'\(name)' has \(positions.count) positions but \(self.channels.count) channels; give one channel per position")
        }
    }

    /// The mixer channels a device gets when none are given: `NAME_POSITION`, the name's
    /// characters that a channel name cannot hold written as `_` (`stream-mix` -> `stream_mix_FL`).
    public static func defaultChannels(name: String, positions: [String]) -> [String] {
        let stem = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        return positions.map { "\(stem)_\($0)" }
    }

    /// The PipeWire channel positions a device may have (`spa_type_audio_channel`'s short names).
    public static let knownPositions: Set<String> = {
        var names: Set<String> = [
            "MONO", "FL", "FR", "FC", "LFE", "SL", "SR", "FLC", "FRC", "RC", "RL", "RR", "TC", "TFL", "TFC",
            "TFR", "TRL", "TRC", "TRR", "RLC", "RRC", "FLW", "FRW", "LFE2", "FLH", "FCH", "FRH", "TFLC",
            "TFRC", "TSL", "TSR", "LLFE", "RLFE", "BC", "BLC", "BRC",
        ]
        for n in 0..<64 { names.insert("AUX\(n)") }
        return names
    }()

    static func check(name: String) throws(CrosspointError) {
        guard (1...nameLimit).contains(name.utf8.count),
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }),
              name.first.map({ $0.isLetter || $0.isNumber }) == true else {
            throw .invalidValue(key: key, reason: "'\(name.prefix(80))' is not a device name (1 to \(nameLimit) ASCII letters, digits, -, _ and ., starting with a letter or digit)")
        }
    }

    static func check(positions: [String]) throws(CrosspointError) {
        guard (1...64).contains(positions.count) else {
            throw .invalidValue(key: key, reason: "a device has 1 to 64 positions, got \(positions.count)")
        }
        var seen = Set<String>()
        for p in positions {
            guard knownPositions.contains(p) else {
                throw .invalidValue(key: key, reason: "'\(p.prefix(40))' is not a channel position (FL, FR, FC, LFE, RL, RR, SL, SR, MONO, AUX0 to AUX63, ...)")
            }
            guard seen.insert(p).inserted else { throw .invalidValue(key: key, reason: "position \(p) appears twice") }
        }
    }

    static func check(description: String) throws(CrosspointError) {
        guard (1...descriptionLimit).contains(description.utf8.count),
              !description.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidValue(key: key, reason: "a description is 1 to \(descriptionLimit) bytes of printable text")
        }
    }
}

extension VirtualDevice {
    /// Reads `sink|source NAME [position=...] [channels=...] [default] [description=...]`.
    /// Channels given as indices are kept as indices here; `Mixer.setDevices` names them.
    public init(text: String) throws(CrosspointError) {
        let usage = "write sink|source NAME [position=FL,FR] [channels=C,C] [default] [description=TEXT], e.g. 'sink game description=Game', "
            + "or send|receive NAME to=|from=ADDRESS:PORT [session=NAME] [format=S16BE] [latency=MS] [protocol=rtp/vban/aes67] [group=NAME] [ptp=PATH]"
        var rest = Substring(text)
        func word() -> Substring? {
            rest = rest.drop(while: { $0 == " " })
            guard !rest.isEmpty else { return nil }
            let w = rest.prefix(while: { $0 != " " })
            rest = rest.dropFirst(w.count)
            return w
        }
        guard let kindWord = word() else { throw .invalidValue(key: Self.key, reason: "an empty device: \(usage)") }
        guard let kind = Kind(rawValue: kindWord.lowercased()) else {
            throw .invalidValue(key: Self.key, reason: "'\(kindWord.prefix(40))' in '\(text.prefix(80))' is not sink, source, send or receive: \(usage)")
        }
        guard let name = word() else { throw .invalidValue(key: Self.key, reason: "'\(text.prefix(80))' names no device: \(usage)") }
        var positions: [String]?, channels: [String]?, description: String?, isDefault = false
        var network = NetworkStream()
        let options = "position=, channels=, default, description=" + (kind.isNetwork ? ", " + NetworkStream.optionNames : "")
        while let option = word() {
            func list(_ value: Substring) -> [String] {
                value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
            if option.lowercased() == "default" { isDefault = true; continue }
            guard let eq = option.firstIndex(of: "=") else {
                throw .invalidValue(key: Self.key, reason: "'\(option.prefix(40))' in '\(text.prefix(80))' is not an option (\(options))")
            }
            let value = option[option.index(after: eq)...]
            switch option[..<eq].lowercased() {
            case "position": positions = list(value)
            case "channels": channels = list(value)
            case "description":
                // The rest of the line, spaces kept (trailing ones dropped).
                var all = String(value) + String(rest)
                while all.last == " " { all.removeLast() }
                description = all
                rest = ""
            case let other where kind.isNetwork:
                guard try NetworkStream.read(option: String(other), value: value, into: &network, sending: kind == .send) else {
                    throw .invalidValue(key: Self.key, reason: "'\(option.prefix(40))' in '\(text.prefix(80))' is not an option (\(options))")
                }
            default:
                throw .invalidValue(key: Self.key, reason: "'\(option.prefix(40))' in '\(text.prefix(80))' is not an option (\(options))")
            }
        }
        try self.init(kind: kind, name: String(name), description: description, positions: positions ?? ["FL", "FR"],
                      channels: channels, isDefault: isDefault, network: kind.isNetwork ? network : nil)
    }

    /// The device as `init(text:)` reads it, every field written (description last).
    public var text: String {
        "\(kind.rawValue) \(name) position=\(positions.joinedBytes(separator: ",")) channels=\(channels.joinedBytes(separator: ","))"
            + (isDefault ? " default" : "") + (network.map { " " + $0.text(sending: kind == .send) } ?? "") + " description=\(description)"
    }
}

extension Mixer {
    /// Replaces the virtual devices (lines of text; VirtualDevice). Each device's channels are
    /// found by name or index among the inputs (a sink) or outputs (a source); names the mixer
    /// lacks become new channels at the end, fed like their position (`addChannels`). Names are
    /// unique among the devices. Nothing changes if anything is wrong.
    public mutating func setDevices(_ texts: [String]) throws(CrosspointError) {
        guard texts.count <= VirtualDevice.limit else {
            throw .invalidValue(key: VirtualDevice.key, reason: "holds \(texts.count) devices; at most \(VirtualDevice.limit)")
        }
        var next = self
        var parsed: [VirtualDevice] = []
        for (n, text) in texts.enumerated() {
            var device: VirtualDevice
            do { device = try VirtualDevice(text: text) } catch {
                throw .invalidValue(key: VirtualDevice.key, reason: "device \(n) '\(text.prefix(80))': \(error.description)")
            }
            guard !parsed.contains(where: { $0.name == device.name }) else {
                throw .invalidValue(key: VirtualDevice.key, reason: "device \(n): the name '\(device.name)' is given twice")
            }
            do { device.channels = try next.deviceChannels(device) } catch {
                throw .invalidValue(key: VirtualDevice.key, reason: "device \(n) '\(device.name)': \(error.description)")
            }
            parsed.append(device)
        }
        next.devices = parsed
        self = next
    }

    /// The names of a device's channels, adding those the mixer lacks.
    private mutating func deviceChannels(_ device: VirtualDevice) throws(CrosspointError) -> [String] {
        let isSink = device.kind.feedsInputs
        let existing = isSink ? inputChannels : outputChannels
        var names: [String] = [], missing: [(name: String, position: String)] = []
        for (channel, position) in zip(device.channels, device.positions) {
            if let index = Int(channel) {
                guard existing.indices.contains(index) else {
                    throw .indexOutOfRange(what: isSink ? "input" : "output", index: index, count: existing.count)
                }
                names.append(existing[index])
            } else {
                if !existing.contains(channel) { missing.append((channel, position)) }
                names.append(channel)
            }
        }
        guard names.elementSet.count == names.count else {
            throw .invalidValue(key: VirtualDevice.key, reason: "a channel is given twice")
        }
        if !missing.isEmpty { try addChannels(missing, inputs: isSink) }
        return names
    }

    /// Adds channels at the end of the inputs (or outputs), each fed like its position: a new
    /// input plays on the outputs of the same position, a new output takes the inputs of the
    /// same position (MONO matches every position). The position of a channel is its name or,
    /// for `NAME_POSITION`, the part after the last `_`.
    mutating func addChannels(_ added: [(name: String, position: String)], inputs isInput: Bool) throws(CrosspointError) {
        var next = self
        if isInput {
            try next.setChannels(inputs: inputChannels + added.map(\.name))
        } else {
            try next.setChannels(outputs: outputChannels + added.map(\.name))
        }
        for (k, channel) in added.enumerated() {
            let index = (isInput ? inputs : outputs) + k
            let others = isInput ? next.outputChannels : next.inputChannels
            for (other, name) in others.enumerated() {
                let theirs = Mixer.position(of: name)
                let match = theirs == channel.position || theirs == "MONO" || channel.position == "MONO"
                let (i, j) = isInput ? (index, other) : (other, index)
                try next.setCrosspoint(input: i, output: j, gain: match ? 1 : 0)
            }
        }
        self = next
    }

    /// A channel's position: its name, or the part after its last `_` if that is a position.
    static func position(of channel: String) -> String {
        if let underscore = channel.lastIndex(of: "_") {
            let tail = String(channel[channel.index(after: underscore)...])
            if VirtualDevice.knownPositions.contains(tail) { return tail }
        }
        return channel
    }
}
