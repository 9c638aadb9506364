/// A ducking rule (issue 31): while one or more inputs (the trigger) are louder than a
/// threshold, the node lowers other inputs or outputs by a depth, computed in the render cycle
/// from the trigger's own block (`DuckingEnvelope`; the render side is `DuckingStage`).
///
/// Part of the `Mixer` (the `duck` key of the table): module arguments, set-param, Props, the
/// state file and presets carry the rules like any key. One line of text each:
///
///     TRIGGER[,TRIGGER...] lowers=CHANNEL[,CHANNEL...] [depth=DB] [threshold=DB] [knee=DB]
///         [attack=MS] [hold=MS] [release=MS] [detect=rms|peak] [off]
///
///     mic lowers=music_FL,music_FR,game_FL,game_FR depth=-15
///     speech_FL,speech_FR lowers=out:FL,out:FR depth=-20 threshold=-50 release=1500
///
/// TRIGGER names inputs (by channel name or index; kept by name). A CHANNEL is an input
/// (`music_FL`), written `out:NAME` an output (`out:FL`), or written `matrix.IN.OUT` (the
/// cross-point's key) one cross-point (`matrix.music_FL.stream_FL`: the music lowered in the
/// stream mix only); a rule never lowers its own trigger. Levels are dBFS (`dB` may follow the
/// number), times milliseconds (`ms` or `s` may follow). Several rules lowering one channel: the deepest reduction wins, not the sum. `off`
/// keeps a rule without applying it. Names the node no longer has are kept and do nothing.
public struct DuckingRule: Equatable, Sendable {
    /// At most this many rules a node.
    public static let limit = 16
    static let key = "duck"
    /// What `detect=` measures the trigger's block by.
    public enum Detection: String, Sendable { case rms, peak }

    public static let depthRange: ClosedRange<Double> = -60...0
    public static let thresholdRange: ClosedRange<Double> = -90...0
    public static let kneeRange: ClosedRange<Double> = 0...40
    public static let attackRange: ClosedRange<Double> = 0...5000
    public static let holdRange: ClosedRange<Double> = 0...10000
    public static let releaseRange: ClosedRange<Double> = 0...10000

    /// The trigger's inputs, by name.
    public var triggers: [String]
    /// Inputs it lowers, by name.
    public var inputs: [String]
    /// Outputs it lowers, by name (written `out:NAME`).
    public var outputs: [String]
    /// Cross-points it lowers, by their channels' names (written `matrix.IN.OUT`).
    public var crosspoints: [CrosspointName] = []

    /// A cross-point by the names of its input and output (`matrix.music_FL.stream_FL`).
    public struct CrosspointName: Hashable, Sendable {
        public var input: String
        public var output: String
        public init(input: String, output: String) { self.input = input; self.output = output }
        /// As a rule writes it: the cross-point's key.
        public var text: String { "matrix." + input + "." + output }
    }
    /// dB (0 or below), dBFS, dB.
    public var depth = -12.0, threshold = -40.0, knee = 0.0
    /// Milliseconds.
    public var attack = 20.0, hold = 300.0, release = 600.0
    public var detect = Detection.rms
    public var enabled = true

    /// The envelope's settings (seconds).
    public var settings: DuckingEnvelope.Settings {
        .init(depth: depth, threshold: threshold, knee: knee, attack: attack / 1000, hold: hold / 1000, release: release / 1000)
    }

    static let usage = "write TRIGGER[,TRIGGER] lowers=CHANNEL[,out:CHANNEL][,matrix.IN.OUT] [depth=DB] [threshold=DB] [knee=DB] [attack=MS] [hold=MS] [release=MS] [detect=rms|peak] [off], e.g. 'mic lowers=music_FL,music_FR depth=-15'"

    /// Reads a rule's line (names as written: `Mixer.setDucking` resolves them).
    public init(text: String) throws(CrosspointError) {
        func fail(_ reason: String) -> CrosspointError { .invalidValue(key: Self.key, reason: reason) }
        guard text.utf8.count <= 1024 else { throw fail("a rule of \(text.utf8.count) bytes; at most 1024") }
        // Words apart by spaces or tabs; cut by bytes (never by Characters: a combining mark after
        // "=" or "out:" must not join the byte before it).
        let words = text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == " " || $0 == "\t" })
        guard let first = words.first, !first.utf8.contains(UInt8(ascii: "=")) else {
            throw fail("'\(text.prefix(80))' names no trigger first: \(Self.usage)")
        }
        triggers = try Self.names(first, what: "trigger")
        inputs = []
        outputs = []
        var lowers = false
        var given = Set<String>()
        for word in words.dropFirst() {
            if word == "off" { enabled = false; continue }
            guard let eq = word.utf8.firstIndex(of: UInt8(ascii: "=")) else {
                throw fail("'\(word.prefix(40))' in '\(text.prefix(80))' is not an option: \(Self.usage)")
            }
            let name = Substring(word.utf8[word.utf8.startIndex..<eq]), value = Substring(word.utf8[word.utf8.index(after: eq)...])
            guard given.insert(String(name)).inserted else {
                throw fail("\(name.prefix(40))= is given twice in '\(text.prefix(80))'")
            }
            switch name {
            case "lowers":
                lowers = true
                for channel in try Self.names(value, what: "channel to lower") {
                    if channel.utf8.starts(with: "matrix.".utf8) {
                        let parts = channel.utf8.dropFirst(7).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
                        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                            throw fail("'\(channel.prefix(80))' is not a cross-point: matrix.IN.OUT, e.g. matrix.music_FL.FL")
                        }
                        crosspoints.append(CrosspointName(input: String(decoding: parts[0], as: UTF8.self),
                                                          output: String(decoding: parts[1], as: UTF8.self)))
                    } else if channel.utf8.starts(with: "out:".utf8) {
                        let output = String(decoding: channel.utf8.dropFirst(4), as: UTF8.self)
                        guard !output.isEmpty else { throw fail("'\(channel)' names no output after out:") }
                        outputs.append(output)
                    } else {
                        inputs.append(channel)
                    }
                }
            case "depth": depth = try Self.number(value, option: "depth", units: ["dB"], range: Self.depthRange)
            case "threshold": threshold = try Self.number(value, option: "threshold", units: ["dB"], range: Self.thresholdRange)
            case "knee": knee = try Self.number(value, option: "knee", units: ["dB"], range: Self.kneeRange)
            case "attack": attack = try Self.milliseconds(value, option: "attack", range: Self.attackRange)
            case "hold": hold = try Self.milliseconds(value, option: "hold", range: Self.holdRange)
            case "release": release = try Self.milliseconds(value, option: "release", range: Self.releaseRange)
            case "detect":
                guard let d = Detection(rawValue: String(value)) else { throw fail("detect=\(value.prefix(40)): rms or peak") }
                detect = d
            default:
                throw fail("'\(name.prefix(40))' in '\(text.prefix(80))' is not an option (lowers=, depth=, threshold=, knee=, attack=, hold=, release=, detect=, off): \(Self.usage)")
            }
        }
        guard lowers, !(inputs.isEmpty && outputs.isEmpty && crosspoints.isEmpty) else {
            throw fail("'\(text.prefix(80))' lowers nothing: \(Self.usage)")
        }
    }

    /// The rule as `init(text:)` reads it: every option written, in one order.
    public var text: String {
        let lowered = inputs + outputs.map { "out:" + $0 } + crosspoints.map(\.text)
        var words = [triggers.joinedBytes(separator: ","), "lowers=" + lowered.joinedBytes(separator: ","),
                     "depth=" + Gain.format(depth), "threshold=" + Gain.format(threshold)]
        if knee != 0 { words.append("knee=" + Gain.format(knee)) }
        words += ["attack=" + Gain.format(attack), "hold=" + Gain.format(hold), "release=" + Gain.format(release),
                  "detect=" + detect.rawValue]
        if !enabled { words.append("off") }
        return words.joinedBytes(separator: " ")
    }

    /// The channels of a comma-separated list, none empty, none twice.
    private static func names(_ list: Substring, what: String) throws(CrosspointError) -> [String] {
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !names.contains(where: \.isEmpty) else {
            throw .invalidValue(key: key, reason: "'\(list.prefix(80))' has an empty \(what)")
        }
        guard names.elementSet.count == names.count else {
            throw .invalidValue(key: key, reason: "'\(list.prefix(80))' names a \(what) twice")
        }
        return names
    }

    /// A number with an optional unit after it, finite and in `range`.
    private static func number(_ word: Substring, option: String, units: [String], range: ClosedRange<Double>,
                               scale: [Double] = [1]) throws(CrosspointError) -> Double {
        var digits = word, factor = 1.0
        for (k, unit) in units.enumerated() where digits.utf8.count > unit.utf8.count && digits.utf8.reversed().starts(with: unit.utf8.reversed()) {
            digits = Substring(word.utf8.dropLast(unit.utf8.count))
            factor = k < scale.count ? scale[k] : 1
            break
        }
        let unitsText = units.joinedBytes(separator: " or ")
        let rangeText = "\(Gain.format(range.lowerBound)) to \(Gain.format(range.upperBound)) \(units[0])"
        guard digits.utf8.count <= 24, let value = Double(digits) else {
            throw .invalidValue(key: key, reason: "\(option)=\(word.prefix(40)) is not a number from \(rangeText) (\(unitsText) may follow)")
        }
        guard value.isFinite else {
            throw .invalidValue(key: key, reason: "\(option)=\(word.prefix(40)) is \(value.isNaN ? "not a number from" : "outside") \(rangeText)")
        }
        let scaled = value * factor
        guard range.contains(scaled) else {
            throw .invalidValue(key: key, reason: "\(option)=\(word.prefix(40)) is outside \(rangeText)")
        }
        return scaled
    }

    private static func milliseconds(_ word: Substring, option: String, range: ClosedRange<Double>) throws(CrosspointError) -> Double {
        try number(word, option: option, units: ["ms", "s"], range: range, scale: [1, 1000])
    }

    /// The rule's channels on `mixer`, by index: triggers, lowered inputs, lowered outputs,
    /// lowered cross-points (names it does not have left out).
    public func indices(in mixer: Mixer) -> (triggers: [Int], inputs: [Int], outputs: [Int], crosspoints: [CrosspointIndex]) {
        (triggers.compactMap { mixer.inputChannels.firstIndex(of: $0) },
         inputs.compactMap { mixer.inputChannels.firstIndex(of: $0) },
         outputs.compactMap { mixer.outputChannels.firstIndex(of: $0) },
         crosspoints.compactMap { c in
             guard let i = mixer.inputChannels.firstIndex(of: c.input), let j = mixer.outputChannels.firstIndex(of: c.output) else { return nil }
             return CrosspointIndex(input: i, output: j)
         })
    }

    /// A cross-point by its input's and output's indices.
    public struct CrosspointIndex: Hashable, Sendable {
        public let input: Int
        public let output: Int
        public init(input: Int, output: Int) { self.input = input; self.output = output }
    }
}

extension Mixer {
    /// Replaces the ducking rules (lines of text; DuckingRule). Triggers and lowered channels
    /// are found by name or index and kept by name. Nothing changes if anything is wrong.
    public mutating func setDucking(_ texts: [String]) throws(CrosspointError) {
        let key = DuckingRule.key
        guard texts.count <= DuckingRule.limit else {
            throw .invalidValue(key: key, reason: "holds \(texts.count) rules; at most \(DuckingRule.limit)")
        }
        var parsed: [DuckingRule] = []
        for (n, text) in texts.enumerated() {
            var rule: DuckingRule
            do {
                rule = try DuckingRule(text: text)
                rule.triggers = try rule.triggers.map { token throws(CrosspointError) in inputChannels[try inputIndex(token)] }
                rule.inputs = try rule.inputs.map { token throws(CrosspointError) in inputChannels[try inputIndex(token)] }
                rule.outputs = try rule.outputs.map { token throws(CrosspointError) in outputChannels[try outputIndex(token)] }
                rule.crosspoints = try rule.crosspoints.map { c throws(CrosspointError) in
                    DuckingRule.CrosspointName(input: inputChannels[try inputIndex(c.input)], output: outputChannels[try outputIndex(c.output)])
                }
            } catch {
                throw .invalidValue(key: key, reason: "rule \(n) '\(text.prefix(80))': \(error.description)")
            }
            // Names resolved (an index and a name of one channel are the same channel): none twice.
            for (list, what) in [(rule.triggers, "trigger"), (rule.inputs, "input to lower"), (rule.outputs, "output to lower")]
                where list.elementSet.count != list.count {
                throw .invalidValue(key: key, reason: "rule \(n) '\(text.prefix(80))' names a \(what) twice")
            }
            if Set(rule.crosspoints).count != rule.crosspoints.count {
                throw .invalidValue(key: key, reason: "rule \(n) '\(text.prefix(80))' names a cross-point twice")
            }
            if let own = rule.inputs.first(where: rule.triggers.contains) ?? rule.crosspoints.first(where: { rule.triggers.contains($0.input) })?.text {
                throw .invalidValue(key: key, reason: "rule \(n) '\(text.prefix(80))' lowers its own trigger \(own)")
            }
            parsed.append(rule)
        }
        ducking = parsed
    }

    /// Sets one rule's depth (`duck.depth.<rule>`), dB from -60 to 0.
    public mutating func setDuckingDepth(_ rule: Int, _ decibels: Double) throws(CrosspointError) {
        let key = ParameterKind.duckDepth.family.key(input: 0, output: 0, rule: rule)
        guard decibels.isFinite else { throw .notFinite(key: key, value: decibels) }
        guard DuckingRule.depthRange.contains(decibels) else { throw .outOfRange(key: key, value: decibels, range: DuckingRule.depthRange) }
        guard ducking.indices.contains(rule) else { throw .invalidValue(key: key, reason: noRule(rule)) }
        ducking[rule].depth = decibels
    }

    /// Switches one rule on or off (`duck.on.<rule>`).
    public mutating func setDuckingEnabled(_ rule: Int, _ on: Bool) throws(CrosspointError) {
        guard ducking.indices.contains(rule) else {
            throw .invalidValue(key: ParameterKind.duckOn.family.key(input: 0, output: 0, rule: rule), reason: noRule(rule))
        }
        ducking[rule].enabled = on
    }

    private func noRule(_ rule: Int) -> String {
        ducking.isEmpty ? "the node has no ducking rules" : "there is no rule \(rule) (the rules are numbered 0 to \(ducking.count - 1))"
    }

    /// The rule a key names (`duck.depth.<rule>`): its number in `duck`, or its trigger as the
    /// rule writes it (`mic`, `speech_FL,speech_FR`; channel indices too) where one rule alone has it.
    public func duckingRuleIndex(_ word: Substring) throws(CrosspointError) -> Int {
        if let n = Int(word) {
            guard ducking.indices.contains(n) else { throw .invalidValue(key: DuckingRule.key, reason: noRule(n)) }
            return n
        }
        let found = duckingRules(triggeredBy: word)
        guard found.count == 1 else {
            let triggers = ducking.map { $0.triggers.joinedBytes(separator: ",") }
            throw .invalidValue(key: DuckingRule.key, reason: found.isEmpty
                ? "no rule is triggered by '\(word.prefix(80))'" + (triggers.isEmpty ? " (the node has no ducking rules)" : " (the triggers are \(triggers.joinedBytes(separator: "; ")))")
                : "\(found.count) rules are triggered by \(word.prefix(80)): name one by its number (\(found.map(\.decimalText).joinedBytes(separator: ", ")))")
        }
        return found[0]
    }

    /// The rules whose trigger is `word` as a rule writes it (`mic`, `speech_FL,speech_FR`;
    /// channel indices too), in their order.
    public func duckingRules(triggeredBy word: Substring) -> [Int] {
        let names = word.split(separator: ",").map { token in (try? inputIndex(token)).map { inputChannels[$0] } ?? String(token) }
        return ducking.indices.filter { ducking[$0].triggers == names }
    }

    /// A rule as a key names it: its trigger where no other rule has it, else its number.
    public func duckingRuleName(_ rule: Int) -> String {
        guard ducking.indices.contains(rule) else { return rule.decimalText }
        let triggers = ducking[rule].triggers
        return ducking.filter({ $0.triggers == triggers }).count == 1 ? triggers.joinedBytes(separator: ",") : rule.decimalText
    }
}
