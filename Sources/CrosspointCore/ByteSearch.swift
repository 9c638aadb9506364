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

/// Strings joined and read from C, and sets made, without the standard library's
/// internal functions that `joined(separator:)`, `String(cString:)` and `Set(_:)` run: each sits
/// alone, or nearly, on a 64 kB block of the standard library's one big code section, which the
/// daemon then keeps mapped (BENCHMARKS.md, "Footprint"). Same results. Inlinable, so that other
/// modules specialize them: called generically, they would go through protocol witnesses there.
extension Sequence where Element: StringProtocol {
    /// The elements with `separator` between them: what `joined(separator:)` gives.
    @inlinable public func joinedBytes(separator: String = "") -> String {
        var result = ""
        var first = true
        for part in self {
            if !first { result += separator }
            first = false
            result += part
        }
        return result
    }
}

extension String {
    /// The string of a NUL-terminated C string, invalid UTF-8 repaired (U+FFFD): what
    /// `String(cString:)` gives.
    public init(cBytes pointer: UnsafePointer<CChar>) {
        var count = 0
        while pointer[count] != 0 { count += 1 }
        self = pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }
}

extension Sequence where Element: Hashable {
    /// `Set(self)`, made by inserting one element after another: `Set.init(_:)` first sizes the
    /// set through an internal function alone on a block of that big section.
    @inlinable public var elementSet: Set<Element> {
        var set = Set<Element>()
        for element in self { set.insert(element) }
        return set
    }
}

extension FixedWidthInteger {
    /// `String(self)`: its decimal digits, `-` first when negative. Written here because
    /// `String(_:)` and `"\(n)"` reach an integer's `description` through its protocol witness,
    /// which sits alone on a block of that big section.
    @inlinable public var decimalText: String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
            var start = buffer.count
            var rest = magnitude
            repeat {
                let (quotient, digit) = rest.quotientAndRemainder(dividingBy: 10)
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: digit)
                rest = quotient
            } while rest != 0
            if self < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[start...]), as: UTF8.self)
        }
    }
}

extension DefaultStringInterpolation {
    /// `"\(n)"` of an integer: its `decimalText`, the same text.
    @inlinable public mutating func appendInterpolation<T: FixedWidthInteger>(_ value: T) {
        appendLiteral(value.decimalText)
    }
}
