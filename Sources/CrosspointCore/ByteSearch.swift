/// Comparing strings by their UTF-8 bytes, as PipeWire compares names (`spa_strstartswith`,
/// `strstr`), where the node runs it. Not `hasPrefix(_:)`: a true answer goes on to the standard
/// library's grapheme check (`_slowRoundDownToNearestCharacter`), and the daemon then keeps the
/// 128 kB of the standard library's code around it. Not `contains(_:)` of a string: it is
/// _StringProcessing's, which would link that library and _RegexParser into the module, 1 MB of
/// code (BENCHMARKS.md, "Footprint").
extension String {
    /// Whether the string starts with `prefix`, byte by byte.
    public func startsWithBytes(_ prefix: String) -> Bool { utf8.starts(with: prefix.utf8) }

    /// Whether the string holds `part` somewhere, byte by byte.
    public func containsBytes(_ part: String) -> Bool {
        let a = Array(utf8), b = Array(part.utf8)
        guard b.count <= a.count else { return false }
        return (0...(a.count - b.count)).contains { a[$0..<($0 + b.count)].elementsEqual(b) }
    }
}
