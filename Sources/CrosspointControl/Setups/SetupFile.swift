/// What a setup's file holds and how an enabled copy is told from an edited one; no Foundation,
/// so that the fuzz target (Tests/Fuzz/setup.swift) builds it alone.
///
/// An enabled copy starts with one line of its own, then the setup as shipped:
///
///     # crosspoint setup NAME (cksum 1234567890 2048): ...
///
/// The numbers are what POSIX `cksum` prints for the rest of the file (from its second line
/// on), so that both this command and the package's purge script (`tail -n +2 FILE | cksum`)
/// tell a copy nobody changed from one its user edited: an edited copy is the user's, and is
/// neither overwritten nor removed.
package enum SetupFile {
    /// The first line of a setup when it is a comment, without `#` and a leading "Crosspoint: ".
    package static func description(of text: [UInt8]) -> String {
        let first = String(decoding: text.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard first.hasPrefix("#") else { return "" }
        var line = Substring(first.dropFirst())
        while line.first == " " { line = line.dropFirst() }
        if line.hasPrefix("Crosspoint: ") { line = line.dropFirst("Crosspoint: ".count) }
        return String(line)
    }

    /// A name is one path component of letters, digits, '.', '_' and '-', not starting with '.'.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && !name.hasPrefix(".")
            && name.utf8.allSatisfy { c in
                (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                    || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: ".") || c == UInt8(ascii: "_")
                    || c == UInt8(ascii: "-")
            }
    }
}

/// An enabled copy of a setup: its marker line, and whether the rest is as it was written.
package struct EnabledCopy {
    package enum State: String, Encodable {
        /// Written by `crosspoint setup enable` and unchanged since.
        case unchanged
        /// Written by it, then edited: the user's now.
        case changed
        /// Not written by it (no marker line): the user's.
        case foreign
    }

    package let state: State
    /// The rest of the file (after the marker line), when there is a marker.
    package let body: [UInt8]

    package static func marker(name: String, body: [UInt8]) -> String {
        let sum = POSIXChecksum.cksum(body)
        return "# crosspoint setup \(name) (cksum \(sum.crc) \(sum.length)): written by `crosspoint setup enable \(name)`;"
            + " `crosspoint setup disable \(name)` removes it while it is unchanged (once edited, it is yours)\n"
    }

    /// The whole file `enable` writes for setup `name` with shipped text `text`.
    package static func contents(name: String, shipped text: [UInt8]) -> [UInt8] {
        Array(marker(name: name, body: text).utf8) + text
    }

    package init(reading bytes: [UInt8], name: String) {
        // Bytes throughout: the name may hold anything a user typed (a ')' included), and a
        // String's prefix test compares characters, not the bytes a count would step over.
        let lineEnd = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let first = bytes[..<lineEnd]
        let rest = lineEnd < bytes.endIndex ? Array(bytes[(lineEnd + 1)...]) : []
        let prefix = Array("# crosspoint setup \(name) (cksum ".utf8)
        guard first.starts(with: prefix),
            let close = first[(first.startIndex + prefix.count)...].firstIndex(of: UInt8(ascii: ")"))
        else {
            state = .foreign
            body = []
            return
        }
        let numbers = first[(first.startIndex + prefix.count)..<close].split(separator: UInt8(ascii: " "))
            .map { String(decoding: $0, as: UTF8.self) }
        let sum = POSIXChecksum.cksum(rest)
        body = rest
        state = numbers.count == 2 && UInt32(numbers[0]) == sum.crc && Int(numbers[1]) == sum.length ? .unchanged : .changed
    }
}

/// The checksum POSIX `cksum` prints (CRC-32, polynomial 0x04C11DB7, the length appended):
/// what a shell script can compute too.
package enum POSIXChecksum {
    package static func cksum(_ bytes: [UInt8]) -> (crc: UInt32, length: Int) {
        var crc: UInt32 = 0
        func feed(_ byte: UInt8) {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        for byte in bytes { feed(byte) }
        var length = bytes.count
        while length > 0 {
            feed(UInt8(truncatingIfNeeded: length))
            length >>= 8
        }
        return (~crc, bytes.count)
    }
}
