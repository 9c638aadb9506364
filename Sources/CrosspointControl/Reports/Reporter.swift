/// Where a command's report goes: text lines, JSON, or nothing.
package struct Reporter {
    package let json: Bool
    package let quiet: Bool
    /// Instead of printing: the JSON report and the warnings, kept (the control surface's API).
    package var capture: Capture?

    package final class Capture {
        package var json: String?
        package var warnings: [String] = []
    }

    package init(json: Bool, quiet: Bool, capture: Capture? = nil) {
        (self.json, self.quiet, self.capture) = (json, quiet, capture)
    }

    /// Prints a line of text (never with --json or --quiet).
    package func say(_ line: String) {
        guard !json, !quiet, capture == nil else { return }
        print(line)
    }

    /// Prints `value` as JSON (only with --json, even with --quiet: asked for explicitly).
    package func emit(_ value: some Encodable) throws {
        if let capture {
            capture.json = try JSONText.encode(value)
            return
        }
        guard json else { return }
        print(try JSONText.encode(value), terminator: "")
    }

    /// A warning on standard error (not with --quiet).
    package func warn(_ line: String) {
        if let capture {
            capture.warnings.append(line)
            return
        }
        guard !quiet else { return }
        printError("warning: " + line)
    }

    /// A reporter that prints nothing and keeps the JSON report and the warnings.
    package static func capturing() -> Reporter { Reporter(json: true, quiet: true, capture: Capture()) }
}
