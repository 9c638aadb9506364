// The bytes of HTTP requests before SwiftNIO's parser sees them: how long a request's head (its
// request line and headers) may grow, where one request's body ends and the next head starts,
// and how many JSON values a body holds. Pure Swift, no NIO: `ServeGuard` (ServeLimits.swift)
// runs it on every connection, and the `http` fuzz target (Tests/Fuzz/http.swift) feeds it any
// bytes. Every count is checked: nothing here traps on what a stranger sends.

/// Follows a connection's bytes: heads (request line and headers, up to `limit` bytes each),
/// bodies (skipped by their Content-Length), and stops looking once the connection is no longer
/// plain requests (a WebSocket upgrade, a chunked body: SwiftNIO's parser and the API's body
/// limit bound those).
package struct RequestHeadScanner {
    package enum State: Equatable {
        /// Reading a head; `count` bytes of it so far.
        case head(count: Int)
        /// Skipping a body: this many bytes left.
        case body(remaining: Int)
        /// Not looking any more.
        case passive
    }

    package enum Verdict: Equatable {
        case fine
        /// A head longer than the limit.
        case tooLarge
        /// A head of more header fields than `fieldLimit`.
        case tooManyFields
        /// A head that cannot be a request (why).
        case malformed(String)
    }

    package let limit: Int
    package let fieldLimit: Int
    package private(set) var state: State = .head(count: 0)
    /// Line ends in the current head so far.
    private var lines = 0
    /// The current head's bytes (at most `limit`).
    private var bytes: [UInt8] = []

    /// SwiftNIO's parser, past its own field limit, leaves the connection open unanswered:
    /// `fieldLimit` must be below it.
    package init(limit: Int, fieldLimit: Int = 100) {
        self.limit = max(limit, 64)
        self.fieldLimit = max(fieldLimit, 1)
        bytes.reserveCapacity(1024)
    }

    /// Whether a head has started and not ended (its timer runs).
    package var inHead: Bool { if case let .head(count) = state { count > 0 } else { false } }

    /// Takes the next bytes of the connection.
    package mutating func feed(_ input: some Collection<UInt8>) -> Verdict {
        var index = input.startIndex
        while index != input.endIndex {
            switch state {
            case .passive:
                return .fine
            case let .body(remaining):
                let available = input.distance(from: index, to: input.endIndex)
                let skip = min(remaining, available)
                index = input.index(index, offsetBy: skip)
                state = remaining - skip == 0 ? .head(count: 0) : .body(remaining: remaining - skip)
            case let .head(count):
                let byte = input[index]
                index = input.index(after: index)
                // Blank lines before a request line are allowed (RFC 9112 2.2).
                if count == 0, byte == 0x0D || byte == 0x0A { continue }
                guard count < limit else { return .tooLarge }
                bytes.append(byte)
                state = .head(count: count + 1)
                if byte == 0x0A {
                    if RequestHeadScanner.endsHead(bytes) {
                        lines = 0
                        let verdict = finishHead()
                        guard verdict == .fine else { return verdict }
                    } else {
                        // The request line, then one line a field.
                        lines += 1
                        guard lines <= fieldLimit + 1 else { return .tooManyFields }
                    }
                }
            }
        }
        return .fine
    }

    /// The head ends with an empty line: LF LF or LF CR LF.
    private static func endsHead(_ bytes: [UInt8]) -> Bool {
        let n = bytes.count
        if n >= 2, bytes[n - 2] == 0x0A { return true }
        return n >= 3 && bytes[n - 2] == 0x0D && bytes[n - 3] == 0x0A
    }

    /// A whole head: where its body ends, or whether to stop looking.
    private mutating func finishHead() -> Verdict {
        defer { bytes.removeAll(keepingCapacity: true) }
        let fields = RequestHeadScanner.fields(bytes)
        var length = 0
        for (name, value) in fields {
            switch name {
            case "content-length":
                guard let n = RequestHeadScanner.decimal(value) else {
                    return .malformed("Content-Length '\(String(decoding: value.prefix(40).map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x3F }, as: UTF8.self))' is not a whole number")
                }
                length = n
            case "transfer-encoding", "upgrade":
                state = .passive
                return .fine
            default:
                continue
            }
        }
        state = length > 0 ? .body(remaining: length) : .head(count: 0)
        return .fine
    }

    /// A head's header fields, names lowercased (the request line is left out).
    package static func fields(_ head: [UInt8]) -> [(String, ArraySlice<UInt8>)] {
        var result: [(String, ArraySlice<UInt8>)] = []
        let lines = head.split(separator: 0x0A, omittingEmptySubsequences: true)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 0x3A) else { continue }
            let name = String(decoding: line[line.startIndex..<colon].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
            var value = line[line.index(after: colon)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 || last == 0x0D { value = value.dropLast() }
            result.append((name, value))
        }
        return result
    }

    /// A decimal number of at most 12 digits (a terabyte), nothing else.
    package static func decimal(_ text: ArraySlice<UInt8>) -> Int? {
        guard !text.isEmpty, text.count <= 12 else { return nil }
        var n = 0
        for byte in text {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            n = n * 10 + Int(byte - 0x30)
        }
        return n
    }
}

package enum JSONSize {
    /// How many values a JSON text holds at most, counted without parsing it (a comma or an
    /// opening bracket outside strings starts one): what decides whether a body is worth
    /// decoding at all. Foundation's decoder takes about 70 bytes of memory per number.
    package static func values(in bytes: some Sequence<UInt8>) -> Int {
        var count = 1, inString = false, escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
            } else if byte == 0x22 {
                inString = true
            } else if byte == 0x2C || byte == 0x5B || byte == 0x7B {
                count &+= 1
            }
        }
        return count
    }
}

package enum CookieHeader {
    /// The value of the cookie `name` in `Cookie` header values (`a=1; b=2`), if there is one.
    package static func value(_ name: String, in headers: [String]) -> String? {
        for header in headers {
            for pair in header.split(separator: ";") {
                let item = pair.drop { $0 == " " }
                if item.hasPrefix(name + "=") { return String(item.dropFirst(name.count + 1)) }
            }
        }
        return nil
    }
}
