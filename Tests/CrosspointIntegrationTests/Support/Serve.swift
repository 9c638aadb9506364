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
