import ArgumentParser
import CrosspointCore
import CrosspointClient
import Glibc

/// Words of the command line that start with a dash but are values: `-6dB`, `-inf`, `-0.5`,
/// `-1,-1,0,1`. The argument parser would read them as options; before it runs, each one's
/// dash becomes a stand-in that no option starts with, and every value read from the command
/// line gets its dash back (`CommandLineWords.restore`). Real options are still options: an
/// unknown one (`--remtoe`) is an error, and `--` ends the options as usual.
enum CommandLineWords {
    /// A private-use character nobody types, standing for a value's leading `-`.
    static let standIn: Character = "\u{10FFFD}"

    /// A word that is a negative number, gain or map rather than an option: a dash followed
    /// by a digit, by `.` and a digit, or by `inf`.
    static func isNegativeValue(_ word: String) -> Bool {
        guard word.first == "-" else { return false }
        let rest = word.dropFirst()
        guard let first = rest.first else { return false }
        if first.isASCII && first.isNumber { return true }
        if first == ".", let next = rest.dropFirst().first, next.isASCII, next.isNumber { return true }
        return rest.lowercased().hasPrefix("inf")
    }

    /// The arguments as the parser should see them (without the program's name).
    static func prepare(_ arguments: [String]) -> [String] {
        // Requests of the parser's own machinery (shell completion, help dumps) go as they are.
        if let first = arguments.first, first.hasPrefix("---") || first.hasPrefix("--generate-completion-script")
            || first == "--experimental-dump-help" {
            return arguments
        }
        var result: [String] = []
        var afterTerminator = false
        for word in arguments {
            if afterTerminator || !isNegativeValue(word) {
                if word == "--" { afterTerminator = true }
                result.append(word)
            } else {
                result.append(String(standIn) + word.dropFirst())
            }
        }
        return result
    }

    /// A value as the person typed it.
    static func restore(_ word: String) -> String {
        word.first == standIn ? "-" + word.dropFirst() : word
    }

    /// A message of the parser's that may quote a value.
    static func restoreAll(_ message: String) -> String {
        String(message.map { $0 == standIn ? "-" : $0 })
    }
}

/// `--remote`, shared by every command that talks to PipeWire.
struct Connection: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The PipeWire daemon to talk to: a socket name such as pipewire-0 (default: $PIPEWIRE_REMOTE, else pipewire-0).",
        valueName: "name"),
        completion: .custom { words, _, prefix in Completion.remotes(prefix: prefix) })
    var remote: String?

    func connect() throws -> Session { try Session(client: PipeWireClient(remote: remote)) }
}

/// `--json` and `-q/--quiet`, shared by the commands that change something.
struct ReportOptions: ParsableArguments {
    @Flag(help: "Print what changed as JSON (the same keys as presets and `show --json`).") var json = false
    @Flag(name: .shortAndLong, help: "Print nothing when it works (errors still go to standard error).") var quiet = false

    var reporter: Reporter { Reporter(json: json, quiet: quiet) }
}

/// Where a command's report goes: text lines, JSON, or nothing.
struct Reporter {
    let json: Bool
    let quiet: Bool
    /// Instead of printing: the JSON report and the warnings, kept (the control surface's API).
    var capture: Capture?

    final class Capture {
        var json: String?
        var warnings: [String] = []
    }

    /// Prints a line of text (never with --json or --quiet).
    func say(_ line: String) {
        guard !json, !quiet, capture == nil else { return }
        print(line)
    }

    /// Prints `value` as JSON (only with --json, even with --quiet: asked for explicitly).
    func emit(_ value: some Encodable) throws {
        if let capture {
            capture.json = try JSONText.encode(value)
            return
        }
        guard json else { return }
        print(try JSONText.encode(value), terminator: "")
    }

    /// A warning on standard error (not with --quiet).
    func warn(_ line: String) {
        if let capture {
            capture.warnings.append(line)
            return
        }
        guard !quiet else { return }
        printError("warning: " + line)
    }

    /// A reporter that prints nothing and keeps the JSON report and the warnings.
    static func capturing() -> Reporter { Reporter(json: true, quiet: true, capture: Capture()) }
}

/// How the person wrote a gain: an absolute level or a relative step.
///
/// - `-6dB`, `+3dB`, `0dB`, `-inf`: decibels (`-inf` is silence);
/// - `0.5`, `-1`, `0`: linear, when the magnitude is at most 1 (unity or less: nothing loud);
/// - `2x`, `-6x`, or any number with `--linear`: linear, written so on purpose;
/// - `3dB+`, `1.5dB-`: a step up or down from the current level, in dB.
///
/// A bare number above 1 in magnitude (`6`, `-6`) is refused: it is far more likely a level
/// in dB missing its unit than a linear gain of +15.6 dB.
enum GainInput: Equatable {
    case absolute(linear: Double, text: String, unit: Unit)
    case step(decibels: Double, text: String)

    enum Unit { case decibels, linear }

    static let syntax = "write 0.5, -6dB or -inf (linear gains above 1 as 2x; steps as 3dB+ or 3dB-)"
    static let maximumDecibels = Gain.decibels(Mixer.gainRange.upperBound)

    /// Parses a gain as typed; `linear` is the `--linear` flag.
    static func parse(_ typed: String, linear: Bool = false) throws -> GainInput {
        let text = CommandLineWords.restore(typed)
        let lower = text.lowercased().filter { $0 != " " }
        func number(_ body: Substring) -> Double? {
            guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.e".contains($0)) }),
                  let value = Double(body), value.isFinite else { return nil }
            return value
        }
        if lower.hasSuffix("db+") || lower.hasSuffix("db-") {
            let body = lower.dropLast(3)
            guard let size = number(body), body.first != "-", body.first != "+" else {
                throw CommandError.invalid("'\(text.printable)' is not a step; write the size in dB then + or -: 3dB+, 1.5dB-")
            }
            return .step(decibels: lower.hasSuffix("+") ? size : -size, text: text)
        }
        if lower.hasSuffix("+") || (lower.hasSuffix("-") && lower.count > 1) {
            throw CommandError.invalid(
                "'\(text.printable)' is not a gain; relative steps are in dB with the sign after: 3dB+ or 3dB-")
        }
        if lower == "-inf" || lower == "-infdb" { return .absolute(linear: 0, text: text, unit: .decibels) }
        if lower.hasSuffix("db") {
            guard let db = number(lower.dropLast(2)) else { throw notAGain(text) }
            return .absolute(linear: Gain.linear(decibels: db), text: text, unit: .decibels)
        }
        if lower.hasSuffix("x") {
            guard let value = number(lower.dropLast()) else { throw notAGain(text) }
            return .absolute(linear: value, text: text, unit: .linear)
        }
        guard let value = number(Substring(lower)) else { throw notAGain(text) }
        if abs(value) > 1 && !linear {
            let level = signedDecibels(value)
            let flipped = value < 0 ? ", flipped" : ""
            let db = level.hasPrefix("ø") ? String(level.dropFirst()) : level
            throw CommandError.invalid(
                "\(text.printable) is a linear gain of \(db) dB\(flipped); did you mean \(text.printable)dB? "
                    + "(for the linear gain write \(text.printable)x, or use --linear)")
        }
        return .absolute(linear: value, text: text, unit: .linear)
    }

    private static func notAGain(_ text: String) -> CommandError {
        .invalid("gain: '\(text.printable)' is not a gain; \(syntax)")
    }

    /// The gain to set on `key`, whose gain is `current` now, in range; steps are clamped to
    /// the range (`clamped` says so), absolute gains outside it refused in the unit typed.
    func resolve(current: Double, key: String) throws -> (gain: Double, clamped: String?) {
        switch self {
        case let .absolute(linear, text, unit):
            guard Mixer.gainRange.contains(linear) else {
                switch unit {
                case .decibels:
                    throw CommandError.invalid(
                        "\(key): \(text.printable) is above the maximum +\(Gain.format(GainInput.maximumDecibels)) dB")
                case .linear:
                    let top = Gain.format(Mixer.gainRange.upperBound)
                    throw CommandError.invalid(
                        "\(key): \(text.printable) is outside the linear range -\(top) to \(top) "
                            + "(+\(Gain.format(GainInput.maximumDecibels)) dB, either polarity)")
                }
            }
            return (linear, nil)
        case let .step(decibels, text):
            guard current != 0 else {
                throw CommandError.invalid(
                    "\(key) is silent (-inf dB): a step of \(text.printable) needs a level to start from; set one, e.g. -20dB")
            }
            let target = Gain.decibels(current) + decibels
            if target > GainInput.maximumDecibels {
                let top = Mixer.gainRange.upperBound
                return (current < 0 ? -top : top, "clamped to the maximum +\(Gain.format(GainInput.maximumDecibels)) dB")
            }
            let magnitude = Gain.linear(decibels: target)
            return (current < 0 ? -magnitude : magnitude, nil)
        }
    }

    /// Whether the person asked for an exact linear value (then any difference is a change);
    /// a level in dB is compared at the 0.1 dB the report shows.
    var isExact: Bool {
        if case .absolute(_, _, .linear) = self { return true }
        return false
    }
}

/// A gain in dB as the reports print it: `+3.0`, `0.0`, `-6.0`, `-inf`, `ø-6.0` when the
/// polarity is flipped; `places` decimals.
func signedDecibels(_ linear: Double, places: Int = 1) -> String {
    if linear == 0 { return "-inf" }
    guard linear.isFinite else { return linear.isNaN ? "nan" : "+inf" }
    let db = Gain.decibels(linear)
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    guard let units = Int(exactly: (abs(db) * scale).rounded()) else { return "\(db)" }
    var digits = String(units)
    if places > 0 {
        if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
        digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
    }
    let sign = units == 0 ? "" : db < 0 ? "-" : "+"
    return (linear < 0 ? "ø" : "") + sign + digits
}

/// `1 input`, `2 inputs`.
func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

extension String {
    /// The text with every control or invisible formatting character written as an escape
    /// (`\x1b`, `\u{202e}`), so that a name another client chose cannot move the cursor,
    /// clear the screen, start a new line or reorder what follows when printed.
    var printable: String {
        var out = ""
        for scalar in unicodeScalars {
            let category = scalar.properties.generalCategory
            let hidden = category == .control || category == .lineSeparator || category == .paragraphSeparator
                || (category == .format && scalar.value != 0x200C && scalar.value != 0x200D)
            guard hidden else {
                out.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            out += scalar.value < 0x100 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
        }
        return out
    }
}

/// Reads a whole file (or standard input for "-") with plain reads, so that devices and
/// pipes (/dev/null, a FIFO, <(...)) read as what they hold.
func readInput(_ path: String) throws -> String {
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
