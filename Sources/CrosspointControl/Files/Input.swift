#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

// Files the person names: read whole, and a failure said in the system's words.

/// Reads a whole file (or standard input for "-") with plain reads, so that devices and
/// pipes (/dev/null, a FIFO, <(...)) read as what they hold.
package func readInput(_ path: String) throws -> String {
    let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw CommandError.file(path, "cannot read it (\(String(cString: strerror(errno))))") }
    defer { if path != "-" { close(fd) } }
    var status = stat()
    if fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
        throw CommandError.file(path, "is a directory, not a file")
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n == 0 { break }
        if n < 0 {
            if errno == EINTR { continue }
            throw CommandError.file(path, "cannot read it (\(String(cString: strerror(errno))))")
        }
        bytes += chunk[0..<n]
        guard bytes.count <= 64 << 20 else { throw CommandError.file(path, "is over 64 MiB; a matrix or preset is far smaller") }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The system's reason for a failed file operation ("No such file or directory").
package func reason(_ error: any Error) -> String {
    if let posix = (error as? CocoaError)?.underlying as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    return "\(error)"
}
