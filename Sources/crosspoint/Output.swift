#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import Glibc
import CrosspointCore
import CrosspointPipeWire

/// Where output goes and how it looks: colour and width on a terminal, plain text when piped.
struct Terminal {
    let colour: Bool
    /// Columns to fit tables into; nil when piped (no limit).
    let width: Int?

    enum ColourChoice: String, CaseIterable, ExpressibleByArgument { case auto, always, never }

    init(colour choice: ColourChoice, width: Int?) {
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

    enum Style: String {
        case bold = "1", dim = "2", red = "1;31", green = "32", yellow = "33", magenta = "35", cyan = "36"
    }

    func paint(_ text: String, _ style: Style?) -> String {
        guard colour, let style, !text.allSatisfy(\.isWhitespace) else { return text }
        return "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m"
    }
}

extension String {
    /// Pads to `width` characters, on the left (numbers) or on the right (names).
    func padded(_ width: Int, right: Bool = false) -> String {
        let missing = max(0, width - count)
        return right ? self + String(repeating: " ", count: missing) : String(repeating: " ", count: missing) + self
    }
}

/// Prints rows as columns separated by two spaces, the first row as a header.
func printTable(_ rows: [[String]], terminal: Terminal) {
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

/// JSON for people and scripts, in the one style Crosspoint writes (`JSONValue.text`, as the
/// node's state file): keys sorted, every list of plain values (a matrix row, a list of
/// channel names) on one line.
enum JSONText {
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let compact = String(decoding: try encoder.encode(value), as: UTF8.self)
        guard let json = JSONValue(parsing: compact) else { throw CommandError.invalid("internal error: unreadable JSON") }
        return json.text
    }
}

/// A gain as a decimal that reads back as the same Float (`0.3`, not `0.30000001192092896`).
func decimal(_ value: Float) -> Double { Preset.decimal(value) }
