import Glibc

/// Writes a line to standard error.
package func printError(_ line: String) {
    var stderr = StandardError()
    print(line, to: &stderr)
}

package struct StandardError: TextOutputStream {
    package mutating func write(_ string: String) { _ = Glibc.write(STDERR_FILENO, string, string.utf8.count) }
}
