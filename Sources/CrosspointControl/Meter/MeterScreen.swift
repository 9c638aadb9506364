import Glibc

/// Where the meter draws: redrawn in place on the alternate screen of a terminal (as pw-top
/// does), or appended as plain text. Returns false from a write once the output is gone
/// (a closed pipe).
package final class MeterScreen {
    package let live: Bool
    private var open = false

    package init(live: Bool) {
        self.live = live
        if live {
            // The alternate screen, cursor hidden; `close` puts everything back.
            open = true
            _ = write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
        }
    }

    deinit { close() }

    package func close() {
        guard open else { return }
        open = false
        _ = write("\u{1B}[?25h\u{1B}[?1049l")
    }

    /// The terminal's size, if it is one.
    package var size: (columns: Int, rows: Int)? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    package func show(_ lines: [String]) -> Bool {
        if live {
            // Home, each line over the old one (clearing its end), then clear below.
            return write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\u{1B}[J")
        }
        return write(lines.joined(separator: "\n") + "\n\n")
    }

    /// Writes all of `text` to standard output (unbuffered: a frame at a time).
    package func write(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }
}
