import CCrosspointKernel
import Synchronization

/// The matrix mixer: a `Mixer` model on the control thread and a `MatrixRenderer` for the
/// render thread, joined by a lock-free handover.
///
/// Each change to the model builds a `RenderPlan` here, off the render path, and publishes
/// it into a single slot (latest wins). At the start of its next block the renderer takes
/// the plan, ramps every changed output from what it played a moment ago, and hands its
/// previous plan back through a small ring for this side to free. The render thread never
/// allocates, frees, locks or retains.
public final class MatrixMixer {
    public private(set) var mixer: Mixer
    let state: UnsafeMutablePointer<RenderState>
    /// The newest plan made here (active or pending): the next plan is marked against it. It
    /// cannot be retired, and so freed, before a newer plan is published.
    private var lastPublished: UnsafeMutablePointer<RenderPlan>
    /// The outputs' delay lines, shared by the plans that hold them.
    private var delayLines = DelayLinePool()
    /// The channels ducking rules have lowered, by index (a renamed channel is the same one): a
    /// plan's stage keeps them, so that one no rule lowers any more comes back up instead of
    /// jumping (DuckingStage).
    private var duckedInputs: Set<Int> = [], duckedOutputs: Set<Int> = []
    private var duckedCrosspoints: Set<DuckingRule.CrosspointIndex> = []

    /// The kernel version that renders this mixer.
    public let kernel: KernelVersion

    /// - Parameters:
    ///   - sampleRate: the rate ramps are timed at until the host says otherwise.
    ///   - kernel: the kernel version (tests and benchmarks; the default is the best this CPU runs).
    public convenience init(_ mixer: Mixer, sampleRate: Double = 48000, kernel: KernelVersion = .default) {
        self.init(building: mixer, sampleRate: sampleRate, kernel: kernel)
        MatrixMixer.warmUp()
    }

    /// Renders a ramp and a steady mix once, off the render thread, so that the runtime
    /// metadata the kernel's SIMD types need exists before a real-time thread asks for it.
    private static let warmedUp: Bool = {
        guard let probe = try? Mixer(inputs: 2, outputs: 2) else { return false }
        let mixer = MatrixMixer(building: probe, sampleRate: 48000, kernel: .default)
        var renderer = mixer.renderer
        let silence = [Float](repeating: 0, count: 64)
        var out = [Float](repeating: 0, count: 64)
        silence.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                let inputs = [input.baseAddress, input.baseAddress]
                let outputs = [output.baseAddress, output.baseAddress]
                for gain in [0.5, 0.25] {
                    try? mixer.update { m throws(CrosspointError) in
                        try m.setCrosspoint(input: 0, output: 0, gain: gain)
                        try m.setOutputDelay(1, milliseconds: gain)  // a delay line, and a fade on it
                        try m.setDucking(["0 lowers=1,out:1 attack=0"])  // a ducking stage, and its takeover
                    }
                    inputs.withUnsafeBufferPointer { ins in
                        outputs.withUnsafeBufferPointer { outs in
                            renderer.render(frameCount: 64, inputs: ins, outputs: outs)
                        }
                    }
                }
            }
        }
        return true
    }()

    private static func warmUp() { _ = warmedUp }

    private init(building mixer: Mixer, sampleRate: Double, kernel: KernelVersion) {
        self.mixer = mixer
        self.kernel = kernel
        state = .allocate(capacity: 1)
        lastPublished = RenderPlan.make(for: mixer, kernel: kernel, lines: delayLines.lines(for: mixer, rate: sampleRate, silentPast: true),
                                        ducking: DuckingStage.make(for: mixer, alsoInputs: [], alsoOutputs: []))
        state.initialize(to: RenderState(active: lastPublished, sampleRate: sampleRate))
        rememberDucked(mixer)
    }

    /// Frees everything. The render thread must no longer be using `renderer`.
    deinit {
        collectRetired()
        if let pending = state.pointee.pending.exchange(nil, ordering: .acquiring) { destroy(pending) }
        if let active = state.pointee.active { destroy(active) }
        state.pointee.retired.deallocate()
        state.pointee.duckReductions.deinitialize(count: DuckingRule.limit)
        state.pointee.duckReductions.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The render block, a plain value the render thread may copy and call.
    public var renderer: MatrixRenderer { MatrixRenderer(state: state) }

    /// Applies a change to the model and, when it succeeds, hands it to the renderer. When it
    /// throws, nothing changes.
    public func update<Failure: Error>(_ change: (inout Mixer) throws(Failure) -> Void) throws(Failure) {
        var next = mixer
        try change(&next)
        replace(with: next)
    }

    /// Replaces the whole model (a preset, a restored state, a new shape). The new plan is
    /// compared with the last one published here, so the renderer only ramps what changed.
    public func replace(with next: Mixer) {
        mixer = next
        collectRetired()
        let rate = max(Double(state.pointee.observedRate.load(ordering: .relaxed)), state.pointee.initialRate)
        let plan = RenderPlan.make(for: next, kernel: kernel, lines: delayLines.lines(for: next, rate: rate),
                                   ducking: DuckingStage.make(for: next, alsoInputs: duckedInputs, alsoOutputs: duckedOutputs,
                                                              alsoCrosspoints: duckedCrosspoints))
        rememberDucked(next)
        plan.pointee.markChanges(since: lastPublished.pointee)
        // Take back a plan the renderer never took; the new one replaces it, changes included.
        // (Only this side publishes, so the slot stays empty until the exchange below.)
        if let unseen = state.pointee.pending.exchange(nil, ordering: .acquiringAndReleasing) {
            plan.pointee.mergeChanges(of: unseen.pointee)
            destroy(unseen)
        }
        _ = state.pointee.pending.exchange(plan, ordering: .acquiringAndReleasing)
        lastPublished = plan
    }

    /// Adds the channels `mixer`'s rules lower to those a later plan keeps coming back up.
    private func rememberDucked(_ mixer: Mixer) {
        for rule in mixer.ducking {
            let (_, inputs, outputs, crosspoints) = rule.indices(in: mixer)
            duckedInputs.formUnion(inputs)
            duckedOutputs.formUnion(outputs)
            duckedCrosspoints.formUnion(crosspoints)
        }
    }

    /// Frees a plan the renderer has let go of (or never took), and the delay lines only it held.
    private func destroy(_ plan: UnsafeMutablePointer<RenderPlan>) {
        delayLines.release(plan.pointee.delayLines, count: plan.pointee.outputs)
        RenderPlan.destroy(plan)
    }

    /// The sample rate the renderer last ran at, in whole hertz (0 before it has run).
    public var renderRate: Int { state.pointee.observedRate.load(ordering: .relaxed) }

    /// Makes bigger delay lines when the renderer runs at a rate the lines are too small for
    /// (a delay of 1 s needs one second of ring at that rate): the same model published again,
    /// so nothing ramps, and each new line takes its old one over when the renderer installs it.
    /// Call it when `renderRate` changes.
    public func refreshDelayLines() {
        let rate = max(Double(renderRate), state.pointee.initialRate)
        guard delayLines.needsBiggerLines(atRate: rate) else { return }
        replace(with: mixer)
    }

    /// The reduction (dB, 0 or below) of each ducking rule of the mixer at the end of the
    /// renderer's last block, in the rules' order (0 before it has rendered one).
    public var duckingReductions: [Double] {
        (0..<min(mixer.ducking.count, DuckingRule.limit)).map {
            Double(Float(bitPattern: state.pointee.duckReductions[$0].load(ordering: .relaxed)))
        }
    }

    /// How many delay lines are allocated (tests).
    package var delayLineCount: Int { delayLines.allocated }

    /// Frees the plans the renderer has let go of. Called on every change; call it from a
    /// timer too if changes stop while plans are still in flight.
    public func collectRetired() {
        let s = state
        let tail = s.pointee.retiredTail.load(ordering: .acquiring)
        var head = s.pointee.retiredHead.load(ordering: .relaxed)
        while head < tail {
            if let plan = s.pointee.retired[head % RenderState.retiredCapacity] { destroy(plan) }
            head += 1
            s.pointee.retiredHead.store(head, ordering: .releasing)
        }
    }
}

/// What the control and render threads share. Lives at a fixed address.
struct RenderState: ~Copyable {
    static let retiredCapacity = 4

    /// The newest plan not yet taken by the renderer (written by control, taken by render).
    let pending = Atomic<UnsafeMutablePointer<RenderPlan>?>(nil)
    /// The plan the renderer plays (render thread only, once rendering has started).
    var active: UnsafeMutablePointer<RenderPlan>?
    /// Plans the renderer is done with: a single-producer single-consumer ring.
    let retired: UnsafeMutablePointer<UnsafeMutablePointer<RenderPlan>?>
    let retiredHead = Atomic<Int>(0)
    let retiredTail = Atomic<Int>(0)
    /// The rate ramps and delays are timed at (render thread).
    var sampleRate: Double
    /// The rate the renderer was last given, in whole hertz (written by the render thread when
    /// it changes, read by the control thread to size delay lines), and the one it began with.
    let observedRate = Atomic<Int>(0)
    let initialRate: Double
    /// The rate the host last gave (render thread): `observedRate` is written only on a change.
    var reportedRate = 0.0
    /// Each ducking rule's reduction at the end of the last block, a Float's bits (written by
    /// the render thread, read by the control thread).
    let duckReductions: UnsafeMutablePointer<Atomic<UInt32>>

    init(active: UnsafeMutablePointer<RenderPlan>, sampleRate: Double) {
        self.active = active
        self.sampleRate = sampleRate
        initialRate = sampleRate
        retired = .allocate(capacity: RenderState.retiredCapacity)
        retired.initialize(repeating: nil, count: RenderState.retiredCapacity)
        duckReductions = .allocate(capacity: DuckingRule.limit)
        for k in 0..<DuckingRule.limit { (duckReductions + k).initialize(to: Atomic(0)) }
    }
}

/// The render half of a `MatrixMixer`: a plain value holding one pointer, safe to call from
/// the real-time thread.
public struct MatrixRenderer: RenderBlock {
    let state: UnsafeMutablePointer<RenderState>

    public var inputCount: Int { state.pointee.active?.pointee.inputs ?? 0 }
    public var outputCount: Int { state.pointee.active?.pointee.outputs ?? 0 }

    /// The sample rate ramps are timed at; the host sets it from its clock.
    public var sampleRate: Double {
        get { state.pointee.sampleRate }
        nonmutating set {
            guard newValue != state.pointee.reportedRate else { return }
            state.pointee.sampleRate = newValue
            state.pointee.reportedRate = newValue
            if newValue.isFinite && newValue > 0 && newValue < 1e7 {
                state.pointee.observedRate.store(Int(newValue), ordering: .relaxed)
            }
        }
    }

    public mutating func render(
        frameCount: Int,
        inputs: UnsafeBufferPointer<UnsafePointer<Float>?>,
        outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>
    ) {
        render(frameCount: frameCount, inputs: inputs, outputs: outputs, levels: nil)
    }

    /// Renders, and with `levels` measures each output right after it is written, while it is
    /// still in the cache (the caller has begun the block on the tap: `LevelTap.beginBlock`).
    public mutating func render(
        frameCount: Int,
        inputs: UnsafeBufferPointer<UnsafePointer<Float>?>,
        outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>,
        levels: LevelTap?
    ) {
        takePendingPlan()
        guard let planPointer = state.pointee.active else { return }
        let plan = planPointer.pointee
        let frames = min(max(frameCount, 0), maximumFrameCount)
        // Ducking: the triggers measured and the lowered inputs scaled before the matrix reads them.
        let stage = plan.ducking
        let inputs = stage?.pointee.begin(frames: frames, rate: state.pointee.sampleRate, inputs: inputs,
                                          reductions: state.pointee.duckReductions) ?? inputs
        if plan.ramping.pointee == 0 {
            // Steady: the plan's program, in one call (copies, silences, tiles).
            xp_run(plan.program, inputs.baseAddress, Int32(truncatingIfNeeded: inputs.count), outputs.baseAddress,
                   Int32(truncatingIfNeeded: outputs.count), Int32(frames))
            if outputs.count > plan.outputs {
                for j in plan.outputs..<outputs.count { if let out = outputs[j] { Kernel.clear(out, frames) } }
            }
            if let stage {
                for j in 0..<min(outputs.count, plan.outputs) {
                    if let out = outputs[j] {
                        stage.pointee.lower(output: j, out, frames: frames, inputs: inputs, gains: plan.target, inputCount: plan.inputs)
                    }
                }
            }
            for k in 0..<plan.delayedCount {
                let j = Int(plan.delayed[k])
                delay(plan, output: j, j < outputs.count ? outputs[j] : nil, frames)
            }
            if let levels {
                for j in 0..<outputs.count { if let out = outputs[j] { levels.measureOutput(j, out, frames: frames) } }
            }
            return
        }
        // Some outputs ramp: output by output, the steady ones with the same arithmetic as in
        // their tiles (so they stay bit-identical).
        xp_resolve(plan.resolved, Int32(plan.inputs), inputs.baseAddress, Int32(truncatingIfNeeded: inputs.count), 0)
        var j = 0
        while j < outputs.count {
            guard let out = outputs[j] else { j += 1; continue }
            // Outputs ramping together (the same sources, from the same frame): one call.
            var width = 1
            if j >= plan.outputs {
                Kernel.clear(out, frames)
            } else if plan.rampLength[j] != 0 {
                width = rampGroup(plan, from: j, outputs)
                renderRamps(plan, first: j, width: width, outputs, frames, inputs)
            } else {
                renderSteady(plan, output: j, out, frames)
            }
            for k in j..<(j + width) {
                guard let out = outputs[k] else { continue }
                if k < plan.outputs {
                    stage?.pointee.lower(output: k, out, frames: frames, inputs: inputs, gains: plan.target, inputCount: plan.inputs)
                    delay(plan, output: k, out, frames)
                }
                levels?.measureOutput(k, out, frames: frames)
            }
            j += width
        }
        // Delays go on (in silence) on outputs nobody listens to.
        for k in 0..<plan.delayedCount {
            let j = Int(plan.delayed[k])
            if j >= outputs.count || outputs[j] == nil { delay(plan, output: j, nil, frames) }
        }
        // Ramps advance even on outputs nobody listens to.
        for j in 0..<plan.outputs where plan.rampLength[j] != 0 && (j >= outputs.count || outputs[j] == nil) {
            advanceRamp(plan, output: j, by: frames)
        }
    }

    /// Installs the newest plan, if there is one and there is room to retire the old one.
    @inline(__always)
    private func takePendingPlan() {
        let s = state
        guard s.pointee.pending.load(ordering: .relaxed) != nil else { return }
        let tail = s.pointee.retiredTail.load(ordering: .relaxed)
        guard tail - s.pointee.retiredHead.load(ordering: .acquiring) < RenderState.retiredCapacity,
              let next = s.pointee.pending.exchange(nil, ordering: .acquiring)
        else { return }
        let rate = s.pointee.sampleRate
        let frames = next.pointee.rampSeconds * (rate.isFinite && rate > 0 ? rate : 48000)
        let rampFrames = frames.isFinite ? Int(min(frames.rounded(), Double(Int32.max))) : 0
        next.pointee.install(after: s.pointee.active, rampFrames: rampFrames)
        next.pointee.takeOverDelayLines(from: s.pointee.active)
        next.pointee.ducking?.pointee.takeOver(from: s.pointee.active?.pointee.ducking)
        s.pointee.retired[tail % RenderState.retiredCapacity] = s.pointee.active
        s.pointee.retiredTail.store(tail + 1, ordering: .releasing)
        s.pointee.active = next
    }

    /// Delays output `j` by its line, if it has one (`out` nil: nobody listens; the line
    /// records silence, so that its timing goes on).
    @inline(__always)
    private func delay(_ plan: RenderPlan, output j: Int, _ out: UnsafeMutablePointer<Float>?, _ frames: Int) {
        guard let line = plan.delayLines[j] else { return }
        let rate = state.pointee.sampleRate
        let perSecond = rate.isFinite && rate > 0 ? rate : 48000
        line.pointee.process(out, frames: frames,
                             target: DelayAmount.frames(milliseconds: plan.delaySeconds[j] * 1000, rate: perSecond),
                             fadeFrames: DelayAmount.frames(milliseconds: plan.rampSeconds * 1000, rate: perSecond))
    }

    @inline(__always)
    private func advanceRamp(_ plan: RenderPlan, output j: Int, by frames: Int) {
        let position = Int(plan.rampPosition[j]) + frames
        if position >= Int(plan.rampLength[j]) {
            plan.rampLength[j] = 0
            plan.rampPosition[j] = 0
            plan.ramping.pointee &-= 1
        } else {
            plan.rampPosition[j] = Int32(position)
        }
    }

    /// How many outputs from `first` on (at most `XP_TILE_WIDTH`) ramp from the same frame, for
    /// as long, from the same sources, and are listened to: rendered by one call, which loads
    /// each source once for all of them (a dense mix moving: every output).
    @inline(__always)
    private func rampGroup(_ plan: RenderPlan, from first: Int, _ outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>) -> Int {
        let count = Int(plan.rampCount[first]), sources = plan.rampSource + first * plan.inputs
        var width = 1
        while width < Int(XP_TILE_WIDTH) {
            let k = first + width
            guard k < plan.outputs, k < outputs.count, outputs[k] != nil, plan.rampLength[k] == plan.rampLength[first],
                  plan.rampPosition[k] == plan.rampPosition[first], Int(plan.rampCount[k]) == count else { break }
            let other = plan.rampSource + k * plan.inputs
            var same = true
            for n in 0..<count where other[n] != sources[n] { same = false; break }
            guard same else { break }
            width += 1
        }
        return width
    }

    /// `width` outputs from `first` on along their ramps (`rampGroup`), then steady for the
    /// frames after the ramps end.
    private func renderRamps(
        _ plan: RenderPlan, first j: Int, width: Int, _ outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>,
        _ frames: Int, _ inputs: UnsafeBufferPointer<UnsafePointer<Float>?>
    ) {
        let position = Int(plan.rampPosition[j])
        let rampFrames = min(frames, Int(plan.rampLength[j]) - position)
        // The outputs' and their gains' pointers, on the stack (XP_TILE_WIDTH of each).
        var outs: (UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?)
            = (nil, nil, nil, nil)
        var from: (UnsafePointer<Float>?, UnsafePointer<Float>?, UnsafePointer<Float>?, UnsafePointer<Float>?) = (nil, nil, nil, nil)
        var step = from
        withUnsafeMutableBytes(of: &outs) { o in
            withUnsafeMutableBytes(of: &from) { f in
                withUnsafeMutableBytes(of: &step) { s in
                    let op = o.bindMemory(to: UnsafeMutablePointer<Float>?.self)
                    let fp = f.bindMemory(to: UnsafePointer<Float>?.self), sp = s.bindMemory(to: UnsafePointer<Float>?.self)
                    for t in 0..<width {
                        op[t] = outputs[j + t]
                        fp[t] = UnsafePointer(plan.rampFrom + (j + t) * plan.inputs)
                        sp[t] = UnsafePointer(plan.rampStep + (j + t) * plan.inputs)
                    }
                    // Every source at once, from the inputs `plan.resolved` points at (silence for one missing).
                    xp_ramp_tile(plan.kernel, Int32(width), op.baseAddress, plan.resolved, plan.rampSource + j * plan.inputs,
                                 fp.baseAddress, sp.baseAddress, plan.rampCount[j], Int32(rampFrames), Int32(position))
                }
            }
        }
        for t in 0..<width { advanceRamp(plan, output: j + t, by: rampFrames) }
        if rampFrames < frames {
            // The rest of the block, steady, from frame `rampFrames` of every input on.
            xp_resolve(plan.resolved, Int32(plan.inputs), inputs.baseAddress, Int32(truncatingIfNeeded: inputs.count),
                       Int32(rampFrames))
            for t in 0..<width {
                if let out = outputs[j + t] { renderSteady(plan, output: j + t, out + rampFrames, frames - rampFrames) }
            }
            xp_resolve(plan.resolved, Int32(plan.inputs), inputs.baseAddress, Int32(truncatingIfNeeded: inputs.count), 0)
        }
    }

    /// An output at its plan's gains, from the inputs `plan.resolved` points at, with the
    /// arithmetic of the steady program (a copy is a product with 1, bit for bit).
    @inline(__always)
    private func renderSteady(_ plan: RenderPlan, output j: Int, _ out: UnsafeMutablePointer<Float>, _ frames: Int) {
        let first = Int(plan.start[j])
        xp_mix_column(plan.kernel, out, plan.resolved, plan.source + first, plan.gain + first,
                      plan.start[j + 1] - plan.start[j], Int32(frames))
    }
}
