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

    /// Allocates a plan for `mixer` (control thread).
    static func make(for mixer: Mixer, kernel: KernelVersion) -> UnsafeMutablePointer<RenderPlan> {
        let n = mixer.inputs, m = mixer.outputs
        let target = UnsafeMutablePointer<Float>.allocate(capacity: n * m)
        let start = UnsafeMutablePointer<Int32>.allocate(capacity: m + 1)
        var nonZero = 0
        for j in 0..<m {
            for i in 0..<n {
                let g = mixer.effectiveGain(input: i, output: j)
                target[j * n + i] = g
                if g != 0 { nonZero += 1 }
            }
        }
        let source = UnsafeMutablePointer<Int32>.allocate(capacity: max(nonZero, 1))
        let gain = UnsafeMutablePointer<Float>.allocate(capacity: max(nonZero, 1))
        var k = 0
        for j in 0..<m {
            start[j] = Int32(k)
            for i in 0..<n where target[j * n + i] != 0 {
                source[k] = Int32(i)
                gain[k] = target[j * n + i]
                k += 1
            }
        }
        start[m] = Int32(k)
        func zeroed<T: BinaryInteger>(_ count: Int, _: T.Type) -> UnsafeMutablePointer<T> {
            let p = UnsafeMutablePointer<T>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        func zeroedFloats(_ count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        let resolved = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: max(n, 1))
        resolved.initialize(repeating: nil, count: max(n, 1))
        let program = Program.make(
            inputs: n, outputs: m, target: target, start: start, source: source, gain: gain, kernel: kernel.index,
            resolved: resolved)
        let plan = UnsafeMutablePointer<RenderPlan>.allocate(capacity: 1)
        plan.initialize(to: RenderPlan(
            inputs: n, outputs: m, rampSeconds: mixer.rampMilliseconds / 1000, kernel: kernel.index,
            program: program, resolved: resolved, ramping: zeroed(1, Int32.self),
            target: target, start: start, source: source, gain: gain,
            rampPosition: zeroed(m, Int32.self), rampLength: zeroed(m, Int32.self),
            rampCount: zeroed(m, Int32.self), rampSource: zeroed(n * m, Int32.self),
            rampFrom: zeroedFloats(n * m), rampStep: zeroedFloats(n * m), scratch: zeroedFloats(n),
            changed: { let c = UnsafeMutablePointer<Bool>.allocate(capacity: m); c.initialize(repeating: true, count: m); return c }()))
        return plan
    }

    /// Frees a plan (control thread, once the render thread has let go of it).
    static func destroy(_ plan: UnsafeMutablePointer<RenderPlan>) {
        let p = plan.pointee
        for buffer in [p.target, p.gain, p.rampFrom, p.rampStep, p.scratch] { buffer.deallocate() }
        for buffer in [p.start, p.source, p.rampPosition, p.rampLength, p.rampCount, p.rampSource] {
            buffer.deallocate()
        }
        p.changed.deallocate()
        Program.destroy(p.program)
        p.resolved.deallocate()
        p.ramping.deallocate()
        plan.deinitialize(count: 1)
        plan.deallocate()
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

/// The arrays of an `xp_program`, allocated in one block with it.
enum Program {
    /// Sorts the outputs (control thread): one input at gain 1 is a copy, none is silence, and
    /// the rest go in tiles of up to `XP_TILE_WIDTH` outputs with the same inputs, in the
    /// order the outputs first appear. Every output keeps its inputs in ascending order.
    static func make(
        inputs n: Int, outputs m: Int, target: UnsafePointer<Float>, start: UnsafePointer<Int32>,
        source: UnsafePointer<Int32>, gain: UnsafePointer<Float>, kernel: Int32,
        resolved: UnsafeMutablePointer<UnsafePointer<Float>?>
    ) -> UnsafeMutablePointer<xp_program> {
        var copies: [(Int32, Int32)] = [], clears: [Int32] = []
        var groups: [[Int32]: Int] = [:], members: [[Int32]] = []
        for j in 0..<m {
            let first = Int(start[j]), end = Int(start[j + 1])
            if end == first {
                clears.append(Int32(j))
            } else if end - first == 1 && gain[first] == 1 {
                copies.append((Int32(j), source[first]))
            } else {
                let sources = Array(UnsafeBufferPointer(start: source + first, count: end - first))
                if let g = groups[sources] {
                    members[g].append(Int32(j))
                } else {
                    groups[sources] = members.count
                    members.append([Int32(j)])
                }
            }
        }
        let width = Int(XP_TILE_WIDTH)
        var tileOut: [Int32] = [], tileWidth: [Int32] = [], tileStart: [Int32] = [0], tileGainStart: [Int32] = []
        var tileSource: [Int32] = [], tileGain: [Float] = []
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
        func copy<T>(_ values: [T]) -> UnsafeMutablePointer<T> {
            let p = UnsafeMutablePointer<T>.allocate(capacity: max(values.count, 1))
            _ = UnsafeMutableBufferPointer(start: p, count: values.count).initialize(from: values)
            return p
        }
        // Pack when the tiles read each input they use at least twice on average and there are
        // more inputs than an L1 set has ways (see `xp_program.pack`).
        let used = Set(tileSource).sorted()
        let pack = n > 16 && tileSource.count >= 2 * used.count
        let packed = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: pack ? n : 1)
        packed.initialize(repeating: nil, count: pack ? n : 1)
        let panel = UnsafeMutablePointer<Float>.allocate(capacity: pack ? max(8192, 64 * n) : 1)  // XP_PANEL_FLOATS
        let program = UnsafeMutablePointer<xp_program>.allocate(capacity: 1)
        program.initialize(to: xp_program(
            kernel: kernel, inputs: Int32(n), resolved: resolved,
            copies: Int32(copies.count), copy_out: UnsafePointer(copy(copies.map(\.0))),
            copy_in: UnsafePointer(copy(copies.map(\.1))),
            clears: Int32(clears.count), clear_out: UnsafePointer(copy(clears)),
            tiles: Int32(tileWidth.count), tile_out: UnsafePointer(copy(tileOut)),
            tile_width: UnsafePointer(copy(tileWidth)), tile_start: UnsafePointer(copy(tileStart)),
            tile_gain_start: UnsafePointer(copy(tileGainStart)), tile_source: UnsafePointer(copy(tileSource)),
            tile_gain: UnsafePointer(copy(tileGain)), outputs: Int32(m),
            pack: pack ? 1 : 0, packed_count: pack ? Int32(used.count) : 0, packed_in: UnsafePointer(copy(used)),
            packed: packed, panel: panel, run: nil))
        xp_bind(program)
        return program
    }

    static func destroy(_ program: UnsafeMutablePointer<xp_program>) {
        let p = program.pointee
        for array in [p.copy_out, p.copy_in, p.clear_out, p.tile_out, p.tile_width, p.tile_start, p.tile_gain_start,
                      p.tile_source, p.packed_in] {
            UnsafeMutablePointer(mutating: array)?.deallocate()
        }
        for array in [p.tile_gain, UnsafePointer(p.panel)] { UnsafeMutablePointer(mutating: array)?.deallocate() }
        p.packed?.deallocate()
        program.deinitialize(count: 1)
        program.deallocate()
    }
}
