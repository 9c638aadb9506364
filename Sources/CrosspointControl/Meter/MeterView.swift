import CrosspointClient
import CrosspointCore
import CrosspointPipeWire
import Glibc

/// What the meter shows: bars, numbers, peak hold and clip marks.
package struct MeterView {
    package static let holdTime: Duration = .milliseconds(1500)
    /// The bars' scale, dBFS.
    package static let floor = -60.0

    package let node: GraphNode
    package let interval: Int
    package let unicode: Bool
    /// Per channel (inputs, then outputs): the peak held and until when.
    private var holds: [String: (peak: Double?, until: ContinuousClock.Instant)] = [:]
    private var clips: [String: ContinuousClock.Instant] = [:]

    package init(node: GraphNode, interval: Int, unicode: Bool) {
        self.node = node
        self.interval = interval
        self.unicode = unicode
    }

    package static var terminalSpeaksUTF8: Bool {
        for key in ["LC_ALL", "LC_CTYPE", "LANG"] {
            if let value = getenv(key).map({ String(cString: $0) }), !value.isEmpty {
                return value.uppercased().contains("UTF-8") || value.uppercased().contains("UTF8")
            }
        }
        return false
    }

    /// One reading as one line of JSON.
    package static func json(_ reading: LevelReading, _ channels: MeterChannels) -> String {
        func list(_ levels: [Level], _ names: [(port: String, channel: String)]) -> String {
            "[" + levels.enumerated().map { k, level in
                let name = k < names.count ? names[k].channel : "\(k)"
                return "{\"channel\":\(jsonString(name)),\"peak_db\":\(Level.json(level.peak)),\"rms_db\":\(Level.json(level.rms))}"
            }.joined(separator: ",") + "]"
        }
        let ducking = reading.ducking.isEmpty ? ""
            : ",\"duck\":[" + reading.ducking.enumerated().map { "{\"rule\":\($0.offset),\"reduction_db\":\(Level.json($0.element))}" }
                .joined(separator: ",") + "]"
        return "{\"inputs\":\(list(reading.inputs, channels.inputs)),\"outputs\":\(list(reading.outputs, channels.outputs))\(ducking)}"
    }

    package static func jsonString(_ text: String) -> String {
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
    package static func names(_ reading: LevelReading, _ channels: MeterChannels) -> [String] {
        (0..<reading.inputs.count).map { $0 < channels.inputs.count ? channels.inputs[$0].port : PortName.input("\($0)") }
            + (0..<reading.outputs.count).map { $0 < channels.outputs.count ? channels.outputs[$0].port : PortName.output("\($0)") }
    }

    /// Takes a reading into the peak holds (the highest peak of the last 1.5 s) and clip marks.
    package mutating func observe(_ reading: LevelReading, _ channels: MeterChannels) {
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
    package func frame(_ reading: LevelReading, _ channels: MeterChannels, terminal: Terminal, width: Int, height: Int?,
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
        // Each ducking rule's gain reduction now (crosspoint duck list names them).
        if !reading.ducking.isEmpty {
            lines.append("ducking: " + reading.ducking.enumerated().map { "rule \($0.offset) \(Level.json($0.element)) dB" }.joined(separator: ", "))
        }
        return lines
    }

    /// Which channels fit in `rows` lines (a line is kept for each "more" note).
    package static func fit(inputs n: Int, outputs m: Int, rows: Int) -> (shown: [Int], hidden: (inputs: Int, outputs: Int)) {
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

extension MeterView {
    /// A level as a cell of `show --levels`: the peak in dBFS (-inf for silence), red when it clips.
    package static func cell(_ levels: [Level], _ k: Int) -> (String, Terminal.Style?) {
        guard k < levels.count, let peak = levels[k].peak else { return ("-inf", .dim) }
        return (Level.json(peak), levels[k].clips ? .red : nil)
    }

    /// The line `show --levels` adds under the legend.
    package static func levelsNote(_ reading: LevelReading) -> String {
        "Levels: peak dBFS over \(reading.interval) ms (-inf = silence)"
            + (reading.frames == 0 ? "; the node is not running (nothing linked)." : ".")
    }
}
