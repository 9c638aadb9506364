#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore
import Glibc

/// The folder presets live in, by name only: a name from a request never becomes any other path.
package struct PresetStore: Sendable {
    package let directory: String

    package static func defaultDirectory() -> String { configDirectory() + "/presets" }

    /// `$XDG_CONFIG_HOME/crosspoint` (an absolute XDG_CONFIG_HOME only), else `~/.config/crosspoint`:
    /// where the serve token and the presets live.
    package static func configDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? "/root") + "/.config"
        return config + "/crosspoint"
    }

    /// 1 to 64 of A-Z a-z 0-9 _ - ., not starting with a dot.
    package static func check(_ name: String) throws {
        let allowed = name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x2D || c == 0x2E
        }
        guard (1...64).contains(name.utf8.count), allowed, !name.hasPrefix(".") else {
            throw APIError(400, "a preset name is 1 to 64 letters, digits, _, - or . (not starting with a dot); got '\(name.prefix(80).description.printable)'", key: "name")
        }
    }

    private func path(_ name: String) throws -> String {
        try PresetStore.check(name)
        return directory + "/" + name + ".json"
    }

    package func read(_ name: String) throws -> String {
        let path = try path(name)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw APIError(404, "there is no preset '\(name)'", key: "name")
        }
        return String(decoding: data, as: UTF8.self)
    }

    package func write(_ name: String, _ text: String) throws {
        let path = try path(name)
        do {
            try PrivateFiles.makeFolder(directory)
            try PrivateFiles.write(path, text)
        } catch {
            throw APIError(500, "cannot write preset '\(name)' in \(directory.printable): \(reason(error))", key: "name")
        }
    }

    package func delete(_ name: String) throws {
        let path = try path(name)
        guard unlink(path) == 0 else {
            throw APIError(errno == ENOENT ? 404 : 500, "cannot remove preset '\(name)': \(String(cString: strerror(errno)))", key: "name")
        }
    }

    /// `[{"name", "inputs", "outputs"}]`, by name; files that are not presets are left out.
    package func list() -> String {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
            .filter { (try? PresetStore.check($0)) != nil }.sorted()
        let entries: [JSONValue] = names.compactMap { name in
            guard let text = try? read(name), let preset = try? PresetFile.decode(text, source: name) else { return nil }
            return .object([("name", .string(name)), ("inputs", .number(Double(preset.inputs))), ("outputs", .number(Double(preset.outputs)))])
        }
        return JSONValue.array(entries).compactText
    }
}
