/// A scene (issue 31): a named snapshot of a mix, the keys whose family's `scene` role says so
/// (gains, mutes, the matrix, output delays) and the master mute; not the ports, devices,
/// targets, MIDI or the ramp. Its values are kept under their keys with the node's channel
/// names (`gain.in.FL`, `matrix.FL.MONO`), so that a scene recalled on a node of another shape
/// applies where the names match and reports the rest.
///
/// What a recall or a morph does between two scenes is `Mixer.morphed(from:to:at:keeping:)`:
/// pure, one call per step; the node moving over seconds is built on it, not here.
public struct Scene: Equatable, Sendable {
    public var name: String
    /// Each scene key's value by its named key, in the table's order.
    public var values: [(key: String, value: ParameterValue)]
    public var masterMute: Bool

    public static func == (a: Scene, b: Scene) -> Bool {
        a.name == b.name && a.masterMute == b.masterMute
            && a.values.map(\.key) == b.values.map(\.key) && a.values.map(\.value) == b.values.map(\.value)
    }

    /// The scene of `mixer` as it is now.
    public init(name: String, of mixer: Mixer) {
        self.name = name
        masterMute = mixer.masterMute
        values = ParameterKind.allCases.filter { $0.family.scene != .no }.flatMap { kind in
            Parameter.all(of: kind, for: mixer).map { (key: $0.name(in: mixer), value: mixer.value(of: $0)) }
        }
    }

    /// The scene's keys as keys of `mixer` (by channel name), and the names `mixer` has no
    /// channel for (a scene of another node, or of this one before its channels changed).
    public func resolved(on mixer: Mixer) -> (values: [Parameter: ParameterValue], unmatched: [String]) {
        var resolved: [Parameter: ParameterValue] = [:], unmatched: [String] = []
        for (key, value) in values {
            if let p = try? Parameter(key: key, in: mixer) { resolved[p] = value } else { unmatched.append(key) }
        }
        return (resolved, unmatched)
    }
}

extension Mixer {
    /// The mix `t` of the way (0...1) from scene `a` to scene `b`, this mixer otherwise: every
    /// key either scene holds moves by its role (gains along `GainCurve`, a mute through the
    /// gain it mutes, a delay half-way), keys in `keeping` (a recall's safes) stay as this
    /// mixer has them (a mute moves only with its gain: keeping a gain keeps its mute too; the
    /// master mute goes with `gain.master`), and keys only one scene names for this mixer's
    /// channels are left alone.
    /// At `t >= 1` the scene's keys are exactly `b`'s; at `t <= 0` exactly `a`'s. A gain a mute
    /// silences on one side fades through zero instead of jumping: while moving, the mute is off
    /// and the gain carries it; it is set at the end (muted on both sides, it stays muted).
    public func morphed(from a: Scene, to b: Scene, at t: Double, keeping: Set<Parameter> = []) throws(CrosspointError) -> Mixer {
        let from = a.resolved(on: self).values, to = b.resolved(on: self).values
        var next = self
        func number(_ v: ParameterValue?) -> Double? { if case let .number(x)? = v { x } else { nil } }
        func flag(_ v: ParameterValue?) -> Bool? { if case let .bool(x)? = v { x } else { nil } }
        for (p, target) in to where !keeping.contains(p) {
            guard let start = from[p] else { continue }
            switch p.kind.family.scene {
            case .no, .mute:
                continue  // a mute moves with its gain
            case .halfWay:
                try next.set(p, to: t < 0.5 ? start : target)
            case let .gain(mutedBy):
                guard let x = number(start), let y = number(target) else { continue }
                var mutedA = false, mutedB = false
                var mute: Parameter?
                if let kind = mutedBy {
                    let m = Parameter(kind, input: p.input, output: p.output)
                    if !keeping.contains(m), let ma = flag(from[m]), let mb = flag(to[m]) { (mutedA, mutedB, mute) = (ma, mb, m) }
                } else if p.kind == .masterGain {  // the master mute is PipeWire's `mute`, kept with it
                    (mutedA, mutedB) = (a.masterMute, b.masterMute)
                }
                let bothMuted = mutedA && mutedB
                let gain: Double = t <= 0 ? x : t >= 1 ? y
                    : bothMuted ? Double(GainCurve.gain(from: Float(x), to: Float(y), at: t))
                    : Double(GainCurve.gain(from: mutedA ? 0 : Float(x), to: mutedB ? 0 : Float(y), at: t))
                try next.set(p, to: .number(gain))
                let muted = t <= 0 ? mutedA : t >= 1 ? mutedB : bothMuted
                if let mute { try next.set(mute, to: .bool(muted)) } else if p.kind == .masterGain { next.setMasterMute(muted) }
            }
        }
        return next
    }
}
