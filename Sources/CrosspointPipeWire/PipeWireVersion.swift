import CPipeWire

/// The PipeWire library this process runs with (`pw_get_library_version`: in the daemon, the
/// daemon's), for the behaviour that differs between versions: MIDI ports speak UMP from 1.4,
/// the RTP modules take other arguments and name their ports otherwise from 1.0, VBAN's
/// modules are there from 0.3.76.
package enum RunningPipeWire {
    /// Major, minor and micro, read once (0.0.0 if unreadable).
    package static let version: (major: Int, minor: Int, micro: Int) = {
        let parts = String(cBytes: pw_get_library_version()).split(separator: ".").map { Int($0) ?? 0 }
        return (parts.first ?? 0, parts.count > 1 ? parts[1] : 0, parts.count > 2 ? parts[2] : 0)
    }()

    /// True if it is `major.minor.micro` or later.
    package static func atLeast(_ major: Int, _ minor: Int, _ micro: Int = 0) -> Bool {
        (version.major, version.minor, version.micro) >= (major, minor, micro)
    }
}
