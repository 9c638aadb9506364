/// A scene (issue 31): a named snapshot of a mix, the keys whose family's `scene` role says so
/// (gains, mutes, the matrix, output delays) and the master mute; not the ports, devices,
/// targets, MIDI, rules or the ramp. A key of the table given a scene role is in every scene
/// without more code.
///
/// A scene keeps the channel names of the node it was taken on, so that a scene recalled on a
/// node of another shape applies where the names match and reports the rest
/// (`unmatched(on:)`). What a recall or a morph does between two scenes is `SceneMorph`.
///
/// Part of the `Mixer` (the `scenes` key of the table: Scenes.swift), one line of text each:
///
///     NAME in=CHANNEL,CHANNEL out=CHANNEL,CHANNEL [mute] [KEY=VALUE ...]
///
///     show in=FL,FR out=FL,FR gain.in.FL=0.5 matrix.FL.FR=0.25 mute.out.FR=true
///
/// Keys are written with the scene's own channel names, and only where the value is not the
/// family's default (a gain 1, a cross-point 0, a mute off, a delay 0): a dense 64x64 matrix is
/// 4,096 words, a straight one 64. `mute` is the master mute.
public struct Scene: Equatable, Sendable {
    /// The key of the scene list, and what its errors are reported under.
    public static let key = "scenes"
    /// At most this many scenes a node.
    public static let limit = 32
    /// The longest scene name.
    public static let nameLimit = 63
    /// The longest line of one scene: a dense 256 x 256 matrix, written, is about 2 MB.
    public static let textLimit = 4 << 20
    /// The kinds a scene holds, in the table's order.
    public static let kinds: [ParameterKind] = ParameterKind.allCases.filter { $0.family.scene != .no }

    public private(set) var name: String
    /// The channel names of the node the scene was taken on.
    public private(set) var inputs: [String]
    public private(set) var outputs: [String]
    public private(set) var masterMute: Bool
    /// Each kind's values (`kinds` order), each in the order `Parameter.all(of:for:)` walks a
    /// mixer of these channels (`index(of:input:output:)`).
    public private(set) var values: [[ParameterValue]]
    /// The scene's line, as `init(text:)` reads it: written once, when the scene is made (a
    /// scene never changes). Props and the state file carry every scene's line on every change
    /// of the node: written each time, two dense 64x64 scenes kept the daemon's main loop busy
    /// 30 to 60 ms four times a second while a scene moved (its steps that late).
    public private(set) var text: String = ""

    /// The scene of `mixer` as it is now.
    public init(name: String, of mixer: Mixer) {
        self.name = name
        inputs = mixer.inputChannels
        outputs = mixer.outputChannels
        masterMute = mixer.masterMute
        values = Scene.kinds.map { kind in Parameter.all(of: kind, for: mixer).map { mixer.value(of: $0) } }
        text = written()
    }

    /// Where the value of `kind` for channels `input` and `output` (indices into the scene's
    /// own lists; ignored where the pattern has no such placeholder) is in its list.
    public func index(of kind: ParameterKind, input: Int, output: Int) -> Int {
        let family = kind.family
        return (family.hasInput ? input : 0) * (family.hasOutput ? outputs.count : 1) + (family.hasOutput ? output : 0)
    }

    /// The same scene under another name (`crosspoint scene rename`).
    public func renamed(_ newName: String) -> Scene {
        var scene = self
        scene.name = newName
        scene.text = newName + String(decoding: text.utf8.dropFirst(name.utf8.count), as: UTF8.self)
        return scene
    }

    /// The scene's value of one key, by its channels' indices in the scene.
    public func value(of kind: ParameterKind, input: Int = 0, output: Int = 0) -> ParameterValue? {
        guard let k = Scene.kinds.firstIndex(of: kind) else { return nil }
        let at = index(of: kind, input: input, output: output)
        return values[k].indices.contains(at) ? values[k][at] : nil
    }

    /// The scene's channels that `mixer` has no channel of that name for (a scene of another
    /// node, or of this one before its channels changed): a recall leaves those be.
    public func unmatched(on mixer: Mixer) -> (inputs: [String], outputs: [String]) {
        let ins = mixer.inputChannels.elementSet, outs = mixer.outputChannels.elementSet
        return (inputs.filter { !ins.contains($0) }, outputs.filter { !outs.contains($0) })
    }

    /// Whether two scenes were taken on nodes of the same channels (a morph needs that).
    public func hasShape(of other: Scene) -> Bool { inputs == other.inputs && outputs == other.outputs }

    /// Words of a scene's unmatched channels for a report: `inputs MIC, AUX3; output SUB`.
    public static func describe(unmatched: (inputs: [String], outputs: [String])) -> String {
        var parts: [String] = []
        if !unmatched.inputs.isEmpty {
            parts.append((unmatched.inputs.count == 1 ? "input " : "inputs ") + unmatched.inputs.joinedBytes(separator: ", "))
        }
        if !unmatched.outputs.isEmpty {
            parts.append((unmatched.outputs.count == 1 ? "output " : "outputs ") + unmatched.outputs.joinedBytes(separator: ", "))
        }
        return parts.joinedBytes(separator: "; ")
    }

    // MARK: Text

    /// The scene's line, as `init(text:)` reads it.
    private func written() -> String {
        var words = [name, "in=" + inputs.joinedBytes(separator: ","), "out=" + outputs.joinedBytes(separator: ",")]
        if masterMute { words.append("mute") }
        for (k, kind) in Scene.kinds.enumerated() {
            let family = kind.family, def = family.defaultParameterValue
            for i in family.hasInput ? 0..<inputs.count : 0..<1 {
                for j in family.hasOutput ? 0..<outputs.count : 0..<1 {
                    let v = values[k][index(of: kind, input: i, output: j)]
                    guard v != def else { continue }
                    let key = family.key(input: family.hasInput ? inputs[i] : "", output: family.hasOutput ? outputs[j] : "")
                    switch v {
                    case let .number(x): words.append(key + "=" + Gain.format(x))
                    case let .bool(b): words.append(key + "=" + (b ? "true" : "false"))
                    default: continue
                    }
                }
            }
        }
        return words.joinedBytes(separator: " ")
    }

    static let usage = "write NAME in=CHANNEL,CHANNEL out=CHANNEL,CHANNEL [mute] [KEY=VALUE ...], e.g. 'show in=FL,FR out=FL,FR gain.in.FL=0.5'"

    /// Reads a scene's line. Cut by bytes, never by Characters.
    public init(text: String) throws(CrosspointError) {
        func fail(_ reason: String) -> CrosspointError { .invalidValue(key: Scene.key, reason: reason) }
        guard text.utf8.count <= Scene.textLimit else { throw fail("a scene of \(text.utf8.count) bytes; at most \(Scene.textLimit)") }
        let words = text.utf8.split(omittingEmptySubsequences: true, whereSeparator: { $0 == 0x20 || $0 == 0x09 })
        guard let first = words.first else { throw fail("an empty scene: \(Scene.usage)") }
        name = String(decoding: first, as: UTF8.self)
        try Scene.checkName(name)
        let label = "scene '\(name)'"
        var ins: [String]?, outs: [String]?
        for word in words.dropFirst() {
            if word.starts(with: "in=".utf8) {
                guard ins == nil else { throw fail("\(label): in= is given twice") }
                ins = try Scene.channels(word.dropFirst(3), what: "input", scene: label)
            } else if word.starts(with: "out=".utf8) {
                guard outs == nil else { throw fail("\(label): out= is given twice") }
                outs = try Scene.channels(word.dropFirst(4), what: "output", scene: label)
            }
        }
        guard let ins, let outs else { throw fail("\(label) gives no in= or out= (its channels): \(Scene.usage)") }
        inputs = ins
        outputs = outs
        masterMute = false
        var inIndex: [Substring: Int] = [:], outIndex: [Substring: Int] = [:]
        for (i, n) in ins.enumerated() { inIndex[Substring(n)] = i }
        for (j, n) in outs.enumerated() { outIndex[Substring(n)] = j }
        values = Scene.kinds.map { kind in
            let family = kind.family
            let count = (family.hasInput ? ins.count : 1) * (family.hasOutput ? outs.count : 1)
            return [ParameterValue](repeating: family.defaultParameterValue, count: count)
        }
        var given = Set<Int>()
        let patterns = Scene.kinds.map { $0.family.pattern.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) }
        for word in words.dropFirst() {
            if word.starts(with: "in=".utf8) || word.starts(with: "out=".utf8) { continue }
            let shown = String(decoding: word.prefix(80), as: UTF8.self)
            if word.elementsEqual("mute".utf8) {
                masterMute = true
                continue
            }
            guard let eq = word.firstIndex(of: UInt8(ascii: "=")) else {
                throw fail("\(label): '\(shown)' is not KEY=VALUE: \(Scene.usage)")
            }
            let keyBytes = word[word.startIndex..<eq], valueBytes = word[word.index(after: eq)...]
            let parts = keyBytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            var found: (k: Int, at: Int)?
            for (k, pattern) in patterns.enumerated() where pattern.count == parts.count {
                var input = 0, output = 0, matches = true
                for (p, part) in zip(pattern, parts) {
                    if p.elementsEqual("<in>".utf8) {
                        guard let i = inIndex[Substring(decoding: part, as: UTF8.self)] else {
                            throw fail("\(label): '\(shown)' names an input the scene's in= does not list")
                        }
                        input = i
                    } else if p.elementsEqual("<out>".utf8) {
                        guard let j = outIndex[Substring(decoding: part, as: UTF8.self)] else {
                            throw fail("\(label): '\(shown)' names an output the scene's out= does not list")
                        }
                        output = j
                    } else if !p.elementsEqual(part) {
                        matches = false
                        break
                    }
                }
                if matches {
                    found = (k, index(of: Scene.kinds[k], input: input, output: output))
                    break
                }
            }
            guard let (k, at) = found else {
                throw fail("\(label): '\(shown)' is not a key a scene holds (gains, mutes, the matrix, delays)")
            }
            guard given.insert(k << 32 | at).inserted else { throw fail("\(label): '\(shown)' is given twice") }
            let family = Scene.kinds[k].family
            let valueText = String(decoding: valueBytes.prefix(32), as: UTF8.self)
            switch family.type {
            case .bool:
                if valueBytes.elementsEqual("true".utf8) { values[k][at] = .bool(true) }
                else if valueBytes.elementsEqual("false".utf8) { values[k][at] = .bool(false) }
                else { throw fail("\(label): '\(shown)': \(valueText) is not true or false") }
            default:
                guard valueBytes.count <= 32, let x = Double(Substring(decoding: valueBytes, as: UTF8.self)), x.isFinite else {
                    throw fail("\(label): '\(shown)': \(valueText) is not a number")
                }
                guard family.range.contains(x) else {
                    throw fail("\(label): '\(shown)' is outside \(Gain.format(family.range.lowerBound)) to \(Gain.format(family.range.upperBound))")
                }
                // Gains are Floats in the mixer: kept as the mixer would keep them.
                values[k][at] = .number(family.unit == .gain ? Double(Float(x)) : x)
            }
        }
        self.text = written()
    }

    /// A scene's name: 1 to 63 ASCII letters, digits, `_`, `-` or `.`.
    public static func checkName(_ name: String) throws(CrosspointError) {
        guard !name.isEmpty, name.utf8.count <= nameLimit,
              name.utf8.allSatisfy({ Mixer.isASCIILetterOrDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else {
            throw .invalidValue(key: key, reason: "'\(name.prefix(80))' is not a scene name: 1 to \(nameLimit) ASCII letters, digits, _, - or .")
        }
    }

    private static func channels(_ list: Substring.UTF8View.SubSequence, what: String, scene: String) throws(CrosspointError) -> [String] {
        let names = list.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        do {
            try Mixer.checkChannels(names, count: names.count, what: what)
        } catch {
            throw .invalidValue(key: key, reason: "\(scene): \(error.description)")
        }
        return names
    }
}
