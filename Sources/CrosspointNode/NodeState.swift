import CrosspointCore
import CrosspointPipeWire
import Glibc

/// A link a person made to one of the node's ports, by names that survive a replug or a
/// restart: our port's `port.name`, the peer's `node.name` and `port.name`.
/// Two records are the same link whatever their `seen` time.
public struct RememberedLink: Codable, Hashable, Sendable, CustomStringConvertible {
    public var port: String
    public var peerNode: String
    public var peerPort: String
    /// When the link was last live (seconds since 1970); absent links are forgotten oldest
    /// first beyond `NodeMemory.absentLimit`. Nil in states saved before it was kept.
    public var seen: Int64?

    enum CodingKeys: String, CodingKey {
        case port, peerNode = "peer.node", peerPort = "peer.port", seen
    }

    public init(port: String, peerNode: String, peerPort: String, seen: Int64? = nil) {
        self.port = port
        self.peerNode = peerNode
        self.peerPort = peerPort
        self.seen = seen
    }

    public static func == (a: RememberedLink, b: RememberedLink) -> Bool {
        a.port == b.port && a.peerNode == b.peerNode && a.peerPort == b.peerPort
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(port)
        hasher.combine(peerNode)
        hasher.combine(peerPort)
    }

    public var description: String {
        PortName.isInput(port) ? "\(peerNode):\(peerPort) -> \(port)" : "\(port) -> \(peerNode):\(peerPort)"
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

    /// The state as the file holds it.
    public var json: JSONValue {
        .object([
            ("format", .string(format)), ("version", .number(Double(version))), ("configured", .string(configured)),
            ("mixer", mixer.json),
            ("links", .array(links.map { link in
                var pairs: [(String, JSONValue)] = [
                    ("port", .string(link.port)), ("peer.node", .string(link.peerNode)), ("peer.port", .string(link.peerPort)),
                ]
                if let seen = link.seen { pairs.append(("seen", .number(Double(seen)))) }
                return .object(pairs)
            })),
        ])
    }

    /// Reads a state from JSON, refusing unknown keys and values of the wrong type.
    public init(json: JSONValue) throws(CrosspointError) {
        let m = try json.members(of: "state", known: ["format", "version", "configured", "mixer", "links"])
        func required(_ key: String) throws(CrosspointError) -> JSONValue {
            guard let value = m[key] else { throw .invalidValue(key: key, reason: "is missing from the state") }
            return value
        }
        format = try required("format").string("format")
        version = try required("version").int("version")
        configured = try required("configured").string("configured")
        mixer = try Preset(json: try required("mixer"), what: "state's mixer")
        links = try (m["links"] ?? .array([])).list("links", limit: 100_000) { item, key throws(CrosspointError) in
            let l = try item.members(of: key, known: ["port", "peer.node", "peer.port", "seen"])
            func text(_ k: String) throws(CrosspointError) -> String {
                guard let v = l[k] else { throw .invalidValue(key: "\(key).\(k)", reason: "is missing") }
                return try v.string("\(key).\(k)")
            }
            let seen = try l["seen"].map { v throws(CrosspointError) in Int64(try v.int("\(key).seen")) }
            return RememberedLink(port: try text("port"), peerNode: try text("peer.node"), peerPort: try text("peer.port"), seen: seen)
        }
    }

    /// The fingerprint of a configuration's shape and channel names.
    public static func fingerprint(_ mixer: Mixer) -> String {
        "\(mixer.inputs)x\(mixer.outputs) [\(mixer.inputChannels.joinedBytes(separator: " "))] [\(mixer.outputChannels.joinedBytes(separator: " "))]"
    }
}

/// Where a node's state lives, and how it is read and written.
///
/// The file is `$XDG_STATE_HOME/crosspoint/<folder>/state.json` (`~/.local/state/...` without
/// XDG_STATE_HOME), where `<folder>` is the node's `node.name` made into one path component
/// (`StateStore.folderName(for:)`): letters, digits, `-`, `_` and `.` stay as they are,
/// every other byte of the name's UTF-8 (and a leading `.`) becomes `%XX`, so two names never
/// share a folder and no name leaves `crosspoint/`.
///
/// Writes are atomic and never follow a symbolic link: a new temporary file created
/// exclusively beside the state (`state.json.tmp-XXXXXXXX`, `O_EXCL|O_NOFOLLOW`), fsync, rename
/// over `state.json`, fsync of the folder; a failed write removes its temporary file. The file
/// is private (0600) and so is the node's folder (0700, tightened on a save if it was wider).
/// Reads never block and never follow a link: `O_NONBLOCK|O_NOFOLLOW`, a regular file only,
/// at most `maximumBytes`, and strict JSON (`JSONCheck`) before libspa's relaxed parser.
public struct StateStore: Sendable {
    /// The largest state file read (a 256 x 256 node's state is about 2 MB).
    public static let maximumBytes = 16 << 20
    /// The longest folder name most file systems take (NAME_MAX).
    public static let maximumFolderBytes = 255

    public let directory: String
    public var file: String { directory + "/state.json" }
    /// The folder earlier versions used for this name, when it differs from `directory` and
    /// can be moved there unambiguously (see `folderName(for:)`).
    let legacyDirectory: String?

    /// The store of the node named `nodeName`. Throws, naming the node, when the name cannot
    /// name a folder (empty, `.`, `..`, or longer than `maximumFolderBytes` once encoded) or
    /// there is no home to keep state in.
    public init(nodeName: String, environment: [String: String] = StateStore.environment()) throws(StateError) {
        let folder = try StateStore.folderName(for: nodeName)
        let base = try StateStore.stateHome(environment) + "/crosspoint/"
        directory = base + folder
        // Before names were encoded, a name was its own folder ('/' made '_'). A name with no
        // '/', '%' or NUL named its folder alone: that folder is moved over, once.
        let unambiguous = !nodeName.utf8.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "%") || $0 == 0 }
        legacyDirectory = unambiguous && nodeName != folder ? base + nodeName : nil
    }

    /// `node.name` as one path component, injectively: the bytes of its UTF-8 in
    /// `[A-Za-z0-9_.-]` stay (a leading `.` excepted), every other byte becomes `%XX`
    /// (upper-case hex). `xp-main` and `studio_2` stay as they are, `a/b` is `a%2Fb`,
    /// `.x` is `%2Ex`, `%` itself is `%25`. Refuses the names no folder should have.
    public static func folderName(for nodeName: String) throws(StateError) -> String {
        guard !nodeName.isEmpty else { throw StateError("an empty node.name cannot name a state folder") }
        guard nodeName != ".", nodeName != ".." else {
            throw StateError("node.name \(nodeName.debugDescription) cannot name a state folder")
        }
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        for (index, byte) in nodeName.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                encoded.append(byte)
            case UInt8(ascii: ".") where index > 0:
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
            guard encoded.count <= maximumFolderBytes else {
                throw StateError("node.name \(String(nodeName.prefix(40)).debugDescription)... is too long to name a state folder (more than \(maximumFolderBytes) bytes once encoded)")
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// `$XDG_STATE_HOME` when it is an absolute path (the XDG spec ignores a relative one), else
    /// `$HOME/.local/state`, else the home directory of the user in the password database.
    static func stateHome(_ environment: [String: String]) throws(StateError) -> String {
        if let xdg = environment["XDG_STATE_HOME"], xdg.startsWithBytes("/") { return xdg }
        if let home = environment["HOME"], home.startsWithBytes("/") { return home + "/.local/state" }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        if getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let dir = entry.pw_dir {
            let home = String(cBytes: dir)
            if home.startsWithBytes("/") { return home + "/.local/state" }
        }
        throw StateError("there is no XDG_STATE_HOME or HOME to keep the state in")
    }

    public static func environment() -> [String: String] {
        var result: [String: String] = [:]
        for key in ["XDG_STATE_HOME", "HOME"] { if let v = getenv(key) { result[key] = String(cBytes: v) } }
        return result
    }

    // MARK: Loading

    /// What `load` found.
    public struct Loaded {
        /// The saved state, nil if there is none or it does not apply.
        public var state: NodeState?
        /// Why a file there was not used (it was moved aside), for a warning.
        public var problem: String?
        /// What else was done (a folder moved from where an earlier version kept it), for the log.
        public var note: String?
    }

    /// The saved state. A file that cannot be read as a state (not a regular file, a symbolic
    /// link, too large, not one complete valid JSON text (a file cut short), not a Crosspoint state) or that was saved under other
    /// module arguments is renamed aside (never deleted) and reported. Temporary files a save
    /// cut short (a killed daemon) are removed.
    public func load(configured: Mixer) -> Loaded {
        var result = Loaded()
        result.note = moveLegacyFolder()
        removeTemporaries()
        let data: [UInt8]
        switch read() {
        case .missing: return result
        case let .unusable(reason):
            result.problem = setAside(reason)
            return result
        case let .contents(bytes): data = bytes
        }
        switch StateStore.decode(data, configured: configured) {
        case let .success(state): result.state = state
        case let .failure(problem): result.problem = setAside(problem.description)
        }
        return result
    }

    /// The state in the bytes of a state file, if it is a Crosspoint state saved under the
    /// module arguments `configured` and every value in it is one the node takes; else why not.
    /// (What `load` does with a file's contents; the state fuzz target feeds it any bytes.)
    public static func decode(_ data: [UInt8], configured: Mixer) -> Result<NodeState, StateError> {
        if let problem = StateStore.notJSONText(data) ?? JSONCheck.problem(data) {
            return .failure(StateError("it is not JSON: \(problem)"))
        }
        let state: NodeState
        do throws(CrosspointError) {
            guard let json = JSONValue(parsing: String(decoding: data, as: UTF8.self)) else {
                throw .invalidValue(key: "state", reason: "it is not JSON")
            }
            state = try NodeState(json: json)
        } catch {
            return .failure(StateError("it cannot be read: \(error)"))
        }
        guard state.format == NodeState.formatTag, state.version == 1 else {
            return .failure(StateError("it is not a Crosspoint state (format '\(state.format)', version \(state.version))"))
        }
        let expected = NodeState.fingerprint(configured)
        guard state.configured == expected else {
            return .failure(StateError("it was saved for \(state.configured), the module arguments now say \(expected)"))
        }
        do throws(CrosspointError) {
            _ = try Mixer(preset: state.mixer)
        } catch {
            return .failure(StateError("\(error)"))
        }
        return .success(state)
    }

    /// Why `data` cannot be JSON text, whatever its structure: JSON is UTF-8 (RFC 8259) and holds no
    /// control character but tab, line feed and carriage return between its tokens (none inside a
    /// string). libspa's parser, which reads the file, is relaxed (bare words, as in PipeWire's
    /// configuration): it took invalid UTF-8 as U+FFFD and cut a bare word at a NUL, so a damaged
    /// file loaded as a state that did not save back as itself (the state fuzz target found one).
    /// `JSONCheck.problem` then checks the structure (a file cut short closed what was open).
    package static func notJSONText(_ data: [UInt8]) -> String? {
        var k = 0
        while k < data.count {
            let byte = data[k]
            if byte < 0x20 {
                guard byte == 0x09 || byte == 0x0A || byte == 0x0D else {
                    return "a control character (0x\(String(byte, radix: 16))) at byte \(k)"
                }
                k += 1
                continue
            }
            guard byte >= 0x80 else { k += 1; continue }
            guard let length = JSONCheck.utf8Length(data, at: k) else { return "bytes that are not UTF-8 at byte \(k)" }
            k += length
        }
        return nil
    }

    private enum ReadResult {
        case missing
        case unusable(String)
        case contents([UInt8])
    }

    /// Reads `state.json` without following a link or waiting on a FIFO or device.
    private func read() -> ReadResult {
        var fd: Int32
        repeat { fd = open(file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            let error = errno
            if error == ENOENT { return .missing }
            if error == ELOOP { return .unusable("it is a symbolic link, and a state file is only read from a regular file") }
            return .unusable("it cannot be opened: \(StateStore.reason(error))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .unusable("it cannot be examined: \(StateStore.reason(errno))") }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG else {
            let what = switch kind {
            case S_IFDIR: "a directory"
            case S_IFIFO: "a FIFO"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFSOCK: "a socket"
            default: "not a regular file"
            }
            return .unusable("it is \(what), not a regular file")
        }
        let tooLarge = "it is larger than the \(StateStore.maximumBytes >> 20) MiB a state file may have"
        guard info.st_size <= StateStore.maximumBytes else { return .unusable(tooLarge) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= StateStore.maximumBytes {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return .unusable("it cannot be read: \(StateStore.reason(errno))")
            }
            bytes += chunk.prefix(count)
        }
        guard bytes.count <= StateStore.maximumBytes else { return .unusable(tooLarge) }
        return .contents(bytes)
    }

    /// Renames `state.json` (whatever it is) to `state.json.bad-<seconds since 1970>`, with
    /// `-2`, `-3` ... when that name is taken, and says so.
    private func setAside(_ reason: String) -> String {
        var stamp = timespec()
        clock_gettime(CLOCK_REALTIME, &stamp)
        var outcome = "could not move it aside: every name for it is taken"
        var info = stat()
        for attempt in 1...100 {
            let aside = file + ".bad-\(stamp.tv_sec)" + (attempt == 1 ? "" : "-\(attempt)")
            guard lstat(aside, &info) != 0 else { continue }  // taken
            outcome = rename(file, aside) == 0 ? "kept it as \(aside)" : "could not move it aside: \(StateStore.reason(errno))"
            break
        }
        return "ignored the saved state \(file): \(reason); \(outcome)"
    }

    /// Removes the temporary files of saves that did not finish (`state.json.tmp-*`, and the
    /// `state.json.tmp` of earlier versions). `unlink` removes a link, never its target.
    private func removeTemporaries() {
        guard let folder = opendir(directory) else { return }
        defer { closedir(folder) }
        // Names are read where the entry holds them, up to their end (strncmp, strlen), never
        // as the whole of d_name: its 256 bytes are not initialised past the name's end, and
        // copying them into a Swift string made valgrind report uninitialised reads here.
        let prefix = "state.json.tmp"
        var names: [[CChar]] = []
        while let entry = readdir(folder) {
            withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { name in
                    if strncmp(name, prefix, prefix.utf8.count) == 0 {
                        names.append(Array(UnsafeBufferPointer(start: name, count: strlen(name) + 1)))
                    }
                }
            }
        }
        for name in names { unlinkat(dirfd(folder), name, 0) }
    }

    /// Moves the folder an earlier version used for this name to where it belongs now, if
    /// there is one and nothing is in the way.
    private func moveLegacyFolder() -> String? {
        guard let legacyDirectory else { return nil }
        var info = stat()
        guard lstat(legacyDirectory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
              lstat(directory, &info) != 0, errno == ENOENT else { return nil }
        guard rename(legacyDirectory, directory) == 0 else {
            return "could not move the state folder \(legacyDirectory) to \(directory): \(StateStore.reason(errno))"
        }
        return "moved the state folder \(legacyDirectory) to \(directory) (node names are encoded now)"
    }

    // MARK: Saving

    /// Writes the state atomically. Throws a message naming the step and the system's reason;
    /// nothing is left behind then (the old state stays as it was).
    public func save(_ state: NodeState) throws(StateError) {
        let data = Array(state.json.text.utf8)
        try makeDirectory()
        let (fd, temporary) = try createTemporary()
        var replaced = false
        defer { if !replaced { unlink(temporary) } }
        var written = 0
        var failure: Int32 = 0
        data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            while written < bytes.count {
                let count = write(fd, base + written, bytes.count - written)
                if count > 0 {
                    written += count
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    failure = count == 0 ? EIO : errno
                    return
                }
            }
        }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        if close(fd) != 0, failure == 0 { failure = errno }
        guard failure == 0 else { throw StateError("cannot write \(file) (its temporary file): \(StateStore.reason(failure))") }
        guard rename(temporary, file) == 0 else {
            throw StateError("cannot replace \(file): \(StateStore.reason(errno))")
        }
        replaced = true
        StateStore.syncDirectory(directory)
    }

    /// Makes the node's folder (and those above it) if it is missing, each private (0700); a
    /// new folder's entry is flushed to disk too. An existing node folder open to others (an
    /// earlier version made it 0755) is made 0700; the folders above it are left as they are.
    private func makeDirectory() throws(StateError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw StateError("cannot save in \(directory): it is not a directory") }
            // Tightened when it is ours; a failure does not stop the save (the file is 0600).
            if info.st_mode & 0o077 != 0, info.st_uid == geteuid() { _ = chmod(directory, info.st_mode & 0o700) }
            return
        }
        // mkdir -p: each missing folder on the way, from the top.
        var path = ""
        for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
            path += "/" + component
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw StateError("cannot make the folder \(path): \(StateStore.reason(errno))")
            }
        }
        if let slash = directory.lastIndex(of: "/") { StateStore.syncDirectory(String(directory[..<slash])) }
    }

    /// A new file beside the state, opened exclusively: never an existing file, never through
    /// a symbolic link (`O_CREAT|O_EXCL` refuses both). Private: 0600 whatever the umask (it
    /// replaces the state file, so an older state file open to others is replaced by a private one).
    private func createTemporary() throws(StateError) -> (fd: Int32, path: String) {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var error: Int32 = EEXIST
        for _ in 0..<100 {
            let suffix = String(decoding: (0..<8).map { _ in letters.randomElement() ?? UInt8(ascii: "x") }, as: UTF8.self)
            let path = file + ".tmp-" + suffix
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 {
                _ = fchmod(fd, 0o600)
                return (fd, path)
            }
            error = errno
            guard error == EEXIST || error == EINTR else { break }
        }
        throw StateError("cannot create a temporary file in \(directory): \(StateStore.reason(error))")
    }

    private static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    static func reason(_ error: Int32) -> String { String(cBytes: strerror(error)) }
}

public struct StateError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
