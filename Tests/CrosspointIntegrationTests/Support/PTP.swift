import Foundation

/// PTP between the machines of a `NetworkLab`: a ptp4l (linuxptp) on each machine's link,
/// software timestamps (`-S`: veth has no hardware clock), one of them the grandmaster (the
/// others slave-only). Each has its management sockets in `folder` (`uds_address`,
/// `uds_ro_address`: what an AES67 sender's announcer asks for the grandmaster).
///
/// The machines are namespaces of one kernel: their system clocks are one clock. A slave that
/// steered it would steer its master's too, so the slaves run free (`free_running`): they
/// follow the grandmaster's messages, measure their offset and path delay and name it as their
/// grandmaster, and steer nothing. On separate machines ptp4l would steer each system clock to
/// the grandmaster's; here they already are one.
final class PTP {
    /// ptp4l's own log of each machine (`-m`: its offsets, its port's states).
    let logs: [String]
    private var daemons: [Background] = []
    private let folder: String
    let grandmaster: Int

    /// ptp4l on every machine of `lab`, `grandmaster` the one that is.
    init(_ lab: NetworkLab, grandmaster: Int, folder: String) throws {
        self.folder = folder
        self.grandmaster = grandmaster
        var logs: [String] = []
        for (k, machine) in lab.machines.enumerated() {
            let config = folder + "/ptp4l-\(k).cfg", log = folder + "/ptp4l-\(k).log"
            try """
            [global]
            uds_address \(Self.socket(folder, k))
            uds_ro_address \(Self.readOnlySocket(folder, k))
            free_running \(k == grandmaster ? 0 : 1)
            priority1 \(k == grandmaster ? 1 : 255)
            logSyncInterval -3
            """.write(toFile: config, atomically: true, encoding: .utf8)
            daemons.append(try Background(machine.prefix + ["ptp4l", "-i", machine.link, "-S", "-m", "-f", config] + (k == grandmaster ? [] : ["-s"]),
                                          environment: ProcessInfo.processInfo.environment, stdout: log, stderr: log))
            logs.append(log)
        }
        self.logs = logs
    }

    static func socket(_ folder: String, _ k: Int) -> String { folder + "/ptp4l-\(k)" }
    static func readOnlySocket(_ folder: String, _ k: Int) -> String { folder + "/ptp4l-\(k)-ro" }

    /// Machine `k`'s read-only management socket (what `ptp=` of an AES67 sender names).
    func readOnlySocket(of k: Int) -> String { Self.readOnlySocket(folder, k) }

    /// Each slave follows the grandmaster: its port went to UNCALIBRATED (free running, it
    /// never steers, so never says SLAVE) and it measured an offset.
    func waitFollowing(timeout: Double = 30) throws {
        try Wait.until("every slave ptp4l following the grandmaster", timeout: timeout, describe: { self.describe() }) {
            self.logs.indices.filter { $0 != self.grandmaster }.allSatisfy { k in
                let log = (try? String(contentsOfFile: self.logs[k], encoding: .utf8)) ?? ""
                return log.contains("to UNCALIBRATED on RS_SLAVE") && log.contains("master offset")
            }
        }
    }

    /// Slave `k`'s offsets from the grandmaster (ns), as ptp4l measured them.
    func offsets(of k: Int) -> [Int] {
        let log = (try? String(contentsOfFile: logs[k], encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "master offset") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.flatMap { Int($0) }
        }
    }

    /// The grandmaster's clock identity as an AES67 announcement writes it
    /// (`ptp=IEEE1588-2008:AA-BB-CC-FF-FE-DD-EE-FF:0`), from ptp4l's log of it
    /// (`selected local clock aabbcc.fffe.ddeeff as best master`).
    func grandmasterClock() -> String? {
        let log = (try? String(contentsOfFile: logs[grandmaster], encoding: .utf8)) ?? ""
        guard let line = log.split(separator: "\n").last(where: { $0.contains("selected local clock") }),
              let range = line.range(of: "selected local clock ") else { return nil }
        let hex = line[range.upperBound...].prefix { $0 != " " }.filter { $0 != "." }
        guard hex.count == 16 else { return nil }
        let bytes = stride(from: 0, to: 16, by: 2).map { String(Array(hex)[$0..<$0 + 2]).uppercased() }
        return "ptp=IEEE1588-2008:" + bytes.joined(separator: "-") + ":0"
    }

    /// The last lines of each ptp4l's log, for a failure.
    func describe() -> String {
        logs.enumerated().map { k, path in
            let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").suffix(4)
            return "ptp4l \(k): " + lines.joined(separator: " | ")
        }.joined(separator: "\n")
    }

    func stop() {
        for daemon in daemons { daemon.stop() }
        daemons = []
    }

    deinit { stop() }
}
