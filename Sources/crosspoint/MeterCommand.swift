import ArgumentParser
import CrosspointClient
import CrosspointCore
import CrosspointPipeWire
import Glibc
import Synchronization

struct MeterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meter",
        abstract: "Watch a node's levels live: peak and RMS of every input and output, in dBFS.",
        discussion: """
        One bar per input (the signal as it arrives, before its gain and mute) and per output \
        (as it leaves), with the port's name, its peak and RMS in dBFS, a peak hold of 1.5 s \
        (|) and a CLIP mark when a sample reaches full scale (0 dBFS) or more. On a terminal \
        the view is redrawn in place until Ctrl-C; piped, each reading is printed as plain \
        lines. -inf (null in JSON) is silence: every sample zero, as an unlinked input reads. \
        An unlinked output is not rendered, so it reads silence too.

        While it runs, the node measures and publishes its levels in the node property \
        crosspoint.levels (see README, Levels); when it ends, the node stops (killed, within 4 s).

        Examples:
          crosspoint meter crosspoint
          crosspoint meter xp-4x3 --interval 100
          crosspoint meter crosspoint --once
          crosspoint meter crosspoint --json | jq -c '.outputs[0]'
        """)

    @OptionGroup var connection: Connection
    @Argument(help: "The node: name, description or id.") var node: String?
    @Flag(help: "Print each reading as one line of JSON: {\"inputs\":[{\"channel\",\"peak_db\",\"rms_db\"}...],\"outputs\":[...]}.")
    var json = false
    @Flag(help: "Print one reading and exit.") var once = false
    @Option(help: ArgumentHelp("Milliseconds between readings, from 33 (30 a second) to 60000.", valueName: "ms"))
    var interval = 50
    @Option(help: "Colour: auto (on a terminal), always or never.") var color: Terminal.ColourChoice = .auto

    /// How long to wait for the first reading.
    static let firstReadingTimeout = 5.0

    func validate() throws {
        guard (LevelWatch.fastestInterval...LevelWatch.intervalRange.upperBound).contains(interval) else {
            throw ValidationError(
                "--interval must be from \(LevelWatch.fastestInterval) to \(LevelWatch.intervalRange.upperBound) ms (a node publishes at most 30 readings a second)")
        }
    }

    func run() throws {
        // From here on Ctrl-C ends the loop below, which releases the lease.
        let stop = MeterSignals.install()
        defer { MeterSignals.restore(stop) }
        let session = try connection.connect()
        var target = try session.target(node)
        var channels = try MeterChannels(session, target)
        let watcher = try LevelsWatcher(session.client, node: target.node.id, interval: interval)

        let terminal = Terminal(colour: color, width: nil)
        let live = !json && !once && isatty(STDOUT_FILENO) == 1
        let screen = MeterScreen(live: live)
        defer { screen.close() }
        var view = MeterView(node: target.node, interval: interval, unicode: MeterView.terminalSpeaksUTF8)
        var lastReading = ContinuousClock.now
        while !MeterSignals.stopped {
            guard let reading = try watcher.next(within: 0.25) else {
                if ContinuousClock.now - lastReading > .seconds(MeterCommand.firstReadingTimeout) {
                    throw CommandError.invalid(
                        "\(target.node.name) published no levels for \(Int(MeterCommand.firstReadingTimeout)) s (is its module older than levels?)")
                }
                continue
            }
            lastReading = .now
            if reading.inputs.count != channels.inputs.count || reading.outputs.count != channels.outputs.count {
                // The node was resized: read its channels again.
                try session.refresh()
                target = try session.target(String(target.node.id))
                channels = try MeterChannels(session, target)
            }
            if json {
                guard screen.write(MeterView.json(reading, channels) + "\n") else { break }
            } else {
                // Every reading counts for the peak hold and the clip marks; the newest is drawn.
                var newest = reading
                view.observe(reading, channels)
                while !once, let more = try watcher.next(within: 0), more.inputs.count == channels.inputs.count,
                      more.outputs.count == channels.outputs.count {
                    view.observe(more, channels)
                    newest = more
                }
                let size = screen.size
                let lines = view.frame(newest, channels, terminal: terminal, width: size?.columns ?? 100,
                                       height: live ? size?.rows : nil, hint: live ? "Ctrl-C quits" : nil)
                guard screen.show(lines) else { break }
            }
            if once { break }
        }
        screen.close()
        try watcher.release()
    }
}

/// The port and channel names of a node's inputs and outputs, in port order.
struct MeterChannels {
    var inputs: [(port: String, channel: String)]
    var outputs: [(port: String, channel: String)]

    init(_ session: Session, _ target: Target) throws {
        let mixer = try session.mixer(of: target)
        inputs = (0..<mixer.inputs).map { (target.inputName($0, mixer), mixer.inputChannels[$0]) }
        outputs = (0..<mixer.outputs).map { (target.outputName($0, mixer), mixer.outputChannels[$0]) }
    }
}

/// Ctrl-C, SIGTERM and SIGHUP end the meter cleanly (the terminal restored, the lease
/// released); a closed pipe (`| head`) ends it too, instead of killing it.
enum MeterSignals {
    private static let flag = Atomic<Int32>(0)

    static var stopped: Bool { flag.load(ordering: .relaxed) != 0 }

    typealias Handlers = [(Int32, __sighandler_t?)]

    static func install() -> Handlers {
        var previous: Handlers = []
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            previous.append((sig, signal(sig) { _ in MeterSignals.flag.store(1, ordering: .relaxed) }))
        }
        previous.append((SIGPIPE, signal(SIGPIPE, SIG_IGN)))
        return previous
    }

    static func restore(_ handlers: Handlers) {
        for (sig, handler) in handlers { signal(sig, handler) }
    }
}

/// Where the meter draws: redrawn in place on the alternate screen of a terminal (as pw-top
/// does), or appended as plain text. Returns false from a write once the output is gone
/// (a closed pipe).
final class MeterScreen {
    let live: Bool
    private var open = false

    init(live: Bool) {
        self.live = live
        if live {
            // The alternate screen, cursor hidden; `close` puts everything back.
            open = true
            _ = write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
        }
    }

    deinit { close() }

    func close() {
        guard open else { return }
        open = false
        _ = write("\u{1B}[?25h\u{1B}[?1049l")
    }

    /// The terminal's size, if it is one.
    var size: (columns: Int, rows: Int)? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    func show(_ lines: [String]) -> Bool {
        if live {
            // Home, each line over the old one (clearing its end), then clear below.
            return write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\u{1B}[J")
        }
        return write(lines.joined(separator: "\n") + "\n\n")
    }

    /// Writes all of `text` to standard output (unbuffered: a frame at a time).
    func write(_ text: String) -> Bool {
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

/// What the meter shows: bars, numbers, peak hold and clip marks.
struct MeterView {
    static let holdTime: Duration = .milliseconds(1500)
    /// The bars' scale, dBFS.
    static let floor = -60.0

    let node: GraphNode
    let interval: Int
    let unicode: Bool
    /// Per channel (inputs, then outputs): the peak held and until when.
    private var holds: [String: (peak: Double?, until: ContinuousClock.Instant)] = [:]
    private var clips: [String: ContinuousClock.Instant] = [:]

    init(node: GraphNode, interval: Int, unicode: Bool) {
        self.node = node
        self.interval = interval
        self.unicode = unicode
    }

    static var terminalSpeaksUTF8: Bool {
        for key in ["LC_ALL", "LC_CTYPE", "LANG"] {
            if let value = getenv(key).map({ String(cString: $0) }), !value.isEmpty {
                return value.uppercased().contains("UTF-8") || value.uppercased().contains("UTF8")
            }
        }
        return false
    }

    /// One reading as one line of JSON.
    static func json(_ reading: LevelReading, _ channels: MeterChannels) -> String {
        func list(_ levels: [Level], _ names: [(port: String, channel: String)]) -> String {
            "[" + levels.enumerated().map { k, level in
                let name = k < names.count ? names[k].channel : "\(k)"
                return "{\"channel\":\(jsonString(name)),\"peak_db\":\(Level.json(level.peak)),\"rms_db\":\(Level.json(level.rms))}"
            }.joined(separator: ",") + "]"
        }
        return "{\"inputs\":\(list(reading.inputs, channels.inputs)),\"outputs\":\(list(reading.outputs, channels.outputs))}"
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The port names of a reading's channels: inputs, then outputs.
    static func names(_ reading: LevelReading, _ channels: MeterChannels) -> [String] {
        (0..<reading.inputs.count).map { $0 < channels.inputs.count ? channels.inputs[$0].port : PortName.input("\($0)") }
            + (0..<reading.outputs.count).map { $0 < channels.outputs.count ? channels.outputs[$0].port : PortName.output("\($0)") }
    }

    /// Takes a reading into the peak holds (the highest peak of the last 1.5 s) and clip marks.
    mutating func observe(_ reading: LevelReading, _ channels: MeterChannels) {
        let now = ContinuousClock.now
        for (name, level) in zip(MeterView.names(reading, channels), reading.inputs + reading.outputs) {
            var hold = holds[name] ?? (nil, now)
            if now >= hold.until || (level.peak ?? -.infinity) >= (hold.peak ?? -.infinity) {
                hold = (level.peak, now + MeterView.holdTime)
            }
            holds[name] = hold
            if level.clips { clips[name] = now + MeterView.holdTime }
        }
    }

    /// The lines of one frame: a title, the scale, one line per channel (as many as `height`
    /// allows, with a line saying how many more there are), with the holds and clip marks
    /// `observe` kept.
    func frame(_ reading: LevelReading, _ channels: MeterChannels, terminal: Terminal, width: Int, height: Int?,
               hint: String? = nil) -> [String] {
        let now = ContinuousClock.now
        let names = MeterView.names(reading, channels)
        let levels = reading.inputs + reading.outputs
        let nameWidth = max(4, names.map(\.count).max() ?? 4)
        let barWidth = min(max(10, width - nameWidth - 22), 100)

        var lines = [terminal.paint("\(node.name) (node \(node.id))", .bold)
            + ": peak and RMS in dBFS every \(reading.interval) ms, | = peak of the last 1.5 s"
            + (reading.frames == 0 ? "; the node is not running (nothing linked)" : "") + (hint.map { "; " + $0 } ?? "")]
        lines.append(String(repeating: " ", count: nameWidth + 1) + scale(barWidth) + " " + "PEAK".padded(6) + " " + "RMS".padded(6))

        var shown = Array(0..<levels.count)
        var hidden: (inputs: Int, outputs: Int) = (0, 0)
        if let height {
            let room = max(2, height - lines.count)
            (shown, hidden) = MeterView.fit(inputs: reading.inputs.count, outputs: reading.outputs.count, rows: room)
        }
        for k in 0..<levels.count {
            let name = names[k], level = levels[k]
            guard shown.contains(k) else { continue }
            let clipping = (clips[name] ?? now) > now
            lines.append(terminal.paint(name.padded(nameWidth, right: true), .bold) + " "
                + bar(level, hold: holds[name]?.peak ?? nil, width: barWidth, terminal) + " "
                + number(level.peak).padded(6) + " " + number(level.rms).padded(6)
                + (clipping ? " " + terminal.paint("CLIP", .red) : ""))
            if k == reading.inputs.count - 1 && hidden.inputs > 0 {
                lines.append(terminal.paint("... \(hidden.inputs) more input\(hidden.inputs == 1 ? "" : "s") (a taller terminal shows them; --json lists all)", .dim))
            }
        }
        if hidden.outputs > 0 {
            lines.append(terminal.paint("... \(hidden.outputs) more output\(hidden.outputs == 1 ? "" : "s")", .dim))
        }
        return lines
    }

    /// Which channels fit in `rows` lines (a line is kept for each "more" note).
    static func fit(inputs n: Int, outputs m: Int, rows: Int) -> (shown: [Int], hidden: (inputs: Int, outputs: Int)) {
        if n + m <= rows { return (Array(0..<(n + m)), (0, 0)) }
        let room = max(2, rows - 2)
        var a = min(n, max(1, room / 2)), b = min(m, max(1, room - a))
        a = min(n, max(1, room - b))
        return (Array(0..<a) + Array(n..<(n + b)), (n - a, m - b))
    }

    private func number(_ decibels: Double?) -> String {
        guard let decibels else { return "-inf" }
        return Level.json(decibels)
    }

    /// Labels every 10 dB from -60 to 0, each centred on its place on the bars.
    private func scale(_ width: Int) -> String {
        var cells = [Character](repeating: " ", count: width)
        for db in stride(from: Int(MeterView.floor), through: 0, by: 10) {
            let label = Array(String(db))
            let at = min(max(0, position(Double(db), width) - (label.count + 1) / 2), width - label.count)
            for (k, c) in label.enumerated() where at + k >= 0 { cells[at + k] = c }
        }
        return String(cells)
    }

    /// The cell a level reaches (0 = none, width = full scale or more).
    private func position(_ decibels: Double?, _ width: Int) -> Int {
        guard let decibels else { return 0 }
        let fraction = (decibels - MeterView.floor) / -MeterView.floor
        return Int((min(max(fraction, 0), 1) * Double(width)).rounded())
    }

    /// RMS as a solid bar, up to the peak as a lighter one, the held peak as a mark; green to
    /// -18 dBFS, yellow to -6, red above.
    private func bar(_ level: Level, hold: Double?, width: Int, _ t: Terminal) -> String {
        let rms = position(level.rms, width), peak = max(position(level.peak, width), rms)
        let held = hold.map { min(max(position($0, width) - 1, 0), width - 1) }
        let full: Character = unicode ? "█" : "#", partial: Character = unicode ? "▒" : "=",
            mark: Character = "|", empty: Character = unicode ? "·" : "."
        var out = ""
        var run = "", runStyle: Terminal.Style?
        func flush() { if !run.isEmpty { out += t.paint(run, runStyle); run = "" } }
        for cell in 0..<width {
            let decibels = MeterView.floor * (1 - Double(cell) / Double(width))
            let zone: Terminal.Style = decibels >= -6 ? .red : decibels >= -18 ? .yellow : .green
            let (c, style): (Character, Terminal.Style?) =
                cell < rms ? (full, zone) : cell < peak ? (partial, zone) : cell == held && hold != nil ? (mark, zone) : (empty, .dim)
            if runStyle != style { flush(); runStyle = style }
            run.append(c)
        }
        flush()
        return out
    }
}

extension MeterCommand {
    /// One reading of a node's levels (for `show --levels`): a lease at `interval` ms, the
    /// first reading, the lease released.
    static func reading(_ session: Session, _ target: Target, interval: Int = 100) throws -> LevelReading {
        let watcher = try LevelsWatcher(session.client, node: target.node.id, interval: interval)
        let deadline = ContinuousClock.now + .seconds(firstReadingTimeout)
        while ContinuousClock.now < deadline {
            if let reading = try watcher.next(within: 0.25) {
                try watcher.release()
                return reading
            }
        }
        try watcher.release()
        throw CommandError.invalid("\(target.node.name) published no levels within \(Int(firstReadingTimeout)) s (is its module older than levels?)")
    }
}

extension MeterView {
    /// A level as a cell of `show --levels`: the peak in dBFS (-inf for silence), red when it clips.
    static func cell(_ levels: [Level], _ k: Int) -> (String, Terminal.Style?) {
        guard k < levels.count, let peak = levels[k].peak else { return ("-inf", .dim) }
        return (Level.json(peak), levels[k].clips ? .red : nil)
    }

    /// The line `show --levels` adds under the legend.
    static func levelsNote(_ reading: LevelReading) -> String {
        "Levels: peak dBFS over \(reading.interval) ms (-inf = silence)"
            + (reading.frames == 0 ? "; the node is not running (nothing linked)." : ".")
    }
}
