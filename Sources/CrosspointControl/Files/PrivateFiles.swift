// Files that hold the user's mix or a secret (presets, the serve token): mode 0600 in folders
// of mode 0700, written whole or not at all (a temporary file beside it, fsync, rename).

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

package enum PrivateFiles {
    /// Makes `path` and the folders above it that are missing, each 0700; an existing `path`
    /// owned by the user with a wider mode is narrowed to 0700.
    package static func makeFolder(_ path: String) throws {
        var built = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            built += "/" + component
            if mkdir(built, 0o700) != 0 && errno != EEXIST {
                throw CommandError.file(built, "cannot make the folder (\(String(cString: strerror(errno))))")
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandError.file(path, "is not a folder")
        }
        if info.st_uid == getuid(), info.st_mode & 0o077 != 0 { _ = chmod(path, 0o700) }
    }

    /// Writes `text` to `path` atomically with mode 0600 (never through a symbolic link).
    package static func write(_ path: String, _ text: String) throws {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CommandError.file(path, "cannot write it (\(String(cString: strerror(errno))))") }
        var failure: Int32 = 0
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 { written += n } else if n < 0 && errno == EINTR { continue } else { failure = n == 0 ? EIO : errno; break }
        }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        if close(fd) != 0, failure == 0 { failure = errno }
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            throw CommandError.file(path, "cannot write it (\(String(cString: strerror(failure))))")
        }
    }
}
