#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import CrosspointControl
import CrosspointCore
import Glibc

/// `crosspoint setup list|enable|disable`: the ready-made drop-ins (Setups.swift), enabled by
/// copying one into PipeWire's drop-in folder. Needs no daemon.
struct SetupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "List, enable and disable the ready-made drop-ins that come with Crosspoint.",
        discussion: """
        A setup is a commented PipeWire drop-in (one or more Crosspoint nodes and their module \
        arguments). Installing Crosspoint enables none: `enable` copies one into your \
        ~/.config/pipewire/pipewire.conf.d/ (with --system into /etc/pipewire/pipewire.conf.d/, \
        for every user), and PipeWire loads it when it restarts. Edit the copy freely: once \
        changed it is yours, and `enable` no longer overwrites it nor `disable` removes it.

        The setups are read from $CROSSPOINT_SETUP_DIR, else share/crosspoint/setups beside the \
        command's bin folder, else /usr/share/crosspoint/setups.

        Examples:
          crosspoint setup list
          crosspoint setup enable crosspoint
          systemctl --user restart pipewire
          crosspoint setup disable crosspoint
          sudo crosspoint setup enable --system crosspoint
        """,
        subcommands: [SetupListCommand.self, SetupEnableCommand.self, SetupDisableCommand.self])
}

/// Where: the user's drop-in folder, or the machine's.
struct SetupScope: ParsableArguments {
    @Flag(help: "The machine's drop-in folder, /etc/pipewire/pipewire.conf.d (needs root), instead of yours.")
    var system = false

    func folder() throws -> DropInFolder { system ? .machine : try .user() }
}

/// The setups folder, or an error saying where it was looked for.
private func locateSetups() throws -> Setups {
    guard let directory = Setups.locate() else {
        let places = Setups.candidates()
        if let explicit = ProcessInfo.processInfo.environment["CROSSPOINT_SETUP_DIR"], !explicit.isEmpty {
            throw CommandError.invalid("no setups folder: $CROSSPOINT_SETUP_DIR is \(explicit.printable), which is not a folder")
        }
        throw CommandError.invalid("no setups folder: looked in " + places.map(\.printable).joined(separator: ", "))
    }
    return Setups(directory: directory)
}

private func readFile(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

struct SetupListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the setups, and where each is enabled.",
        discussion: """
        State: "enabled" (a copy as shipped), "enabled, edited" (a copy changed since: yours), \
        "enabled, older" (an unchanged copy of an earlier version: `enable` updates it), \
        "not enabled", or "a file of yours" (a file of that name that `enable` did not write).
        """)

    @OptionGroup var scope: SetupScope
    @Flag(help: "Print JSON: a list of { name, description, file, state }.") var json = false

    struct Entry: Encodable {
        let name: String
        let description: String
        /// The drop-in this setup would be or is enabled as.
        let file: String
        /// enabled, edited, older, disabled, foreign.
        let state: String
    }

    func run() throws {
        let setups = try locateSetups()
        let folder = try scope.folder()
        let entries = setups.names().map { name -> Entry in
            let shipped = setups.text(of: name) ?? []
            let file = folder.file(for: name)
            let state: String
            if let bytes = readFile(file) {
                let copy = EnabledCopy(reading: bytes, name: name)
                switch copy.state {
                case .unchanged: state = copy.body == shipped ? "enabled" : "older"
                case .changed: state = "edited"
                case .foreign: state = "foreign"
                }
            } else {
                state = "disabled"
            }
            return Entry(name: name, description: SetupFile.description(of: shipped), file: file, state: state)
        }
        if json {
            print(try JSONText.encode(entries), terminator: "")
            return
        }
        guard !entries.isEmpty else {
            print("no setups in \(setups.directory)")
            return
        }
        let words = ["enabled": "enabled", "older": "enabled, older", "edited": "enabled, edited",
                     "foreign": "a file of yours", "disabled": "not enabled"]
        let terminal = Terminal(colour: .auto, width: nil)
        printTable([["SETUP", "STATE", "DESCRIPTION"]] + entries.map { [$0.name, words[$0.state] ?? $0.state, $0.description] },
                   terminal: terminal)
        print("\n(from \(setups.directory); enabled in \(folder.path))")
    }
}

struct SetupEnableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable",
        abstract: "Copy a setup into PipeWire's drop-in folder (loaded when PipeWire restarts).",
        discussion: """
        Refuses to overwrite a file of that name that it did not write or that was edited since; \
        an unchanged copy of an earlier version is updated.

        Examples:
          crosspoint setup enable crosspoint
          sudo crosspoint setup enable --system crosspoint
        """)

    @OptionGroup var scope: SetupScope
    @Argument(help: "The setup's name (see `crosspoint setup list`).") var name: String
    @Flag(help: "Print JSON: { setup, file, action (enabled, updated, unchanged), restart }.") var json = false

    struct Report: Encodable {
        let setup: String
        let file: String
        let action: String
        let restart: String
    }

    func run() throws {
        let setups = try locateSetups()
        guard SetupFile.isValidName(name), let shipped = setups.text(of: name) else {
            let (known, close) = NameSuggestions.rank(name, setups.names()) { [$0] }
            let suggestion = NameSuggestions.phrase(close)
            throw CommandError.invalid("unknown setup '\(name.printable)'; " + (suggestion.isEmpty ? "" : suggestion + " ")
                + (known.isEmpty ? "there are none in \(setups.directory)" : "the setups are: " + known.joined(separator: ", ")))
        }
        let folder = try scope.folder()
        let file = folder.file(for: name)
        let wanted = EnabledCopy.contents(name: name, shipped: shipped)
        var action = "enabled"
        if let existing = readFile(file) {
            switch EnabledCopy(reading: existing, name: name).state {
            case .unchanged:
                action = existing == wanted ? "unchanged" : "updated"
            case .changed:
                throw CommandError.file(file, "edited since `crosspoint setup enable` wrote it: it is yours, not overwriting it"
                    + " (move it away to enable the shipped setup again)")
            case .foreign:
                throw CommandError.file(file, "already exists and was not written by `crosspoint setup enable`: not overwriting it"
                    + " (move it away first)")
            }
        }
        if action != "unchanged" { try write(wanted, to: file, in: folder.path) }
        let report = Report(setup: name, file: file, action: action, restart: folder.restartHint("load"))
        if json {
            print(try JSONText.encode(report), terminator: "")
            return
        }
        switch action {
        case "unchanged": print("\(name) is enabled already: \(file)")
        case "updated": print("updated \(file) to the setup as shipped now")
        default: print("enabled \(name): \(file)")
        }
        if action != "unchanged" { print(folder.restartHint("load")) }
    }

    /// Writes `bytes` to `file` atomically (never half a file), as presets are written.
    private func write(_ bytes: [UInt8], to file: String, in folder: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            throw CommandError.file(file, "cannot write it: \(reason(error))")
        }
    }
}

struct SetupDisableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable",
        abstract: "Remove a setup's copy from PipeWire's drop-in folder, if it is unchanged.",
        discussion: """
        Removes only a copy that `crosspoint setup enable` wrote and nobody edited since; says so \
        and changes nothing otherwise.

        Examples:
          crosspoint setup disable crosspoint
          sudo crosspoint setup disable --system crosspoint
        """)

    @OptionGroup var scope: SetupScope
    @Argument(help: "The setup's name (see `crosspoint setup list`).") var name: String
    @Flag(help: "Print JSON: { setup, file, action (disabled, absent), restart }.") var json = false

    func run() throws {
        guard SetupFile.isValidName(name) else {
            throw CommandError.invalid("'\(name.printable)' is not a setup's name (letters, digits, '.', '_' and '-')")
        }
        let folder = try scope.folder()
        let file = folder.file(for: name)
        var action = "absent"
        if let existing = readFile(file) {
            switch EnabledCopy(reading: existing, name: name).state {
            case .unchanged:
                guard unlink(file) == 0 else {
                    throw CommandError.file(file, "cannot remove it: \(String(cString: strerror(errno)))")
                }
                action = "disabled"
            case .changed:
                throw CommandError.file(file, "edited since `crosspoint setup enable` wrote it: it is yours, not removing it"
                    + " (delete it yourself if you no longer want it)")
            case .foreign:
                throw CommandError.file(file, "was not written by `crosspoint setup enable`: not removing it")
            }
        }
        let restart = folder.restartHint("drop")
        if json {
            print(try JSONText.encode(SetupEnableCommand.Report(setup: name, file: file, action: action, restart: restart)),
                  terminator: "")
            return
        }
        if action == "absent" {
            print("\(name) is not enabled (no \(file))")
        } else {
            print("disabled \(name): removed \(file)")
            print(restart)
        }
    }
}
