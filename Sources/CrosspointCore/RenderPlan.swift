import CCrosspointKernel

/// What the render thread needs to mix, prepared on the control thread: the effective gain
/// of every cross-point (mutes and all gains folded in), per output the list of inputs with a
/// non-zero gain, and the program the C kernel plays while no output ramps (copies, silences
/// and tiles of outputs that share their inputs). Plus room, allocated here, for the ramp
/// state that only the render thread writes once the plan is installed.
///
/// A plan is a plain struct reached through an unsafe pointer: no reference counting, so
/// nothing the render thread does can free memory.
struct RenderPlan {
    let inputs: Int
    let outputs: Int
    let rampSeconds: Double
    /// The kernel version that renders this plan (see `KernelVersion`).
    let kernel: Int32
    /// The steady program (`xp_program`), its arrays allocated with it (see `Program`).
    let program: UnsafeMutablePointer<xp_program>
    /// One pointer per input, where the render thread resolves its inputs.
    let resolved: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// How many outputs are ramping (render thread).
    let ramping: UnsafeMutablePointer<Int32>
    /// Effective gains, column-major: `target[output * inputs + input]`.
    let target: UnsafeMutablePointer<Float>
    /// Sparse columns: output j's sources are `source[start[j] ..< start[j + 1]]`.
    let start: UnsafeMutablePointer<Int32>
    let source: UnsafeMutablePointer<Int32>
    let gain: UnsafeMutablePointer<Float>

    // Written by the render thread only, after installation.
    /// Per output: frames of ramp done and in all (0 = steady).
    let rampPosition: UnsafeMutablePointer<Int32>
    let rampLength: UnsafeMutablePointer<Int32>
    /// Per output j, `rampCount[j]` ramping sources at slots `j * inputs ..< j * inputs + rampCount[j]`.
    let rampCount: UnsafeMutablePointer<Int32>
    let rampSource: UnsafeMutablePointer<Int32>
    let rampFrom: UnsafeMutablePointer<Float>
    let rampStep: UnsafeMutablePointer<Float>
    /// One column of scratch, all zero between uses.
    let scratch: UnsafeMutablePointer<Float>
    /// Per output: whether its gains may differ from the plan the renderer plays when it takes
    /// this one (set on the control thread by `markChanges`), so that `install` looks at those
    /// outputs only.
    let changed: UnsafeMutablePointer<Bool>

    /// Per output, its delay line (nil: never delayed; the lines belong to the mixer's
    /// `DelayLinePool`, not to the plan) and its delay in seconds.
    let delayLines: UnsafeMutablePointer<UnsafeMutablePointer<DelayLine>?>
    let delaySeconds: UnsafeMutablePointer<Double>
    /// The outputs that have a line, `delayedCount` of them.
    let delayed: UnsafeMutablePointer<Int32>
    let delayedCount: Int

    /// The ducking rules' stage (DuckingStage.swift), allocated apart; nil when no channel is
    /// lowered or coming back.
    let ducking: UnsafeMutablePointer<DuckingStage>?

    /// Allocates a plan for `mixer` (control thread): the plan, its program and every array
    /// of both in one block (`BlockLayout`), what the steady render reads first. `lines` are
    /// the outputs' delay lines (`DelayLinePool.lines`), none when empty.
    static func make(
        for mixer: Mixer, kernel: KernelVersion, lines: [UnsafeMutablePointer<DelayLine>?] = [],
        ducking: UnsafeMutablePointer<DuckingStage>? = nil
    ) -> UnsafeMutablePointer<RenderPlan> {
        let n = mixer.inputs, m = mixer.outputs
        var targets = [Float](repeating: 0, count: n * m)
        var starts = [Int32](repeating: 0, count: m + 1)
        var sources: [Int32] = [], gains: [Float] = []
        for j in 0..<m {
            starts[j] = Int32(sources.count)
            for i in 0..<n {
                let g = mixer.effectiveGain(input: i, output: j)
                targets[j * n + i] = g
                if g != 0 {
                    sources.append(Int32(i))
                    gains.append(g)
                }
            }
        }
        starts[m] = Int32(sources.count)
        let steady = Program(inputs: n, outputs: m, target: targets, start: starts, source: sources, gain: gains)

        let panelFloats = max(8192, 64 * n)  // XP_PANEL_FLOATS
        // Where everything goes: what a steady cycle reads first, the ramps' and the control
        // thread's arrays after it, the panel (large, and only when packing) last.
        var layout = BlockLayout()
        let planAt = layout.reserve(RenderPlan.self, 1)
        let rampingAt = layout.reserve(Int32.self, 1)
        let programAt = layout.reserve(xp_program.self, 1)
        let resolvedAt = layout.reserve(UnsafePointer<Float>?.self, n)
        let arrays = steady.int32Arrays.map { layout.reserve(Int32.self, $0.count) }
        let tileGainAt = layout.reserve(Float.self, steady.tileGain.count)
        let packedAt = layout.reserve(UnsafePointer<Float>?.self, steady.pack ? n : 1)
        let rampLengthAt = layout.reserve(Int32.self, m)
        let rampPositionAt = layout.reserve(Int32.self, m)
        let rampCountAt = layout.reserve(Int32.self, m)
        let changedAt = layout.reserve(Bool.self, m)
        let delayedOutputs = (0..<m).filter { $0 < lines.count && lines[$0] != nil }.map { Int32($0) }
        let delayedAt = layout.reserve(Int32.self, delayedOutputs.count)
        let delayLinesAt = layout.reserve(UnsafeMutablePointer<DelayLine>?.self, m)
        let delaySecondsAt = layout.reserve(Double.self, m)
        let startAt = layout.reserve(Int32.self, m + 1)
        let sourceAt = layout.reserve(Int32.self, sources.count)
        let gainAt = layout.reserve(Float.self, gains.count)
        let scratchAt = layout.reserve(Float.self, n)
        let targetAt = layout.reserve(Float.self, n * m)
        let rampSourceAt = layout.reserve(Int32.self, n * m)
        let rampFromAt = layout.reserve(Float.self, n * m)
        let rampStepAt = layout.reserve(Float.self, n * m)
        let panelAt = layout.reserve(Float.self, steady.pack ? panelFloats : 1, alignment: 64)
        let block = layout.allocate()

        let resolved = block.array(at: resolvedAt, repeating: UnsafePointer<Float>?.none, count: n)
        let int32s = zip(arrays, steady.int32Arrays).map { block.array(at: $0.0, from: $0.1) }
        let program = block.array(at: programAt, repeating: xp_program(
            kernel: kernel.index, inputs: Int32(n), resolved: resolved,
            copies: Int32(steady.copyOut.count), copy_out: UnsafePointer(int32s[0]), copy_in: UnsafePointer(int32s[1]),
            clears: Int32(steady.clearOut.count), clear_out: UnsafePointer(int32s[2]),
            tiles: Int32(steady.tileWidth.count), tile_out: UnsafePointer(int32s[3]),
            tile_width: UnsafePointer(int32s[4]), tile_start: UnsafePointer(int32s[5]),
            tile_gain_start: UnsafePointer(int32s[6]), tile_source: UnsafePointer(int32s[7]),
            tile_gain: UnsafePointer(block.array(at: tileGainAt, from: steady.tileGain)), outputs: Int32(m),
            pack: steady.pack ? 1 : 0, packed_count: steady.pack ? Int32(steady.packedIn.count) : 0,
            packed_in: UnsafePointer(int32s[8]),
            packed: block.array(at: packedAt, repeating: nil, count: steady.pack ? n : 1),
            panel: block.array(at: panelAt, repeating: 0, count: steady.pack ? panelFloats : 1),
            run: nil), count: 1)
        xp_bind(program)
        let plan = block.array(at: planAt, repeating: RenderPlan(
            inputs: n, outputs: m, rampSeconds: mixer.rampMilliseconds / 1000, kernel: kernel.index,
            program: program, resolved: resolved, ramping: block.array(at: rampingAt, repeating: 0, count: 1),
            target: block.array(at: targetAt, from: targets), start: block.array(at: startAt, from: starts),
            source: block.array(at: sourceAt, from: sources), gain: block.array(at: gainAt, from: gains),
            rampPosition: block.array(at: rampPositionAt, repeating: 0, count: m),
            rampLength: block.array(at: rampLengthAt, repeating: 0, count: m),
            rampCount: block.array(at: rampCountAt, repeating: 0, count: m),
            rampSource: block.array(at: rampSourceAt, repeating: 0, count: n * m),
            rampFrom: block.array(at: rampFromAt, repeating: 0, count: n * m),
            rampStep: block.array(at: rampStepAt, repeating: 0, count: n * m),
            scratch: block.array(at: scratchAt, repeating: 0, count: n),
            changed: block.array(at: changedAt, repeating: true, count: m),
            delayLines: block.array(at: delayLinesAt, from: (0..<m).map { $0 < lines.count ? lines[$0] : nil }),
            delaySeconds: block.array(at: delaySecondsAt, from: mixer.outputDelays.map { $0 / 1000 }),
            delayed: block.array(at: delayedAt, from: delayedOutputs), delayedCount: delayedOutputs.count,
            ducking: ducking), count: 1)
        return plan  // at the block's start (planAt is 0): `destroy` frees the block through it
    }

    /// Frees a plan (control thread, once the render thread has let go of it): its block,
    /// which starts with the plan.
    static func destroy(_ plan: UnsafeMutablePointer<RenderPlan>) {
        if let stage = plan.pointee.ducking { DuckingStage.destroy(stage) }
        plan.pointee.program.deinitialize(count: 1)
        plan.deinitialize(count: 1)
        UnsafeMutableRawPointer(plan).deallocate()
    }

    /// Writes the gains output `j` applies right now, ramp included, into a zeroed column of
    /// `count` inputs (render thread).
    func gather(output j: Int, into column: UnsafeMutablePointer<Float>, count: Int) {
        if rampLength[j] == 0 {
            (column).update(from: target + j * inputs, count: min(count, inputs))
            return
        }
        let base = j * inputs, position = Float(rampPosition[j])
        for k in 0..<Int(rampCount[j]) where Int(rampSource[base + k]) < count {
            column[Int(rampSource[base + k])] = rampFrom[base + k] + rampStep[base + k] * position
        }
    }

    /// Marks the outputs whose gains differ from `previous`'s targets (control thread, before
    /// the plan is published): the O(inputs x outputs) comparison happens here, not on the
    /// render thread. With no previous plan, or another input count, every output is marked.
    func markChanges(since previous: RenderPlan?) {
        guard let old = previous, old.inputs == inputs else {
            changed.update(repeating: true, count: outputs)
            return
        }
        let n = inputs
        for j in 0..<outputs {
            let column = target + j * n
            if j < old.outputs {
                let before = old.target + j * n
                changed[j] = (0..<n).contains { column[$0] != before[$0] }
            } else {
                changed[j] = (0..<n).contains { column[$0] != 0 }
            }
        }
    }

    /// Adds the changes of a plan that was published but never taken: this plan now replaces
    /// it, relative to the plan that one was marked against (control thread).
    func mergeChanges(of unseen: RenderPlan) {
        guard unseen.inputs == inputs else {
            changed.update(repeating: true, count: outputs)
            return
        }
        for j in 0..<outputs where j >= unseen.outputs || unseen.changed[j] { changed[j] = true }
    }

    /// Takes over from `previous` (render thread): every output whose gains change starts a
    /// ramp from the gains `previous` applies at this moment, over `rampFrames`. Outputs whose
    /// gains are unchanged, and mid-ramp outputs given the same targets again, are untouched
    /// in effect: they keep rendering exactly as before. Only outputs `markChanges` marked are
    /// compared, so an unchanged output costs O(1) (O(ramping inputs) mid-ramp).
    func install(after previous: UnsafeMutablePointer<RenderPlan>?, rampFrames: Int) {
        defer {
            var count: Int32 = 0
            for j in 0..<outputs where rampLength[j] != 0 { count &+= 1 }
            ramping.pointee = count
        }
        guard let old = previous?.pointee, rampFrames > 0 else { return }
        let n = inputs
        for j in 0..<outputs {
            guard changed[j] else {
                // The same targets as `old`: a ramp in progress there simply goes on here.
                if j < old.outputs && old.rampLength[j] != 0 && old.inputs == n { copyRamp(from: old, output: j) }
                continue
            }
            // The column `old` plays now, into scratch (zero where `old` has no such channel).
            if j < old.outputs { old.gather(output: j, into: scratch, count: n) }
            let column = target + j * n
            var differs = false
            for i in 0..<n where scratch[i] != column[i] { differs = true; break }
            if differs && j < old.outputs && old.rampLength[j] != 0 && sameTargets(as: old, output: j) {
                // Mid-ramp with the same targets as before: continue that very ramp.
                copyRamp(from: old, output: j)
            } else if differs {
                let base = j * n
                var count = 0
                for i in 0..<n where scratch[i] != 0 || column[i] != 0 {
                    rampSource[base + count] = Int32(i)
                    rampFrom[base + count] = scratch[i]
                    rampStep[base + count] = (column[i] - scratch[i]) / Float(rampFrames)
                    count += 1
                }
                rampCount[j] = Int32(count)
                rampPosition[j] = 0
                rampLength[j] = Int32(rampFrames)
            }
            clearScratch()
        }
    }

    /// Hands each line this plan replaces (a bigger ring for the same output) over to the new
    /// one (render thread, when installing).
    func takeOverDelayLines(from previous: UnsafeMutablePointer<RenderPlan>?) {
        guard let old = previous?.pointee, delayedCount != 0 else { return }
        for k in 0..<delayedCount {
            let j = Int(delayed[k])
            guard j < old.outputs, let before = old.delayLines[j], let line = delayLines[j], before != line else { continue }
            line.pointee.takeOver(from: before.pointee)
        }
    }

    @inline(__always) private func clearScratch() { scratch.update(repeating: 0, count: inputs) }

    private func sameTargets(as old: RenderPlan, output j: Int) -> Bool {
        guard old.inputs == inputs else { return false }
        let a = target + j * inputs, b = old.target + j * inputs
        for i in 0..<inputs where a[i] != b[i] { return false }
        return true
    }

    private func copyRamp(from old: RenderPlan, output j: Int) {
        let base = j * inputs, count = Int(old.rampCount[j])
        (rampSource + base).update(from: old.rampSource + base, count: count)
        (rampFrom + base).update(from: old.rampFrom + base, count: count)
        (rampStep + base).update(from: old.rampStep + base, count: count)
        rampCount[j] = Int32(count)
        rampPosition[j] = old.rampPosition[j]
        rampLength[j] = old.rampLength[j]
    }
}

/// The steady program of a plan (`xp_program`) as Swift arrays, before `RenderPlan.make`
/// copies them into the plan's block.
struct Program {
    var copyOut: [Int32] = [], copyIn: [Int32] = [], clearOut: [Int32] = []
    var tileOut: [Int32] = [], tileWidth: [Int32] = [], tileStart: [Int32] = [0], tileGainStart: [Int32] = []
    var tileSource: [Int32] = [], tileGain: [Float] = []
    /// Whether the tiles read their inputs from a panel, and which inputs (see `xp_program.pack`).
    var pack = false
    var packedIn: [Int32] = []

    /// The `Int32` arrays in the order of `xp_program`'s fields, as `RenderPlan.make` lays them out.
    var int32Arrays: [[Int32]] {
        [copyOut, copyIn, clearOut, tileOut, tileWidth, tileStart, tileGainStart, tileSource, packedIn]
    }

    /// Sorts the outputs (control thread): one input at gain 1 is a copy, none is silence, and
    /// the rest go in tiles of up to `XP_TILE_WIDTH` outputs with the same inputs, in the
    /// order the outputs first appear. Every output keeps its inputs in ascending order.
    /// `target` is column-major (`target[output * inputs + input]`); output j's non-zero
    /// gains are `gain[start[j] ..< start[j + 1]]`, from the inputs in `source` at the same places.
    init(inputs n: Int, outputs m: Int, target: [Float], start: [Int32], source: [Int32], gain: [Float]) {
        var groups: [[Int32]: Int] = [:], members: [[Int32]] = []
        for j in 0..<m {
            let first = Int(start[j]), end = Int(start[j + 1])
            if end == first {
                clearOut.append(Int32(j))
            } else if end - first == 1 && gain[first] == 1 {
                copyOut.append(Int32(j))
                copyIn.append(source[first])
            } else {
                let sources = Array(source[first..<end])
                if let g = groups[sources] {
                    members[g].append(Int32(j))
                } else {
                    groups[sources] = members.count
                    members.append([Int32(j)])
                }
            }
        }
        let width = Int(XP_TILE_WIDTH)
        for group in members {
            let first = Int(start[Int(group[0])]), count = Int(start[Int(group[0]) + 1]) - first
            var k = 0
            while k < group.count {
                let outs = group[k..<min(k + width, group.count)]
                tileOut += outs + [Int32](repeating: 0, count: width - outs.count)
                tileWidth.append(Int32(outs.count))
                tileGainStart.append(Int32(tileGain.count))
                for s in 0..<count {
                    let i = Int(source[first + s])
                    tileSource.append(Int32(i))
                    for j in outs { tileGain.append(target[Int(j) * n + i]) }
                }
                tileStart.append(Int32(tileSource.count))
                k += width
            }
        }
        // Pack when the tiles read each input they use at least twice on average and there are
        // more inputs than an L1 set has ways (see `xp_program.pack`).
        let used = tileSource.elementSet.sorted()
        pack = n > 16 && tileSource.count >= 2 * used.count
        packedIn = used
    }
}

/// Where the arrays of one allocation go: offsets reserved in order, each aligned, then one
/// allocation (64-byte aligned) for all. A plan lives in one block so that what the render
/// thread reads each cycle lies together, on a few cache lines and pages, instead of in one
/// heap chunk an array wherever the daemon's heap had room; and it is one allocation to
/// make and one to free.
public struct BlockLayout {
    public private(set) var byteCount = 0

    public init() {}

    /// Reserves room for `count` values of `T` (at least one), at an offset aligned to
    /// `alignment` and to `T`'s own alignment; returns the offset.
    public mutating func reserve<T>(_: T.Type, _ count: Int, alignment: Int = 1) -> Int {
        let align = max(alignment, MemoryLayout<T>.alignment)
        let offset = (byteCount + align - 1) / align * align
        byteCount = offset + MemoryLayout<T>.stride * max(count, 1)
        return offset
    }

    /// The block, uninitialised.
    public func allocate() -> Block {
        Block(base: UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: 64))
    }

    public struct Block {
        public let base: UnsafeMutableRawPointer

        /// `count` values of `T` at `offset` (reserved for `T`), each `value`.
        public func array<T>(at offset: Int, repeating value: T, count: Int) -> UnsafeMutablePointer<T> {
            let p = (base + offset).bindMemory(to: T.self, capacity: max(count, 1))
            p.initialize(repeating: value, count: count)
            return p
        }

        /// A copy of `values` at `offset` (reserved for `values.count` of `T`).
        public func array<T>(at offset: Int, from values: [T]) -> UnsafeMutablePointer<T> {
            let p = (base + offset).bindMemory(to: T.self, capacity: max(values.count, 1))
            _ = UnsafeMutableBufferPointer(start: p, count: values.count).initialize(from: values)
            return p
        }
    }
}
