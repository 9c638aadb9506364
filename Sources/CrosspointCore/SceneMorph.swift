/// The way from one scene to another on one mixer (issue 31), worked out once: which of the
/// mixer's keys move, from what, to what, and how (the table's scene role), so that a recall
/// over seconds or a morph fader can ask for any point of the way (`apply(at:to:)`) without
/// finding the keys again: a 64 x 64 mix is 4,096 cross-points, asked for fifty times a second.
///
/// - Gains move along `GainCurve` (in dB; equal power where one side is zero). A gain a mute
///   silences on one side fades through zero instead of jumping: while moving, the mute is off
///   and the gain carries it; it is set at the end (muted on both sides, it stays muted). The
///   master mute goes with `gain.master`.
/// - Delays change once, half-way (the node cross-fades a delay over `ramp.ms`).
/// - Keys in `keeping` (a recall's safes) are left as the mixer has them; keeping a gain keeps
///   its mute too.
/// - Keys only one scene names for the mixer's channels are left alone; channels `to` has that
///   the mixer has not are `unmatched`.
///
/// At `t >= 1` the keys are exactly `to`'s; at `t <= 0` exactly `from`'s.
public struct SceneMorph: Sendable {
    struct GainMove: Sendable {
        let parameter: Parameter
        let from: Float, to: Float
        /// The mute moved with it, if both scenes hold it and it is not kept.
        let mute: Parameter?
        let mutedFrom: Bool, mutedTo: Bool
        /// `gain.master`, which carries the master mute.
        let master: Bool
    }
    struct Switch: Sendable {
        let parameter: Parameter
        let from: ParameterValue, to: ParameterValue
    }
    private(set) var gains: [GainMove] = []
    private(set) var switches: [Switch] = []
    /// The target's channels the mixer has no channel of that name for.
    public let unmatched: (inputs: [String], outputs: [String])

    public init(from a: Scene, to b: Scene, on mixer: Mixer, keeping: Set<Parameter> = []) {
        func indexed(_ names: [String]) -> [String: Int] {
            var d: [String: Int] = [:]
            for (k, n) in names.enumerated() { d[n] = k }
            return d
        }
        let mixerIn = indexed(mixer.inputChannels), mixerOut = indexed(mixer.outputChannels)
        let aIn = indexed(a.inputs), aOut = indexed(a.outputs)
        // b's channels, as the mixer's and a's indices.
        let inOnMixer = b.inputs.map { mixerIn[$0] }, outOnMixer = b.outputs.map { mixerOut[$0] }
        let inOnA = b.inputs.map { aIn[$0] }, outOnA = b.outputs.map { aOut[$0] }
        unmatched = b.unmatched(on: mixer)
        func flag(_ v: ParameterValue) -> Bool? { if case let .bool(x) = v { x } else { nil } }
        func number(_ v: ParameterValue) -> Double? { if case let .number(x) = v { x } else { nil } }

        for (k, kind) in Scene.kinds.enumerated() {
            let family = kind.family
            if case .mute = family.scene { continue }  // a mute moves with its gain
            var muteK: Int?
            if case let .gain(mutedBy?) = family.scene { muteK = Scene.kinds.firstIndex(of: mutedBy) }
            for i in family.hasInput ? 0..<b.inputs.count : 0..<1 {
                guard let mi = family.hasInput ? inOnMixer[i] : 0, let ai = family.hasInput ? inOnA[i] : 0 else { continue }
                for j in family.hasOutput ? 0..<b.outputs.count : 0..<1 {
                    guard let mj = family.hasOutput ? outOnMixer[j] : 0, let aj = family.hasOutput ? outOnA[j] : 0 else { continue }
                    let p = Parameter(kind, mi, mj)
                    guard !keeping.contains(p) else { continue }
                    let atA = a.index(of: kind, input: ai, output: aj), atB = b.index(of: kind, input: i, output: j)
                    let start = a.values[k][atA], target = b.values[k][atB]
                    switch family.scene {
                    case .halfWay:
                        switches.append(Switch(parameter: p, from: start, to: target))
                    case .gain:
                        guard let x = number(start), let y = number(target) else { continue }
                        var mute: Parameter?, mutedA = false, mutedB = false
                        if let muteK {
                            let m = Parameter(Scene.kinds[muteK], mi, mj)
                            if !keeping.contains(m), let ma = flag(a.values[muteK][atA]), let mb = flag(b.values[muteK][atB]) {
                                (mute, mutedA, mutedB) = (m, ma, mb)
                            }
                        } else if kind == .masterGain {
                            (mutedA, mutedB) = (a.masterMute, b.masterMute)
                        }
                        gains.append(GainMove(parameter: p, from: Float(x), to: Float(y), mute: mute,
                                              mutedFrom: mutedA, mutedTo: mutedB, master: kind == .masterGain))
                    case .no, .mute:
                        continue
                    }
                }
            }
        }
    }

    /// How many keys move (gains with their mutes count once).
    public var count: Int { gains.count + switches.count }

    /// Sets the keys of `mixer` to where they are `t` of the way (0...1).
    public func apply(at t: Double, to mixer: inout Mixer) throws(CrosspointError) {
        for g in gains {
            let bothMuted = g.mutedFrom && g.mutedTo
            let gain: Float = t <= 0 ? g.from : t >= 1 ? g.to
                : bothMuted ? GainCurve.gain(from: g.from, to: g.to, at: t)
                : GainCurve.gain(from: g.mutedFrom ? 0 : g.from, to: g.mutedTo ? 0 : g.to, at: t)
            try mixer.set(g.parameter, to: .number(Double(gain)))
            let muted = t <= 0 ? g.mutedFrom : t >= 1 ? g.mutedTo : bothMuted
            if let mute = g.mute {
                try mixer.set(mute, to: .bool(muted))
            } else if g.master {
                mixer.setMasterMute(muted)
            }
        }
        for s in switches { try mixer.set(s.parameter, to: t < 0.5 ? s.from : s.to) }
    }

    /// The keys this morph moves whose values differ between two mixers of one shape (what
    /// someone else changed while it moved).
    public func moved(between old: Mixer, and new: Mixer) -> Set<Parameter> {
        var touched = Set<Parameter>()
        for g in gains {
            if old.value(of: g.parameter) != new.value(of: g.parameter) { touched.insert(g.parameter) }
            if let m = g.mute, old.value(of: m) != new.value(of: m) { touched.insert(g.parameter) }
            if g.master, old.masterMute != new.masterMute { touched.insert(g.parameter) }
        }
        for s in switches where old.value(of: s.parameter) != new.value(of: s.parameter) { touched.insert(s.parameter) }
        return touched
    }

    /// This morph without the keys in `parameters` (a gain's mute goes with it).
    public func leaving(_ parameters: Set<Parameter>) -> SceneMorph {
        var next = self
        next.gains.removeAll { parameters.contains($0.parameter) }
        next.switches.removeAll { parameters.contains($0.parameter) }
        return next
    }
}

extension Mixer {
    /// The mix `t` of the way (0...1) from scene `a` to scene `b`, this mixer otherwise
    /// (`SceneMorph`): keys in `keeping` stay as this mixer has them.
    public func morphed(from a: Scene, to b: Scene, at t: Double, keeping: Set<Parameter> = []) throws(CrosspointError) -> Mixer {
        var next = self
        try SceneMorph(from: a, to: b, on: self, keeping: keeping).apply(at: t, to: &next)
        return next
    }
}
