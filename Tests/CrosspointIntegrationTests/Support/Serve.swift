import Foundation

/// What `crosspoint serve` printed on its standard output when it started, read back. The tests
/// start it with `--port 0` (and `--osc 0`) and read the ports the kernel gave: a port picked
/// at random may be in use (an ephemeral port of another connection, another test run's server).
struct ServeAnnouncement {
    /// The page's address (`http://HOST:PORT/?token=...`): its port and token.
    let port: Int
    let token: String
    /// The OSC port, when `--osc` was given.
    let osc: Int?

    /// Parses the printed text; nil until the address (and the OSC line, if `osc` is expected) is there.
    init?(_ text: String, expectingOSC: Bool = false) {
        guard let url = text.range(of: "http://") else { return nil }
        let address = text[url.upperBound...].prefix { !$0.isWhitespace }
        guard let slash = address.firstIndex(of: "/"), let colon = address[..<slash].lastIndex(of: ":"),
              let port = Int(address[address.index(after: colon)..<slash]),
              let query = address.range(of: "?token=") else { return nil }
        self.port = port
        token = String(address[query.upperBound...])
        if let line = text.range(of: "OSC: udp://") {
            let rest = text[line.upperBound...].prefix { !$0.isWhitespace }
            osc = rest.lastIndex(of: ":").flatMap { Int(rest[rest.index(after: $0)...]) }
        } else {
            osc = nil
        }
        if expectingOSC && osc == nil { return nil }
    }
}

/// A UDP port on 127.0.0.1 that was free a moment ago (the kernel's pick, for a listener the
/// test starts itself, such as liblo's oscdump, which takes no port 0): a socket bound to port
/// 0, its port read and the socket closed.
func freeUDPPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw SandboxError("socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw SandboxError("bind or getsockname: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
