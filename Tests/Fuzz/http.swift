// Fuzz target (g): the bytes of HTTP connections as `crosspoint serve` meets them before
// SwiftNIO's parser (Sources/CrosspointControl/Surface/RequestHeads.swift, compiled into this
// target alone): request lines and headers of any length, Content-Length values, bodies,
// upgrades, cookies, JSON bodies counted before they are decoded. For each input: nothing traps; the scanner's
// verdict and state do not depend on how the bytes were cut into reads (TCP cuts anywhere); a
// verdict of "too large" only ever comes after more than the limit's bytes of one head.
//
// Build and run: scripts/fuzz. Seeds: Tests/Fuzz/corpus/http.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    // A small limit as well as the server's, so that both sides of it are reached.
    for limit in [64, 300, 16 * 1024] {
        var whole = RequestHeadScanner(limit: limit)
        let verdict = whole.feed(bytes)
        // The same bytes in reads cut where the input's own bytes say.
        var pieces = RequestHeadScanner(limit: limit)
        var cut = pieces.state == .passive ? bytes.count : 0, start = 0, last = RequestHeadScanner.Verdict.fine
        while start < bytes.count {
            cut = min(bytes.count, start + 1 + Int(bytes[start] % 37))
            last = pieces.feed(bytes[start..<cut])
            start = cut
            if last != .fine { break }
        }
        guard last == verdict else { fatalError("cut into reads: \(last), whole: \(verdict) (limit \(limit))") }
        if verdict == .fine, whole.state != pieces.state { fatalError("cut into reads: \(pieces.state), whole: \(whole.state)") }
        if verdict == .tooLarge, bytes.count <= limit { fatalError("too large after \(bytes.count) bytes, limit \(limit)") }
        if verdict == .tooManyFields, bytes.filter({ $0 == 0x0A }).count <= 101 { fatalError("too many fields in \(bytes.count) bytes") }
    }
    _ = JSONSize.values(in: bytes)
    let text = String(decoding: bytes, as: UTF8.self)
    _ = CookieHeader.value("crosspoint-1a2b3c4d", in: text.split(separator: "\n").map(String.init))
    return 0
}
