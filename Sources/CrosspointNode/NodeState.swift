import CrosspointCore
import CrosspointPipeWire
import FoundationEssentials
import Glibc

/// A link a person made to one of the node's ports, by names that survive a replug or a
/// restart: our port's `port.name`, the peer's `node.name` and `port.name`.
public struct RememberedLink: Codable, Hashable, Sendable, CustomStringConvertible {
    public var port: String
    public var peerNode: String
    public var peerPort: String

    enum CodingKeys: String, CodingKey {
        case port, peerNode = "peer.node", peerPort = "peer.port"
    }

    public init(port: String, peerNode: String, peerPort: String) {
        self.port = port
        self.peerNode = peerNode
        self.peerPort = peerPort
    }

    public var description: String {
        port.hasPrefix("in_") ? "\(peerNode):\(peerPort) -> \(port)" : "\(port) -> \(peerNode):\(peerPort)"
    }
}

/// What a node keeps across restarts: its mixer (in the preset format) and its links, with the
/// shape and channel names its module arguments asked for when it was saved. A state saved
/// under other arguments does not apply: editing the drop-in wins.
public struct NodeState: Codable, Equatable, Sendable {
    public static let formatTag = "crosspoint-state"
    public var format = NodeState.formatTag
    public var version = 1
    /// `inputs x outputs [input channels] [output channels]` of the module arguments.
    public var configured: String
    public var mixer: Preset
    public var links: [RememberedLink]

    public init(configured: String, mixer: Preset, links: [RememberedLink]) {
        self.configured = configured
        self.mixer = mixer
        self.links = links
    }

    /// The fingerprint of a configuration's shape and channel names.
    public static func fingerprint(_ mixer: Mixer) -> String {
        "\(mixer.inputs)x\(mixer.outputs) [\(mixer.inputChannels.joined(separator: " "))] [\(mixer.outputChannels.joined(separator: " "))]"
    }
}

/// Where a node's state lives: `$XDG_STATE_HOME/crosspoint/<node.name>/state.json`
/// (`~/.local/state/...` without XDG_STATE_HOME). Writes are atomic: a temporary file,
/// fsync, rename, fsync of the folder.
public struct StateStore: Sendable {
    public let directory: String
    public var file: String { directory + "/state.json" }

    public init(nodeName: String, environment: [String: String] = StateStore.environment()) {
        let base = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "/tmp") + "/.local/state")
        let safeName = String(nodeName.map { $0 == "/" ? "_" : $0 })
        directory = base + "/crosspoint/" + safeName
    }

    public static func environment() -> [String: String] {
        var result: [String: String] = [:]
        for key in ["XDG_STATE_HOME", "HOME"] { if let v = getenv(key) { result[key] = String(cString: v) } }
        return result
    }

    /// The saved state, nil if there is none. A file that cannot be read as a state, or that
    /// was saved under other module arguments, is renamed aside (never deleted) and reported.
    public func load(configured: Mixer) -> (state: NodeState?, problem: String?) {
        guard let data = FileManager.default.contents(atPath: file) else { return (nil, nil) }
        do {
            let state = try JSONDecoder().decode(NodeState.self, from: data)
            guard state.format == NodeState.formatTag, state.version == 1 else {
                return (nil, setAside("it is not a Crosspoint state (format '\(state.format)', version \(state.version))"))
            }
            let expected = NodeState.fingerprint(configured)
            guard state.configured == expected else {
                return (nil, setAside("it was saved for \(state.configured), the module arguments now say \(expected)"))
            }
            _ = try Mixer(preset: state.mixer)
            return (state, nil)
        } catch let error as CrosspointError {
            return (nil, setAside("\(error)"))
        } catch {
            return (nil, setAside("it cannot be read: \(error)"))
        }
    }

    private func setAside(_ reason: String) -> String {
        var stamp = timespec()
        clock_gettime(CLOCK_REALTIME, &stamp)
        let aside = file + ".bad-\(stamp.tv_sec)"
        let moved = rename(file, aside) == 0
        return "ignored the saved state \(file): \(reason); " + (moved ? "kept it as \(aside)" : "could not move it aside")
    }

    /// Writes the state atomically.
    public func save(_ state: NodeState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(state)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = file + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StateError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced else {
            unlink(temporary)
            throw StateError("cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, file) == 0 else {
            throw StateError("cannot replace \(file): \(String(cString: strerror(errno)))")
        }
        let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { fsync(dir); close(dir) }
    }
}

public struct StateError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
