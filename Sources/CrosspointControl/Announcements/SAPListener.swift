import CrosspointCore
import Glibc

/// Listens for streams announced on the network (`crosspoint net list --announced`): SAP on
/// port 9875, the groups PipeWire and AES67 announce to joined, for a bounded time (PipeWire
/// announces every 5 s). What it hears is read by `SAPAnnouncement` (every byte bounded:
/// anyone on the network can send to that port); a deletion removes its stream, and a packet
/// that is not an announcement is counted, not listed.
///
/// It shares the port with PipeWire's own listener (`SO_REUSEADDR`, as `module-rtp-sap` sets
/// it), and sends nothing.
package struct SAPListener {
    package struct Heard: Sendable {
        package var streams: [SAPAnnouncement]
        /// Packets that were not announcements, and the reason of the last one.
        package var refused: Int
        package var lastRefusal: String?
        /// Groups that could not be joined (no interface with multicast, say), with why.
        package var notJoined: [String]
    }

    package let seconds: Double

    package init(seconds: Double) { self.seconds = seconds }

    /// Listens for `seconds` (at most this many packets read: a flood costs a bounded time).
    package func listen(maximumPackets: Int = 10_000) throws(CommandError) -> Heard {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CommandError.invalid("cannot listen for announcements: no socket (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(SAPAnnouncement.port).bigEndian)
        address.sin_addr.s_addr = INADDR_ANY
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            throw CommandError.invalid("cannot listen for announcements on port \(SAPAnnouncement.port): \(String(cString: strerror(errno)))")
        }
        var notJoined: [String] = []
        for group in SAPAnnouncement.groups {
            var request = ip_mreqn()
            guard inet_pton(AF_INET, group, &request.imr_multiaddr) == 1 else { continue }
            if setsockopt(fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreqn>.size)) != 0 {
                notJoined.append("\(group) (\(String(cString: strerror(errno))))")
            }
        }
        var streams: [String: SAPAnnouncement] = [:], order: [String] = []
        var refused = 0, lastRefusal: String?
        var buffer = [UInt8](repeating: 0, count: SAPAnnouncement.maximumBytes + 1)
        let deadline = Self.now() + seconds
        var packets = 0
        while packets < maximumPackets {
            let left = deadline - Self.now()
            guard left > 0 else { break }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count >= 0 else { continue }
            packets += 1
            do {
                let heard = try SAPAnnouncement(packet: buffer[0..<count])
                let key = heard.identity
                if heard.deletion {
                    streams[key] = nil
                    order.removeAll { $0 == key }
                } else {
                    if streams[key] == nil { order.append(key) }
                    streams[key] = heard
                }
            } catch {
                refused += 1
                lastRefusal = error.description
            }
        }
        return Heard(streams: order.compactMap { streams[$0] }, refused: refused, lastRefusal: lastRefusal, notJoined: notJoined)
    }

    private static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
