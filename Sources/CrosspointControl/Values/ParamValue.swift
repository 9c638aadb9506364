import CrosspointCore

/// Values of `param` and `ramp`, by the type of their key.
package enum ParamValue {
    /// The value `text` gives key `p` on mixer `m` (whose current value a gain step starts from).
    package static func parse(
        _ text: String, for p: Parameter, in m: Mixer, linear: Bool, note: inout [String], exact: inout Bool
    ) throws -> ParameterValue {
        let family = p.kind.family
        switch family.type {
        case .float where p.kind.family.unit == .milliseconds && p.kind == .outputDelay:
            guard case let .milliseconds(ms) = try DelayAmount(parsing: text, key: p.key) else {
                throw CommandError.invalid("\(p.key): samples need the graph's rate; `crosspoint delay NODE OUTPUT \(text.printable)` converts them")
            }
            return .number(ms)
        case .float where p.kind.family.unit == .milliseconds:
            return .number(try milliseconds(text))
        case .float where p.kind.family.unit == .decibels:
            var text = CommandLineWords.restore(text).trimmingSpaces()
            if text.lowercased().hasSuffix("db") { text = String(text.dropLast(2)).trimmingSpaces() }
            guard let value = Double(text), value.isFinite, family.range.contains(value) else {
                throw CommandError.invalid("\(p.key): '\(text.printable)' is not a level from \(Gain.format(family.range.lowerBound)) to \(Gain.format(family.range.upperBound)) dB")
            }
            return .number(value)
        case .float where p.kind.family.unit == .fraction:
            let value = Double(CommandLineWords.restore(text).trimmingSpaces())
            guard let value, value.isFinite, family.range.contains(value) else {
                throw CommandError.invalid("\(p.key): '\(text.printable)' is not a number from \(Gain.format(family.range.lowerBound)) to \(Gain.format(family.range.upperBound))")
            }
            return .number(value)
        case .float:
            let gain = try GainInput.parse(text, linear: linear)
            guard case let .number(current) = m.value(of: p) else { return .number(0) }
            let (value, clamped) = try gain.resolve(current: current, key: p.key)
            if let clamped { note.append("\(p.key): \(clamped)") }
            exact = exact && gain.isExact
            return .number(value)
        case .int:
            guard let n = Int(text), Mixer.channelLimit.contains(n) else {
                throw CommandError.invalid("\(p.key): '\(text.printable)' is not a whole number from 1 to 256")
            }
            return .number(Double(n))
        case .bool:
            switch text.lowercased() {
            case "true", "on", "yes", "1": return .bool(true)
            case "false", "off", "no", "0": return .bool(false)
            default: throw CommandError.invalid("\(p.key): '\(text.printable)' is not true or false (on/off, 1/0)")
            }
        case .intArray:
            do {
                return .ints(try ChannelMap(parsing: text).sources)
            } catch {
                throw CommandError.from(error, m)
            }
        case .names where p.kind == .midiMap:
            // Mappings hold spaces: they are separated by commas ("none" or "" for no mapping).
            let lower = text.trimmingSpaces().lowercased()
            guard lower != "none", !lower.isEmpty else { return .names([]) }
            return .names(text.split(separator: ",").map { String($0.trimmingSpaces()) })
        case .names where p.kind == .devices || p.kind == .targets || p.kind == .ducking || p.kind == .scenes:
            // Lines that hold spaces and commas (position=FL,FR): separated by semicolons.
            let lower = text.trimmingSpaces().lowercased()
            guard lower != "none", !lower.isEmpty else { return .names([]) }
            return .names(text.split(separator: ";").map { String($0.trimmingSpaces()) }.filter { !$0.isEmpty })
        case .names:
            let names = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
            guard !names.isEmpty else { throw CommandError.invalid("\(p.key): give the names as FL,FR") }
            return .names(names)
        }
    }

    package static func milliseconds(_ typed: String) throws -> Double {
        let text = CommandLineWords.restore(typed)
        let body = text.lowercased().hasSuffix("ms") ? String(text.dropLast(2)) : text
        guard let value = Double(body.trimmingSpaces()), value.isFinite else {
            throw CommandError.invalid("ramp.ms: '\(text.printable)' is not a time; write milliseconds: 10 or 10ms")
        }
        guard Mixer.rampRange.contains(value) else {
            throw CommandError.invalid("ramp.ms: \(text.printable) is \(value < 0 ? "below the minimum 0" : "above the maximum 1000") ms")
        }
        return value
    }
}
