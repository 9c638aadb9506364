#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// The ready-made drop-ins that come with Crosspoint ("setups"), and the copies of them that
/// `crosspoint setup enable` puts into PipeWire's drop-in folder.
///
/// A setup is a `NAME.conf` file in the setups folder: `$CROSSPOINT_SETUP_DIR` if set (only
/// it), else `share/crosspoint/setups` beside the command's own `bin` (`/usr/share/...` for the
/// Debian package, `~/.local/share/...` after `scripts/install`), else the checkout's `conf/`
/// for a command built in one (`.build/.../crosspoint`), else `/usr/share/crosspoint/setups`.
/// `NAME-standalone.conf` is not a setup (a process's configuration, not a drop-in). Its
/// description is its first line, a comment (`# Crosspoint: ...`). What a setup's file and an
/// enabled copy hold, and how they are read: SetupFile.swift.
package struct Setups {
    package let directory: String

    package init(directory: String) { self.directory = directory }

    /// The places looked in, in order.
    package static func candidates(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        if let explicit = environment["CROSSPOINT_SETUP_DIR"], !explicit.isEmpty { return [explicit] }
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let parts = executable.split(separator: "/", omittingEmptySubsequences: false)
            // .../bin/crosspoint -> .../share/crosspoint/setups
            candidates.append(parts.dropLast(2).joined(separator: "/") + "/share/crosspoint/setups")
            // CHECKOUT/.build/<triple>/release/crosspoint -> CHECKOUT/conf
            if let build = parts.lastIndex(of: ".build") {
                let checkout = parts[..<build].joined(separator: "/")
                if FileManager.default.fileExists(atPath: checkout + "/Package.swift") { candidates.append(checkout + "/conf") }
            }
        }
        candidates.append("/usr/share/crosspoint/setups")
        return candidates
    }

    /// The setups folder, or nil when none of the places exists.
    package static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        candidates(environment: environment).first { isDirectory($0) }
    }

    package static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The setups' names, sorted.
    package func names() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasSuffix(".conf") }.map { String($0.dropLast(5)) }
            .filter { SetupFile.isValidName($0) && !$0.hasSuffix("-standalone") }.sorted()
    }

    package func path(of name: String) -> String { directory + "/" + name + ".conf" }

    /// The shipped text of setup `name`, or nil when there is no such setup.
    package func text(of name: String) -> [UInt8]? {
        guard SetupFile.isValidName(name), !name.hasSuffix("-standalone") else { return nil }
        return FileManager.default.contents(atPath: path(of: name)).map { [UInt8]($0) }
    }

}

/// PipeWire's drop-in folder that setups are enabled in: the user's
/// (`$XDG_CONFIG_HOME/pipewire/pipewire.conf.d`, `~/.config/...` without it) or, with
/// `--system`, the machine's (`/etc/pipewire/pipewire.conf.d`).
package struct DropInFolder {
    package let path: String
    package let system: Bool

    package static func user(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandError) -> DropInFolder {
        let config: String
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            config = xdg
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            config = home + "/.config"
        } else {
            throw .invalid("neither XDG_CONFIG_HOME nor HOME is set to an absolute path: no folder to enable the setup in")
        }
        return DropInFolder(path: config + "/pipewire/pipewire.conf.d", system: false)
    }

    package static let machine = DropInFolder(path: "/etc/pipewire/pipewire.conf.d", system: true)

    package func file(for name: String) -> String { path + "/" + name + ".conf" }

    /// What a person runs for PipeWire to read the folder again ("load" or "drop" the setup).
    package func restartHint(_ verb: String) -> String {
        system ? "restart PipeWire to \(verb) it: systemctl --user restart pipewire (as each user)"
            : "restart PipeWire to \(verb) it: systemctl --user restart pipewire"
    }
}
