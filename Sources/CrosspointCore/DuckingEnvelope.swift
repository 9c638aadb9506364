/// How far a ducking rule lowers what it lowers, block by block (issue 31): the render thread
/// hands it the trigger's level over each block (dBFS, RMS or peak, measured from the block
/// itself: no lookahead, no added latency) and it answers the gain reduction (dB, 0 or below)
/// at the block's end, which the renderer glides to over the block as it glides every gain.
///
/// - Above `threshold` the reduction aims at `depth`; with a `knee`, it grows in dB from 0 at
///   the threshold to `depth` at `threshold + knee` (a soft knee: a trigger just above the
///   threshold lowers a little).
/// - Deeper: in a straight line in dB over `attack` (so it arrives: within the attack time plus
///   the block in which the trigger crossed); shallower: it holds for `hold` after the aim last
///   rose, then comes back in a straight line in dB over `release` (the full depth's time).
///
/// A value type of numbers: no allocation, no lock, nothing to retain; `process` is what the
/// render thread calls, once per rule and block.
public struct DuckingEnvelope: Sendable, Equatable {
    public struct Settings: Sendable, Equatable {
        /// dB, below 0 (how far it lowers at most).
        public var depth: Double
        /// dBFS: the trigger level it starts at.
        public var threshold: Double
        /// dB above the threshold over which the depth grows; 0 is a hard knee.
        public var knee: Double
        /// Seconds from no reduction to the full depth, the hold and the way back.
        public var attack: Double, hold: Double, release: Double

        public init(depth: Double, threshold: Double, knee: Double = 0, attack: Double, hold: Double, release: Double) {
            self.depth = depth
            self.threshold = threshold
            self.knee = knee
            self.attack = attack
            self.hold = hold
            self.release = release
        }
    }

    public var settings: Settings
    /// The reduction now, dB (0 or below).
    public private(set) var reduction: Double = 0
    /// Seconds left of the hold.
    private var holding: Double = 0
    /// The deepest reduction (dB, positive) since the reduction was last 0.
    private var span: Double = 0

    public init(_ settings: Settings) { self.settings = settings }

    /// The reduction the trigger's `level` (dBFS) aims at, before attack and release.
    public func aim(level: Double) -> Double {
        let s = settings
        guard level > s.threshold, s.depth < 0 else { return 0 }
        guard s.knee > 0 else { return s.depth }
        return s.depth * min((level - s.threshold) / s.knee, 1)
    }

    /// Ends the hold (a rule switched off): the reduction comes back along the release at once.
    public mutating func skipHold() { holding = 0 }

    /// One block of `seconds` whose trigger measured `level` dBFS: the reduction at its end.
    public mutating func process(level: Double, seconds: Double) -> Double {
        let s = settings
        let target = aim(level: level.isNaN ? -.infinity : level)
        // dB the attack and the release each cover in their time: the depth, or the deepest this
        // duck went when that is deeper (a depth made shallower mid-duck, 0 included, comes back
        // at the pace it would have had).
        span = max(span, -reduction)
        let full = max(-s.depth, span)
        if target < reduction {
            // Deeper: at the attack's pace, not past the aim.
            let step = s.attack > 0 ? full * seconds / s.attack : .infinity
            reduction = max(target, reduction - step)
            holding = s.hold
        } else if target > reduction {
            // Shallower: after the hold, at the release's pace.
            let held = min(holding, seconds)
            holding -= held
            let left = seconds - held
            if left > 0 {
                let step = s.release > 0 ? full * left / s.release : .infinity
                reduction = min(target, reduction + step)
            }
        } else if target < 0 {
            holding = s.hold  // still aiming as deep: the hold starts again when the aim rises
        }
        if reduction >= 0 { span = 0 }
        return reduction
    }
}
