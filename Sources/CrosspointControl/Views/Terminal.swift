#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// Where output goes and how it looks: colour and width on a terminal, plain text when piped.
package struct Terminal {
    package let colour: Bool
    /// Columns to fit tables into; nil when piped (no limit).
    package let width: Int?

    /// `--color`: the command line reads it by its raw value.
    package enum ColourChoice: String, CaseIterable { case auto, always, never }

    package init(colour choice: ColourChoice, width: Int?) {
        let isTerminal = isatty(STDOUT_FILENO) == 1
        switch choice {
        case .always: colour = true
        case .never: colour = false
        case .auto:
            let environment = ProcessInfo.processInfo.environment
            colour = isTerminal && environment["NO_COLOR"] == nil && (environment["TERM"] ?? "dumb") != "dumb"
        }
        if let width {
            self.width = width
        } else if isTerminal {
            var size = winsize()
            self.width = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        } else {
            self.width = nil
        }
    }

    package enum Style: String {
        case bold = "1", dim = "2", red = "1;31", green = "32", yellow = "33", magenta = "35", cyan = "36"
    }

    package func paint(_ text: String, _ style: Style?) -> String {
        guard colour, let style, !text.allSatisfy(\.isWhitespace) else { return text }
        return "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m"
    }
}

/// Prints rows as columns separated by two spaces, the first row as a header.
package func printTable(_ rows: [[String]], terminal: Terminal) {
    guard let header = rows.first else { return }
    let widths = header.indices.map { c in rows.map { c < $0.count ? $0[c].count : 0 }.max() ?? 0 }
    for (r, row) in rows.enumerated() {
        let cells = row.enumerated().map { c, text in
            c == row.count - 1 ? text : text.padded(widths[c], right: true)
        }
        let line = cells.joined(separator: "  ")
        print(r == 0 ? terminal.paint(line, .bold) : line)
    }
}
