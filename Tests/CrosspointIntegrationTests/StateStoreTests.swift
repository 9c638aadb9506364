import CrosspointCore
import CrosspointNode
import Foundation
import Testing

/// The state file's store on its own (no daemon): the folder a node name maps to, what is
/// done with files that are not a state, and that a save never follows a link or leaves a
/// temporary file behind. `StateFileTests` checks the same through the real daemon.
@Suite(.serialized)
final class StateStoreTests {
    let home: String

    init() throws {
        home = NSTemporaryDirectory() + "crosspoint-store-\(getpid())-\(UInt32.random(in: 0..<UInt32.max))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: home) }

    func store(_ name: String) throws -> StateStore {
        try StateStore(nodeName: name, environment: ["XDG_STATE_HOME": home])
    }

    static let mixer = try! Mixer(inputs: 2, outputs: 2)

    func state(gain: Double) throws -> NodeState {
        var mixer = StateStoreTests.mixer
        try mixer.setMasterGain(gain)
        return NodeState(configured: NodeState.fingerprint(StateStoreTests.mixer), mixer: mixer.preset, links: [])
    }

    func entries(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// Undoes `folderName(for:)`, to show that it loses nothing.
    static func decode(_ folder: String) -> String? {
        var bytes: [UInt8] = []
        var it = Array(folder.utf8).makeIterator()
        while let byte = it.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = it.next(), let low = it.next(), let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    @Test func ordinaryNamesKeepTheirFolder() throws {
        for name in ["crosspoint", "xp-mem", "a_b", "Studio_2-main", "alsa_output.pci-0000_00_1f.3.analog-stereo", "x.."] {
            #expect(try StateStore.folderName(for: name) == name)
        }
        #expect(try store("xp-mem").file == home + "/crosspoint/xp-mem/state.json")
    }

    @Test func otherNamesAreEncodedIntoOneComponent() throws {
        let expected = [
            "a/b": "a%2Fb", "a_b": "a_b", ".hidden": "%2Ehidden", "...": "%2E..", "a%2Fb": "a%252Fb",
            "my mixer": "my%20mixer", "Küche": "K%C3%BCche", "../x": "%2E.%2Fx", "/": "%2F", "a\u{0}b": "a%00b",
            "tab\there": "tab%09here", "x\u{1B}[2J": "x%1B%5B2J",
        ]
        for (name, folder) in expected {
            #expect(try StateStore.folderName(for: name) == folder, "\(name.debugDescription)")
            #expect(StateStoreTests.decode(folder) == name)
        }
        let stores = try ["a/b", "a_b", "a%2Fb", "%2E", ".x"].map { try store($0).directory }
        #expect(Set(stores).count == stores.count, "distinct names, distinct folders: \(stores)")
        for directory in stores { #expect(directory.hasPrefix(home + "/crosspoint/") && !directory.dropFirst(home.count + 12).contains("/")) }
    }

    @Test func theEncodingIsInjective() throws {
        let alphabet = Array("aZ09._-/%. é\u{0}\u{7F}")
        var seen: [String: String] = [:]
        for _ in 0..<20000 {
            let name = String((0..<Int.random(in: 1...6)).map { _ in alphabet.randomElement()! })
            guard name != ".", name != ".." else { continue }
            let folder = try StateStore.folderName(for: name)
            #expect(!folder.contains("/") && folder != "." && folder != ".." && !folder.hasPrefix("."))
            if let other = seen[folder] { #expect(other == name, "\(other.debugDescription) and \(name.debugDescription) share \(folder)") }
            seen[folder] = name
            #expect(StateStoreTests.decode(folder) == name)
        }
    }

    @Test func namesThatCannotNameAFolderAreRefused() throws {
        for name in ["", ".", ".."] {
            #expect(throws: StateError.self) { try StateStore.folderName(for: name) }
        }
        #expect(throws: StateError.self) { try StateStore.folderName(for: String(repeating: "x", count: 256)) }
        #expect(throws: StateError.self) { try StateStore.folderName(for: String(repeating: "é", count: 43)) }  // 258 bytes encoded
        #expect(try StateStore.folderName(for: String(repeating: "x", count: 255)).count == 255)
    }

    @Test func aRelativeStateHomeIsIgnored() throws {
        #expect(try StateStore(nodeName: "ok", environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]).directory == "/h/.local/state/crosspoint/ok")
        let fromPasswd = try StateStore(nodeName: "ok", environment: ["XDG_STATE_HOME": "", "HOME": "relative"]).directory
        #expect(fromPasswd.hasPrefix("/") && fromPasswd.hasSuffix("/.local/state/crosspoint/ok"), "\(fromPasswd)")
    }

    @Test func saveAndLoad() throws {
        let store = try store("xp")
        #expect(store.load(configured: StateStoreTests.mixer).state == nil)
        try store.save(state(gain: 0.5))
        let loaded = store.load(configured: StateStoreTests.mixer)
        #expect(loaded.problem == nil && loaded.state?.mixer.number(.masterGain) == 0.5)
        #expect(entries(store.directory) == ["state.json"])
    }

    @Test func aSaveNeverFollowsALinkAndLeavesNothingBehind() throws {
        let store = try store("xp")
        try FileManager.default.createDirectory(atPath: store.directory, withIntermediateDirectories: true)
        let victim = home + "/victim"
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        // The fixed temporary name of earlier versions, and the state itself, as links.
        try FileManager.default.createSymbolicLink(atPath: store.file + ".tmp", withDestinationPath: victim)
        try FileManager.default.createSymbolicLink(atPath: store.file, withDestinationPath: victim)
        try store.save(state(gain: 0.25))
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        var info = stat()
        #expect(lstat(store.file, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "the link was replaced by a file")
        #expect(store.load(configured: StateStoreTests.mixer).state?.mixer.number(.masterGain) == 0.25)
        #expect(entries(store.directory) == ["state.json"], "loading removed the stale temporary name (the link, not its target)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    }

    @Test func aFailedSaveThrowsAndLeavesNoTemporaryFile() throws {
        let store = try store("xp")
        try FileManager.default.createDirectory(atPath: store.file + "/in-the-way", withIntermediateDirectories: true)
        for _ in 0..<3 {
            #expect(throws: StateError.self) { try store.save(state(gain: 0.5)) }
        }
        #expect(entries(store.directory) == ["state.json"])
        try FileManager.default.removeItem(atPath: store.file)
        try store.save(state(gain: 0.5))
        #expect(store.load(configured: StateStoreTests.mixer).state?.mixer.number(.masterGain) == 0.5)
    }

    /// Each thing that is not a state file is reported, moved aside, and never blocks.
    @Test func unreadableStatesAreSetAside() throws {
        let cases: [(String, (String) throws -> Void, String)] = [
            ("a directory", { try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: false) }, "it is a directory"),
            ("a FIFO", { #expect(mkfifo($0, 0o644) == 0) }, "it is a FIFO"),
            ("a link to /dev/zero", { try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: "/dev/zero") }, "symbolic link"),
            ("a huge file", { path in
                #expect(FileManager.default.createFile(atPath: path, contents: nil))
                #expect(truncate(path, off_t(StateStore.maximumBytes + 1)) == 0)
            }, "larger than the 16 MiB"),
            ("garbage", { try Data((0..<4096).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: $0)) }, "it is not JSON: "),
            ("JSON nested a million deep", { try String(repeating: "[", count: 1_000_000).write(toFile: $0, atomically: false, encoding: .utf8) }, "it is not JSON: it nests deeper than 64 at byte 64"),
            ("another program's JSON", { try #"{ "format": "x", "version": 1e300, "configured": 1 }"#.write(toFile: $0, atomically: false, encoding: .utf8) }, "cannot be read"),
        ]
        for (what, make, reason) in cases {
            let store = try store("xp-\(what.filter(\.isLetter))")
            try FileManager.default.createDirectory(atPath: store.directory, withIntermediateDirectories: true)
            try make(store.file)
            let start = Date()
            let loaded = store.load(configured: StateStoreTests.mixer)
            #expect(Date().timeIntervalSince(start) < 5, "\(what): loading took \(Date().timeIntervalSince(start)) s")
            #expect(loaded.state == nil)
            #expect(loaded.problem?.contains(reason) == true, "\(what): \(loaded.problem ?? "no problem reported")")
            #expect(loaded.problem?.contains("kept it as \(store.file).bad-") == true, "\(what): \(loaded.problem ?? "")")
            let kept = entries(store.directory)
            #expect(kept.count == 1 && kept[0].hasPrefix("state.json.bad-"), "\(what): \(kept)")
            try store.save(state(gain: 0.75))
            #expect(store.load(configured: StateStoreTests.mixer).state?.mixer.number(.masterGain) == 0.75, "\(what): saves again")
        }
    }

    /// A state whose values are out of range or of the wrong shape is refused, never trapped on.
    @Test func hostileStatesAreRefused() throws {
        let fingerprint = NodeState.fingerprint(StateStoreTests.mixer)
        let preset = #""format": "crosspoint-preset", "version": 1"#
        let bodies = [
            #"{ \#(preset), "inputs": 99999999999999999999, "outputs": 2, "matrix": [] }"#,
            #"{ \#(preset), "inputs": -9223372036854775808, "outputs": 2, "matrix": [] }"#,
            #"{ \#(preset), "inputs": 2, "outputs": 2, "matrix": [[1e300, 0], [0, 1]] }"#,
            #"{ \#(preset), "inputs": 2, "outputs": 2, "matrix": [[1], [0, 1, 2]] }"#,
            #"{ \#(preset), "inputs": 2, "outputs": 2, "matrix": [[1, 0], [0, 1]], "gain.in": [1] }"#,
            #"{ \#(preset), "inputs": 2, "outputs": 2, "matrix": [[1, 0], [0, 1]], "ramp.ms": -1e308 }"#,
            #"{ \#(preset), "inputs": 2, "outputs": 2, "matrix": [[1, 0], [0, 1]], "input.position": ["", "x"] }"#,
        ]
        for (k, body) in bodies.enumerated() {
            let store = try store("hostile-\(k)")
            try FileManager.default.createDirectory(atPath: store.directory, withIntermediateDirectories: true)
            let text = #"{ "format": "crosspoint-state", "version": 1, "configured": "\#(fingerprint)", "links": [], "mixer": \#(body) }"#
            try text.write(toFile: store.file, atomically: false, encoding: .utf8)
            let loaded = store.load(configured: StateStoreTests.mixer)
            #expect(loaded.state == nil && loaded.problem != nil, "\(body): \(loaded.problem ?? "accepted")")
        }
    }

    /// What is not JSON text at all is refused before libspa's relaxed parser reads it: it took
    /// invalid UTF-8 as U+FFFD and cut a bare word at a NUL (the state fuzz target found a file
    /// that loaded as a state that did not save back as itself: Tests/Fuzz/corpus/state/not-utf8-nul).
    @Test func bytesThatCannotBeJSONTextAreRefusedByPlace() throws {
        let fingerprint = NodeState.fingerprint(StateStoreTests.mixer)
        let good = Array(#"{ "format": "crosspoint-state", "version": 1, "configured": "\#(fingerprint)", "links": [], "mixer": { "format": "crosspoint-preset", "version": 1, "inputs": 2, "outputs": 2, "matrix": [[1, 0], [0, 1]] } }"#.utf8)
        guard case .success = StateStore.decode(good, configured: StateStoreTests.mixer) else {
            Issue.record("a valid state is refused")
            return
        }
        #expect(StateStore.notJSONText(Array("[ \"gäme ✓ 🎧\", \"\\u0000\" ]\t\r\n".utf8)) == nil, "UTF-8 text and escapes are JSON text")
        let at = good.firstIndex(of: UInt8(ascii: "["))!
        let cases: [([UInt8], String)] = [
            ([0x00], "a control character (0x0) at byte"),
            ([0x01], "a control character (0x1) at byte"),
            ([0xFE, 0xFF], "bytes that are not UTF-8 at byte"),
            ([0xC3], "bytes that are not UTF-8 at byte"),            // a sequence cut short
            ([0xC0, 0xAF], "bytes that are not UTF-8 at byte"),      // overlong
            ([0xED, 0xA0, 0x80], "bytes that are not UTF-8 at byte"),  // a surrogate
            ([0xF4, 0x90, 0x80, 0x80], "bytes that are not UTF-8 at byte"),  // above U+10FFFF
        ]
        for (inserted, reason) in cases {
            var bytes = good
            bytes.insert(contentsOf: inserted, at: at)
            guard case let .failure(problem) = StateStore.decode(bytes, configured: StateStoreTests.mixer) else {
                Issue.record("\(inserted) inside a state is accepted")
                continue
            }
            #expect(problem.description.contains("it is not JSON: \(reason) \(at)"), "\(inserted): \(problem)")
        }
        // What the fuzz target found: refused, not loaded.
        let found = try [UInt8](Data(contentsOf: repositoryRoot.appendingPathComponent("Tests/Fuzz/corpus/state/not-utf8-nul")))
        #expect(StateStore.notJSONText(found) != nil)
    }

    /// A real state cut short anywhere is refused (libspa's relaxed parser closed what was open:
    /// cut 10 bytes short it loaded without the last link, cut inside `"ramp.ms": 10` with a
    /// 1 ms ramp and no virtual devices), kept aside byte for byte, and the reason names the end.
    /// Cuts at every 10% (0% is an empty file), 10 bytes short, and at the closing brace.
    @Test func aTruncatedStateIsRefusedAndSetAside() throws {
        let configured = StateStoreTests.mixer
        var mixer = configured
        try mixer.setDevices(["sink game description=Game", "source stream-mix channels=0,1"])
        try mixer.setRamp(milliseconds: 10)
        try mixer.setCrosspoint(input: 0, output: 1, gain: 0.5)
        let links = [
            RememberedLink(port: "in_FL", peerNode: "player", peerPort: "output_FL", seen: 1_764_000_000),
            RememberedLink(port: "out_FR", peerNode: "alsa_output.usb-1.analog", peerPort: "playback_FR"),
        ]
        let state = NodeState(configured: NodeState.fingerprint(configured), mixer: mixer.preset, links: links)
        let whole = try store("xp-whole")
        try whole.save(state)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole.file)))
        #expect(whole.load(configured: configured).state == state, "the whole state loads")
        #expect(bytes.count > 200 && String(decoding: bytes, as: UTF8.self).contains(#""ramp.ms": 10"#))
        // The file ends in "}\n": without its line end it is the same document (it loads), so the
        // last byte cut is the closing brace.
        let close = try #require(bytes.lastIndex(of: UInt8(ascii: "}")))
        #expect(close == bytes.count - 2)
        switch StateStore.decode(Array(bytes[..<(close + 1)]), configured: configured) {
        case let .success(loaded): #expect(loaded == state)
        case let .failure(problem): Issue.record("the state without its line end is refused: \(problem)")
        }
        let cuts = (0...9).map { bytes.count * $0 / 10 } + [bytes.count - 10, close]
        for cut in cuts {
            let store = try store("xp-cut-\(cut)")
            try FileManager.default.createDirectory(atPath: store.directory, withIntermediateDirectories: true)
            let part = Array(bytes[..<cut])
            try Data(part).write(to: URL(fileURLWithPath: store.file))
            let loaded = store.load(configured: configured)
            #expect(loaded.state == nil, "cut at \(cut) of \(bytes.count) loads")
            let problem = loaded.problem ?? ""
            #expect(problem.contains("ignored the saved state \(store.file): it is not JSON: "), "cut at \(cut): \(problem)")
            #expect(problem.contains(cut == 0 ? "there is no value" : "the text ends inside "), "cut at \(cut): \(problem)")
            #expect(problem.contains("kept it as \(store.file).bad-"), "cut at \(cut): \(problem)")
            let kept = entries(store.directory)
            #expect(kept.count == 1 && kept.first?.hasPrefix("state.json.bad-") == true, "cut at \(cut): \(kept)")
            if let aside = kept.first {
                #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.directory + "/" + aside))) == part, "cut at \(cut): the bytes are kept")
            }
        }
    }

    /// The state file and its temporary are 0600, the node's folder and the folders a save makes
    /// 0700; a state file and folder an earlier version left open to others (0644, 0755) are
    /// private after the next save.
    @Test func theStateIsPrivate() throws {
        func mode(_ path: String) -> mode_t {
            var info = stat()
            return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
        }
        let store = try store("xp")
        try store.save(state(gain: 0.5))
        #expect(mode(home + "/crosspoint") == 0o700)
        #expect(mode(store.directory) == 0o700)
        #expect(mode(store.file) == 0o600)
        // As an earlier version left them.
        #expect(chmod(store.directory, 0o755) == 0 && chmod(store.file, 0o644) == 0)
        try store.save(state(gain: 0.25))
        #expect(mode(store.directory) == 0o700)
        #expect(mode(store.file) == 0o600)
        #expect(store.load(configured: StateStoreTests.mixer).state?.mixer.number(.masterGain) == 0.25)
        // Whatever the umask.
        let old = umask(0)
        defer { umask(old) }
        try store.save(state(gain: 0.75))
        #expect(mode(store.file) == 0o600)
    }

    @Test func aFolderOfAnEarlierVersionIsMovedToItsEncodedName() throws {
        let old = try store("xp")  // the same layout an earlier version used for "my mixer"
        try old.save(state(gain: 0.5))
        try FileManager.default.moveItem(atPath: old.directory, toPath: home + "/crosspoint/my mixer")
        let store = try store("my mixer")
        #expect(store.directory == home + "/crosspoint/my%20mixer")
        let loaded = store.load(configured: StateStoreTests.mixer)
        #expect(loaded.state?.mixer.number(.masterGain) == 0.5 && loaded.note?.contains("moved the state folder") == true)
        #expect(!FileManager.default.fileExists(atPath: home + "/crosspoint/my mixer"))
        // A name with '/' shared its folder with another name: never moved.
        try FileManager.default.createDirectory(atPath: home + "/crosspoint/a_b", withIntermediateDirectories: true)
        #expect(try self.store("a/b").load(configured: StateStoreTests.mixer).note == nil)
        #expect(FileManager.default.fileExists(atPath: home + "/crosspoint/a_b"))
    }
}
