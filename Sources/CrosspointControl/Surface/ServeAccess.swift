#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Hummingbird

/// Who may use the server: every request carries the token (header `Authorization: Bearer`,
/// the page's cookie, or `?token=` in the URL), on loopback too: another account on the machine
/// reaches a loopback port as easily as the user does. On loopback the request must also name a
/// loopback host (a DNS name another site points at 127.0.0.1 gets nothing: DNS rebinding).
/// Changes (POST, DELETE) must be JSON and, when the browser says where they come from
/// (Origin), come from the server's own page: another site's page in the same browser cannot
/// change the mixer.
package struct ServeAccess: Sendable {
    package let token: String
    package let loopbackOnly: Bool

    /// The page's cookie: named after the token (two servers with two tokens on one host keep
    /// two cookies), HttpOnly (the page's script never holds it), SameSite=Strict (another
    /// site's page never sends it).
    package var cookieName: String {
        var hash: UInt32 = 2_166_136_261
        for byte in token.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return "crosspoint-" + String(hash, radix: 16)
    }

    /// localhost, ::1, or an IPv4 literal 127.x.y.z (four numbers, not a name that starts so:
    /// `127.0.0.1.evil.example` is a name anyone can point anywhere).
    package static func isLoopback(_ address: String) -> Bool {
        if address == "localhost" || address == "::1" { return true }
        let parts = address.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    package static func tokenPath() -> String { PresetStore.configDirectory() + "/serve-token" }

    /// The token from a file the person gave.
    package static func readToken(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError.file(path, "cannot read the token (\(String(cString: strerror(errno))))")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingSpaces()
        guard token.utf8.count >= 16, token.utf8.count <= 256, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x3B && $0 != 0x2C }) else {
            throw CommandError.file(path, "the token must be 16 to 256 printable characters without spaces, commas or semicolons")
        }
        return token
    }

    /// The stored token, made (random, mode 0600, in a 0700 folder) on first use.
    package static func storedToken() throws -> String {
        let path = tokenPath()
        let directory = String(path.dropLast("/serve-token".count))
        try PrivateFiles.makeFolder(directory)
        if FileManager.default.fileExists(atPath: path) {
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
                throw CommandError.file(path, "is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
            }
            return try readToken(path)
        }
        // SystemRandomNumberGenerator reads the kernel's getrandom: fit for secrets.
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<24).map { _ in UInt8.random(in: 0...255, using: &random) }
        let token = bytes.map { String($0, radix: 16).padded(2).replacing(" ", with: "0") }.joined()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CommandError.file(path, "cannot store the token (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        let line = token + "\n"
        guard write(fd, line, line.utf8.count) == line.utf8.count else {
            throw CommandError.file(path, "cannot store the token (\(String(cString: strerror(errno))))")
        }
        return token
    }

    /// The token a request carries: its `Authorization: Bearer`, the page's cookie, or `?token=`.
    package func given(_ request: Request) -> String? {
        if let bearer = request.headers[.authorization], bearer.hasPrefix("Bearer ") { return String(bearer.dropFirst(7)) }
        if let cookie = CookieHeader.value(cookieName, in: request.headers[values: .cookie]) { return cookie }
        return request.uri.queryParameters.get("token")
    }

    /// Nil when the request may go on; else the error to answer.
    package func refusal(_ request: Request) -> APIError? {
        let authority = request.head.authority ?? ""
        if loopbackOnly {
            let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }.dropFirst()) : String(authority.split(separator: ":").first ?? "")
            guard ServeAccess.isLoopback(host) else {
                return APIError(403, "this server answers only to 127.0.0.1, localhost and [::1] (the request was for '\(host.printable)')", key: "host")
            }
        }
        // The page itself holds nothing secret: it loads without the token (and then says how
        // to open it), and asks the API with it.
        let isPage = request.method == .get && ServeAccess.pagePaths.contains(request.uri.path)
        if !isPage {
            let given = given(request)
            guard let given, ServeAccess.same(given, token) else {
                return APIError(401, given == nil ? "a token is needed: open the address `crosspoint serve` printed (it ends in ?token=...), or send Authorization: Bearer TOKEN; the token is in \(ServeAccess.tokenPath())" : "wrong token", key: "token")
            }
        }
        let changes = request.method == .post || request.method == .delete || request.method == .put || request.method == .patch
        if changes || request.uri.path == "/api/stream" {
            if let origin = request.headers[.origin], origin != "http://\(authority)", origin != "https://\(authority)" {
                return APIError(403, "requests from another site's page are refused (Origin \(origin.printable))", key: "origin")
            }
        }
        if changes, request.method != .delete {
            let type = request.headers[.contentType] ?? ""
            guard type.lowercased().hasPrefix("application/json") else {
                return APIError(415, "send JSON (Content-Type: application/json)", key: "body")
            }
        }
        return nil
    }

    /// A page opened with the right `?token=`: a redirect to the same page without it (out of
    /// the address bar and the history), setting the cookie the page's requests carry.
    package func tokenRedirect(_ request: Request) -> Response? {
        guard request.method == .get, ServeAccess.pagePaths.contains(request.uri.path),
              let query = request.uri.queryParameters.get("token"), ServeAccess.same(query, token) else { return nil }
        let cookie = "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000"
        let rest = (request.uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") }
        let location = request.uri.path + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&"))
        return Response(status: .seeOther, headers: [.location: location, .setCookie: cookie, .cacheControl: "no-store"])
    }

    package static let pagePaths: Set<String> = ["/", "/index.html", "/app.js", "/style.css"]

    /// Compares in time that does not depend on where they differ.
    package static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = x.count ^ y.count
        for k in 0..<min(x.count, y.count) { difference |= Int(x[k] ^ y[k]) }
        return difference == 0
    }
}
