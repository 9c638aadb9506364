import CPipeWire

/// The PipeWire library this process runs with (`pw_get_library_version`: in the daemon, the
/// daemon's), for the behaviour that differs between versions: MIDI ports speak UMP from 1.4,
/// the RTP modules take other arguments and name their ports otherwise from 1.0.
package enum RunningPipeWire {
    /// Major and minor, read once (0.0 if unreadable).
    package static let version: (major: Int, minor: Int) = {
        let parts = String(cBytes: pw_get_library_version()).split(separator: ".").map { Int($0) ?? 0 }
        return (parts.first ?? 0, parts.count > 1 ? parts[1] : 0)
    }()

    /// True if it is `major.minor` or later.
    package static func atLeast(_ major: Int, _ minor: Int) -> Bool {
        version.major > major || (version.major == major && version.minor >= minor)
    }
}
