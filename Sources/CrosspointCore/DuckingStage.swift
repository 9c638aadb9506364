import Glibc
import Synchronization

/// The render side of the ducking rules (`DuckingRule`, issue 31): made on the control thread
/// with a plan, played by the render thread around the matrix. Before it, each rule measures
/// its trigger inputs over the block (RMS or peak: the block itself, no lookahead, no added
/// latency) and its envelope (`DuckingEnvelope`) answers the reduction at the block's end; each
/// lowered channel aims at the deepest reduction of the rules lowering it (not the sum), and
/// glides to it over the block, as a gain change glides. Lowered inputs are scaled into scratch
/// that the matrix reads instead; lowered outputs are scaled in place after the matrix wrote
/// them, before their delay. A lowered cross-point is corrected in its output after the
/// matrix wrote it, before the output's own scaling: the output gets (factor - 1) times the
/// cross-point's effective gain times its input added, so it holds the cross-point at the
/// factor (nothing added at unity: an output no rule touches stays bit-identical).
///
/// A stage also keeps the channels earlier rules lowered (`MatrixMixer` remembers them): a
/// channel no rule lowers any more glides back to unity over one block instead of jumping.
/// When a plan replaces another, the rules that stayed the same keep their envelopes and every
/// channel its factor (`takeOver`), so a change elsewhere in the mix does not reset a duck.
///
/// Everything is in one block allocated here; the render thread only reads and writes numbers.
struct DuckingStage {
    struct Rule {
        var envelope: DuckingEnvelope
        let peak: Bool
        let enabled: Bool
        /// The rule's trigger inputs: `triggers[triggerStart ..< triggerEnd]`.
        let triggerStart: Int32, triggerEnd: Int32
        /// The slots it lowers: `lowered[lowerStart ..< lowerEnd]`.
        let lowerStart: Int32, lowerEnd: Int32
        /// Equal for a rule of the same trigger (its inputs' indices) and detection: `takeOver`
        /// carries its envelope's state into the next plan, under the new settings and targets,
        /// so that a depth, a time or a channel changed mid-duck moves on from where it is.
        let identity: Int
    }

    let ruleCount: Int
    let rules: UnsafeMutablePointer<Rule>
    let triggers: UnsafeMutablePointer<Int32>
    let lowered: UnsafeMutablePointer<Int32>
    /// The channels the stage scales, one slot each: inputs first (`inputSlots` of them), then
    /// outputs, then cross-points (from `firstCrosspointSlot` on); `slotChannel[k]` is the channel's
    /// index (a cross-point's: input << 16 | output).
    let slotCount: Int
    let inputSlots: Int
    let firstCrosspointSlot: Int
    let slotChannel: UnsafeMutablePointer<Int32>
    /// Per output of the plan, its slot or -1.
    let outputSlot: UnsafeMutablePointer<Int32>
    let outputs: Int
    /// Output j's lowered cross-points: `crossInput[c]` and `crossSlot[c]` for c in
    /// `crossStart[j] ..< crossStart[j + 1]`.
    let crossStart: UnsafeMutablePointer<Int32>
    let crossInput: UnsafeMutablePointer<Int32>
    let crossSlot: UnsafeMutablePointer<Int32>
    /// Per slot (render thread): the factor at the start of the block, at its end, and the
    /// reduction aimed at (dB).
    let from: UnsafeMutablePointer<Float>
    let to: UnsafeMutablePointer<Float>
    let aim: UnsafeMutablePointer<Double>
    /// `maximumFrameCount` floats per input slot.
    let scratch: UnsafeMutablePointer<Float>
    /// One pointer per plan input: what the matrix reads (lowered inputs: their scratch).
    let pointers: UnsafeMutablePointer<UnsafePointer<Float>?>
    let inputs: Int

    /// A stage for `mixer`'s rules, managing also the channels `alsoInputs`, `alsoOutputs` and
    /// `alsoCrosspoints` (lowered by earlier rules); nil when there is nothing to manage.
    static func make(for mixer: Mixer, alsoInputs: Set<Int>, alsoOutputs: Set<Int>,
                     alsoCrosspoints: Set<DuckingRule.CrosspointIndex> = []) -> UnsafeMutablePointer<DuckingStage>? {
        var inputSlot: [Int: Int] = [:], outputSlotOf: [Int: Int] = [:], crossSlotOf: [DuckingRule.CrosspointIndex: Int] = [:]
        var slotInputs: [Int32] = [], slotOutputs: [Int32] = [], slotCrosspoints: [DuckingRule.CrosspointIndex] = []
        func slot(input i: Int) -> Int {
            if let k = inputSlot[i] { return k }
            inputSlot[i] = slotInputs.count
            slotInputs.append(Int32(i))
            return slotInputs.count - 1
        }
        func slot(output j: Int) -> Int {
            if let k = outputSlotOf[j] { return k }
            outputSlotOf[j] = slotOutputs.count
            slotOutputs.append(Int32(j))
            return slotOutputs.count - 1
        }
        func slot(crosspoint c: DuckingRule.CrosspointIndex) -> Int {
            if let k = crossSlotOf[c] { return k }
            crossSlotOf[c] = slotCrosspoints.count
            slotCrosspoints.append(c)
            return slotCrosspoints.count - 1
        }
        // Every rule of the mixer, in its order (its reduction is published at its index); one
        // whose channels the mixer no longer has keeps its place, with nothing to measure or lower.
        var rules: [(rule: DuckingRule, triggers: [Int], inputs: [Int], outputs: [Int], crosspoints: [DuckingRule.CrosspointIndex])] = []
        for rule in mixer.ducking.prefix(DuckingRule.limit) {
            var (t, i, o, c) = rule.indices(in: mixer)
            if t.isEmpty || (i.isEmpty && o.isEmpty && c.isEmpty) { (t, i, o, c) = ([], [], [], []) }
            rules.append((rule, t, i, o, c))
            for x in i { _ = slot(input: x) }
            for x in o { _ = slot(output: x) }
            for x in c { _ = slot(crosspoint: x) }
        }
        for i in alsoInputs.sorted() where i < mixer.inputs { _ = slot(input: i) }
        for j in alsoOutputs.sorted() where j < mixer.outputs { _ = slot(output: j) }
        for c in alsoCrosspoints.sorted(by: { ($0.output, $0.input) < ($1.output, $1.input) })
            where c.input < mixer.inputs && c.output < mixer.outputs { _ = slot(crosspoint: c) }
        let slots = slotInputs.count + slotOutputs.count + slotCrosspoints.count
        guard slots > 0 || !rules.isEmpty else { return nil }
        let firstCrosspoint = slotInputs.count + slotOutputs.count

        var triggers: [Int32] = [], lowered: [Int32] = [], made: [Rule] = []
        for (rule, t, i, o, c) in rules {
            let triggerStart = Int32(triggers.count), lowerStart = Int32(lowered.count)
            triggers += t.map { Int32($0) }
            lowered += i.map { Int32(slot(input: $0)) } + o.map { Int32(slotInputs.count + slot(output: $0)) }
                + c.map { Int32(firstCrosspoint + slot(crosspoint: $0)) }
            var hasher = Hasher()
            hasher.combine(rule.detect == .peak)
            hasher.combine(t)
            made.append(Rule(envelope: DuckingEnvelope(rule.settings), peak: rule.detect == .peak, enabled: rule.enabled,
                             triggerStart: triggerStart, triggerEnd: Int32(triggers.count),
                             lowerStart: lowerStart, lowerEnd: Int32(lowered.count), identity: hasher.finalize()))
        }
        let m = mixer.outputs, n = mixer.inputs
        var outputSlot = [Int32](repeating: -1, count: m)
        for (k, j) in slotOutputs.enumerated() { outputSlot[Int(j)] = Int32(slotInputs.count + k) }
        // The cross-points by output.
        var crossStart = [Int32](repeating: 0, count: m + 1), crossInput: [Int32] = [], crossSlot: [Int32] = []
        for j in 0..<m {
            crossStart[j] = Int32(crossInput.count)
            for (k, c) in slotCrosspoints.enumerated() where c.output == j {
                crossInput.append(Int32(c.input))
                crossSlot.append(Int32(firstCrosspoint + k))
            }
        }
        crossStart[m] = Int32(crossInput.count)
        let channels = slotInputs + slotOutputs + slotCrosspoints.map { Int32($0.input << 16 | $0.output) }

        var layout = BlockLayout()
        let stageAt = layout.reserve(DuckingStage.self, 1)
        let rulesAt = layout.reserve(Rule.self, made.count)
        let triggersAt = layout.reserve(Int32.self, triggers.count)
        let loweredAt = layout.reserve(Int32.self, lowered.count)
        let slotChannelAt = layout.reserve(Int32.self, slots)
        let outputSlotAt = layout.reserve(Int32.self, m)
        let crossStartAt = layout.reserve(Int32.self, m + 1)
        let crossInputAt = layout.reserve(Int32.self, crossInput.count)
        let crossSlotAt = layout.reserve(Int32.self, crossSlot.count)
        let fromAt = layout.reserve(Float.self, slots)
        let toAt = layout.reserve(Float.self, slots)
        let aimAt = layout.reserve(Double.self, slots)
        let pointersAt = layout.reserve(UnsafePointer<Float>?.self, n)
        let scratchAt = layout.reserve(Float.self, max(slotInputs.count, 1) * maximumFrameCount, alignment: 64)
        let block = layout.allocate()
        return block.array(at: stageAt, repeating: DuckingStage(
            ruleCount: made.count, rules: block.array(at: rulesAt, from: made),
            triggers: block.array(at: triggersAt, from: triggers), lowered: block.array(at: loweredAt, from: lowered),
            slotCount: slots, inputSlots: slotInputs.count, firstCrosspointSlot: firstCrosspoint,
            slotChannel: block.array(at: slotChannelAt, from: channels),
            outputSlot: block.array(at: outputSlotAt, from: outputSlot), outputs: m,
            crossStart: block.array(at: crossStartAt, from: crossStart), crossInput: block.array(at: crossInputAt, from: crossInput),
            crossSlot: block.array(at: crossSlotAt, from: crossSlot),
            from: block.array(at: fromAt, repeating: 1, count: slots), to: block.array(at: toAt, repeating: 1, count: slots),
            aim: block.array(at: aimAt, repeating: 0, count: slots),
            scratch: block.array(at: scratchAt, repeating: 0, count: max(slotInputs.count, 1) * maximumFrameCount),
            pointers: block.array(at: pointersAt, repeating: nil, count: n), inputs: n), count: 1)
    }

    /// Frees a stage (control thread, once its plan is let go of).
    static func destroy(_ stage: UnsafeMutablePointer<DuckingStage>) {
        stage.deinitialize(count: 1)
        UnsafeMutableRawPointer(stage).deallocate()
    }

    /// Takes over from the stage of the plan before (render thread, when installing): the
    /// envelopes of the same rules, the factor of the same channels.
    func takeOver(from previous: UnsafeMutablePointer<DuckingStage>?) {
        guard let old = previous?.pointee else { return }
        for r in 0..<ruleCount {
            for q in 0..<old.ruleCount where old.rules[q].identity == rules[r].identity {
                let settings = rules[r].envelope.settings
                rules[r].envelope = old.rules[q].envelope
                rules[r].envelope.settings = settings
                break
            }
        }
        for k in 0..<slotCount {
            let kind = slotKind(k)
            for q in 0..<old.slotCount where old.slotKind(q) == kind && old.slotChannel[q] == slotChannel[k] {
                from[k] = old.to[q]
                to[k] = old.to[q]
                break
            }
        }
    }

    /// Before the matrix (render thread): measures the triggers in `inputs`, moves every
    /// envelope on by the block, sets each slot's factor at the block's end, writes each rule's
    /// reduction (dB, as a Float's bits) into `reductions` (at most `DuckingRule.limit`), and
    /// scales the lowered inputs into scratch. Returns the inputs the matrix reads.
    func begin(frames: Int, rate: Double, inputs: UnsafeBufferPointer<UnsafePointer<Float>?>,
               reductions: UnsafeMutablePointer<Atomic<UInt32>>) -> UnsafeBufferPointer<UnsafePointer<Float>?> {
        let seconds = Double(frames) / (rate.isFinite && rate > 0 ? rate : 48000)
        for k in 0..<slotCount { from[k] = to[k]; aim[k] = 0 }
        for r in 0..<ruleCount {
            var level = -Double.infinity
            if !rules[r].enabled {
                rules[r].envelope.skipHold()  // switched off: back along the release, not after the hold
            } else {
                for t in Int(rules[r].triggerStart)..<Int(rules[r].triggerEnd) {
                    let i = Int(triggers[t])
                    guard i < inputs.count, let samples = inputs[i] else { continue }
                    level = max(level, rules[r].peak ? Self.peakDecibels(samples, frames) : Self.rmsDecibels(samples, frames))
                }
            }
            let reduction = rules[r].envelope.process(level: level, seconds: seconds)
            if r < DuckingRule.limit { reductions[r].store(Float(reduction).bitPattern, ordering: .relaxed) }
            for l in Int(rules[r].lowerStart)..<Int(rules[r].lowerEnd) {
                let k = Int(lowered[l])
                aim[k] = min(aim[k], reduction)
            }
        }
        for k in 0..<slotCount {
            if aim[k] < 0 {
                to[k] = Float(exp(aim[k] * (M_LN10 / 20)))
            } else if from[k] < 1 && !isLowered(k) {
                // No rule lowers it any more (its rule went): back up at 100 dB a second, so
                // that -15 dB takes 150 ms whatever the quantum.
                let decibels = from[k] > 0 ? 20 * log10(Double(from[k])) : -100
                let up = min(0, max(decibels, -100) + 100 * seconds)
                to[k] = up < 0 ? Float(exp(up * (M_LN10 / 20))) : 1
            } else {
                to[k] = 1
            }
        }

        let count = min(inputs.count, self.inputs)
        guard count > 0, let base = inputs.baseAddress else { return inputs }
        pointers.update(from: base, count: count)
        for k in 0..<inputSlots {
            let i = Int(slotChannel[k])
            guard i < count, let samples = inputs[i], from[k] != 1 || to[k] != 1 else { continue }
            let out = scratch + k * maximumFrameCount
            Self.scale(samples, into: out, frames, from: from[k], to: to[k])
            pointers[i] = UnsafePointer(out)
        }
        return UnsafeBufferPointer(start: pointers, count: count)
    }

    /// Slot `k`'s kind: 0 an input, 1 an output, 2 a cross-point.
    @inline(__always)
    private func slotKind(_ k: Int) -> Int { k < inputSlots ? 0 : k < firstCrosspointSlot ? 1 : 2 }

    /// Whether a rule of this stage lowers slot `k` (otherwise it is a channel an earlier rule
    /// lowered, coming back up).
    @inline(__always)
    private func isLowered(_ k: Int) -> Bool {
        for l in 0..<(ruleCount > 0 ? Int(rules[ruleCount - 1].lowerEnd) : 0) where Int(lowered[l]) == k { return true }
        return false
    }

    /// After the matrix wrote output `j` (render thread): corrects its lowered cross-points
    /// (`inputs` are those the matrix read, `gains` the plan's effective gains, column-major
    /// over `inputCount` inputs), then scales it if the stage lowers it.
    @inline(__always)
    func lower(output j: Int, _ out: UnsafeMutablePointer<Float>, frames: Int,
               inputs: UnsafeBufferPointer<UnsafePointer<Float>?>, gains: UnsafePointer<Float>, inputCount: Int) {
        guard j < outputs, frames > 0 else { return }
        for c in Int(crossStart[j])..<Int(crossStart[j + 1]) {
            let k = Int(crossSlot[c]), i = Int(crossInput[c])
            guard from[k] != 1 || to[k] != 1, i < inputs.count, i < inputCount, let x = inputs[i] else { continue }
            // While the cross-point's own gain ramps, the correction is at the gain it ramps to.
            let g = gains[j * inputCount + i]
            guard g != 0 else { continue }
            Kernel.ramp(out, frames, accumulate: true, x, from: (from[k] - 1) * g, step: (to[k] - from[k]) * g / Float(frames), position: 0)
        }
        let k = Int(outputSlot[j])
        guard k >= 0, from[k] != 1 || to[k] != 1 else { return }
        Self.scale(UnsafePointer(out), into: out, frames, from: from[k], to: to[k])
    }

    /// `out` = `x` times a gain gliding from `a` to `b` (reached at the last sample): the gain
    /// ramps' vector loop (`Kernel.ramp`), which reads each vector before it writes it, so `out`
    /// may be `x`.
    @inline(__always)
    static func scale(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, _ frames: Int, from a: Float, to b: Float) {
        guard frames > 0 else { return }
        Kernel.ramp(out, frames, accumulate: false, x, from: a, step: a == b ? 0 : (b - a) / Float(frames), position: 0)
    }

    /// The block's mean square and largest square, by the level meter's vector loop.
    @inline(__always)
    private static func squares(_ x: UnsafePointer<Float>, _ frames: Int) -> (mean: Double, peak: Double) {
        guard frames > 0 else { return (0, 0) }
        var peak = SIMD8<Float>(), sum = SIMD8<Float>()
        Kernel.level(x, frames, peak: &peak, squares: &sum)
        return (Double(sum.sum()) / Double(frames), Double(peak.max()))
    }

    static func rmsDecibels(_ x: UnsafePointer<Float>, _ frames: Int) -> Double {
        let mean = squares(x, frames).mean
        return mean > 0 ? 10 * log10(mean) : -.infinity  // NaN: not above 0, silence
    }

    static func peakDecibels(_ x: UnsafePointer<Float>, _ frames: Int) -> Double {
        let peak = squares(x, frames).peak
        return peak > 0 ? 10 * log10(peak) : -.infinity
    }
}
