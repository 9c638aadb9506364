/// A node's scenes (issue 31), as keys of the table: `scenes` (the list, Scene.swift),
/// `scene.safe` (keys a recall leaves alone), `scene.morph.between` and `scene.morph` (a
/// crossfader between two scenes), and the request `scene.recall` (SceneRecall), which the
/// running node carries out itself over the time asked (SceneMotion, in the node).
extension Mixer {
    /// At most this many recall safes.
    public static let sceneSafeLimit = 512

    /// Replaces the scenes (lines of text; Scene). Names are unique. Nothing changes if anything
    /// is wrong.
    public mutating func setScenes(_ texts: [String]) throws(CrosspointError) {
        guard texts.count <= Scene.limit else {
            throw .invalidValue(key: Scene.key, reason: "holds \(texts.count) scenes; at most \(Scene.limit)")
        }
        var parsed: [Scene] = []
        var names = Set<String>()
        for (n, text) in texts.enumerated() {
            let scene: Scene
            do {
                scene = try Scene(text: text)
            } catch {
                throw .invalidValue(key: Scene.key, reason: "scene \(n): \(error.description)")
            }
            guard names.insert(scene.name).inserted else {
                throw .invalidValue(key: Scene.key, reason: "two scenes are named '\(scene.name)'")
            }
            parsed.append(scene)
        }
        scenes = parsed
    }

    /// Stores the mix as it is now as scene `name`, in the place of one of that name or after
    /// the others (`crosspoint scene store`, the surface's Store). Nothing changes if the name
    /// is not one or the node holds its most scenes already.
    public mutating func storeScene(named name: String) throws(CrosspointError) {
        try Scene.checkName(name)
        let line = Scene(name: name, of: self).text
        var lines = scenes.map(\.text)
        if let at = scenes.firstIndex(where: { $0.name == name }) { lines[at] = line } else { lines.append(line) }
        try setScenes(lines)
    }

    /// Replaces the recall safes: keys of a scene (`gain.in.mic`, `gain.master`), by channel
    /// name or index, kept as written; a key this node has no channel for is kept and does
    /// nothing.
    public mutating func setSceneSafes(_ keys: [String]) throws(CrosspointError) {
        let key = "scene.safe"
        guard keys.count <= Mixer.sceneSafeLimit else {
            throw .invalidValue(key: key, reason: "holds \(keys.count) keys; at most \(Mixer.sceneSafeLimit)")
        }
        for k in keys {
            guard let kind = ParameterKind(key: k), kind.family.scene != .no else {
                throw .invalidValue(key: key, reason: "'\(k.prefix(80))' is not a key a scene holds (gain.master, gain.in.<in>, gain.out.<out>, matrix.<in>.<out>, mute.in.<in>, mute.out.<out>, delay.out.<out>)")
            }
        }
        guard keys.elementSet.count == keys.count else { throw .invalidValue(key: key, reason: "names a key twice") }
        sceneSafes = keys
    }

    /// The two scenes `scene.morph` moves between (none: no morph). New ends put the fader at 0
    /// and move nothing: the fader's next move sets the mix between them.
    public mutating func setMorphScenes(_ names: [String]) throws(CrosspointError) {
        let key = "scene.morph.between"
        guard names.isEmpty || names.count == 2 else {
            throw .invalidValue(key: key, reason: "names \(names.count) scenes; give two (the ends of the fader), or none")
        }
        for name in names where scene(named: name) == nil {
            throw .invalidValue(key: key, reason: "there is no scene '\(name.prefix(80))'\(sceneNamesNote)")
        }
        if names.count == 2 {
            guard names[0] != names[1] else { throw .invalidValue(key: key, reason: "names '\(names[0])' twice; give two scenes") }
            try checkMorph(names[0], names[1], key: key)
        }
        // New ends put the fader at 0 (the first), moving nothing: its next move sets the mix.
        if names != morphScenes { morphPosition = 0 }
        morphScenes = names
    }

    /// Takes the fader's position as a node publishes it, moving nothing (a client reading a
    /// node's Props reads its gains as they are; the position is where the fader was last put).
    public mutating func takeMorphPosition(_ position: Double) {
        guard position.isFinite else { return }
        morphPosition = min(max(position, 0), 1)
    }

    /// Moves the morph fader to `position` (0: the first scene of `scene.morph.between`, 1: the
    /// second): every key of the scenes not in the safes is set to where it is that far along
    /// the way, and glides there over the ramp like any change. The position the fader is at
    /// already moves nothing (its Props sent back as read, a controller repeating itself): keys
    /// changed by hand since stay; `morph(to:)` moves there whatever the fader says.
    public mutating func setMorph(_ position: Double) throws(CrosspointError) {
        // The fader's position is always in 0...1: one that is not (or NaN) is not it, and
        // `morph(to:)` refuses it.
        if position == morphPosition { return }
        try morph(to: position)
    }

    /// Sets every key of the two scenes of `scene.morph.between` (but the safes) to where it is
    /// `position` of the way, and the fader there, even where the fader is already.
    public mutating func morph(to position: Double) throws(CrosspointError) {
        let key = "scene.morph"
        guard position.isFinite else { throw .notFinite(key: key, value: position) }
        guard (0...1).contains(position) else { throw .outOfRange(key: key, value: position, range: 0...1) }
        guard morphScenes.count == 2 else {
            throw .invalidValue(key: key, reason: "no scenes to morph between; set scene.morph.between to two scenes first")
        }
        try checkMorph(morphScenes[0], morphScenes[1], key: key)
        guard let a = scene(named: morphScenes[0]), let b = scene(named: morphScenes[1]) else { return }
        var next = try morphed(from: a, to: b, at: position, keeping: sceneSafeParameters)
        next.morphPosition = position
        self = next
    }

    /// Recalls a scene at once (the ramp glides it): every key not in the safes takes the
    /// scene's value where the channel names match. Returns the scene's channels this mixer
    /// has no channel for.
    @discardableResult
    public mutating func recall(_ name: String) throws(CrosspointError) -> (inputs: [String], outputs: [String]) {
        guard let target = scene(named: name) else {
            throw .invalidValue(key: SceneRecall.key, reason: "there is no scene '\(name.prefix(80))'\(sceneNamesNote)")
        }
        let morph = SceneMorph(from: Scene(name: "", of: self), to: target, on: self, keeping: sceneSafeParameters)
        var next = self
        try morph.apply(at: 1, to: &next)
        self = next
        return morph.unmatched
    }

    /// The scene of that name.
    public func scene(named name: String) -> Scene? { scenes.first { $0.name == name } }

    /// The recall safes that name a key of this mixer's channels.
    public var sceneSafeParameters: Set<Parameter> {
        var safe = Set<Parameter>()
        for key in sceneSafes { if let p = try? Parameter(key: key, in: self) { safe.insert(p) } }
        return safe
    }

    private var sceneNamesNote: String {
        scenes.isEmpty ? " (the node has none)" : " (it has \(scenes.map(\.name).joinedBytes(separator: ", ")))"
    }

    private func checkMorph(_ first: String, _ second: String, key: String) throws(CrosspointError) {
        guard let a = scene(named: first), let b = scene(named: second) else {
            throw .invalidValue(key: key, reason: "scene '\(scene(named: first) == nil ? first : second)' is gone")
        }
        guard a.hasShape(of: b) else {
            throw .invalidValue(key: key, reason: "scenes '\(a.name)' (\(a.inputs.count) inputs, \(a.outputs.count) outputs) and '\(b.name)' (\(b.inputs.count) inputs, \(b.outputs.count) outputs) are of different shapes; a morph needs two scenes of the same channels")
        }
    }
}

/// A request to recall a scene over a time (`scene.recall`): `[ NAME ]` (at the ramp) or
/// `[ NAME TIME ]`, TIME 0 to 60 s written `10s`, `2500ms` or `2500` (milliseconds).
public struct SceneRecall: Hashable, Sendable {
    public static let key = "scene.recall"
    public static let timeRange: ClosedRange<Double> = 0...60_000

    public let name: String
    /// Milliseconds.
    public let milliseconds: Double

    public init(name: String, milliseconds: Double = 0) throws(CrosspointError) {
        try Scene.checkName(name)
        guard milliseconds.isFinite, SceneRecall.timeRange.contains(milliseconds) else {
            throw .invalidValue(key: SceneRecall.key, reason: "a recall takes 0 to 60 s, not \(Gain.format(milliseconds / 1000)) s")
        }
        self.name = name
        self.milliseconds = milliseconds
    }

    /// A request from a parameter value: a list of a name and, optionally, a time.
    public init(_ value: ParameterValue) throws(CrosspointError) {
        guard case let .names(words) = value, (1...2).contains(words.count) else {
            throw .invalidValue(key: SceneRecall.key, reason: "expects [ NAME ] or [ NAME TIME ] (TIME as 10s or 2500ms), got \(value)")
        }
        var ms = 0.0
        if words.count == 2 { ms = try SceneRecall.time(words[1]) }
        try self.init(name: words[0], milliseconds: ms)
    }

    public var value: ParameterValue {
        .names(milliseconds == 0 ? [name] : [name, Gain.format(milliseconds) + "ms"])
    }

    /// A time as written: `10s`, `2.5s`, `2500ms`, or milliseconds alone.
    public static func time(_ word: String) throws(CrosspointError) -> Double {
        var digits = Substring(word), scale = 1.0
        if word.utf8.count > 2, word.utf8.reversed().starts(with: "sm".utf8) {
            digits = Substring(word.utf8.dropLast(2))
        } else if word.utf8.count > 1, word.utf8.last == UInt8(ascii: "s") {
            digits = Substring(word.utf8.dropLast(1))
            scale = 1000
        }
        guard digits.utf8.count <= 24, let v = Double(digits), v.isFinite else {
            throw .invalidValue(key: key, reason: "'\(word.prefix(40))' is not a time; write 10s, 2500ms or 2500 (milliseconds)")
        }
        return v * scale
    }
}
