#if canImport(Glibc)
import Glibc
#endif

/// The delay of one output on the render thread: a ring of the output's last samples, read
/// back `current` frames late. Allocated, sized and freed on the control thread
/// (`DelayLinePool`), handed to the render thread in the plan; only the render thread writes
/// it once a plan holding it is installed.
///
/// A change of delay never jumps: the output cross-fades, linearly over the ramp time, from
/// the old delay to the new one (both read from the same ring), then plays the new one. A
/// change that arrives during a cross-fade waits for it to end, then fades to the newest delay.
///
/// An output whose delay is 0 and not fading is idle: the line records nothing and the
/// output passes untouched, at no cost. When it is given a delay, it records first, and the
/// fade starts once the ring holds that much of the output (up to the delay itself, at most
/// 1 s): a delayed output never plays samples it did not record.
///
/// Every function is for the render thread: no allocation, lock, throw or class.
struct DelayLine {
    /// The ring: `capacity` samples, a power of two.
    let ring: UnsafeMutablePointer<Float>
    let capacity: Int
    /// Where the next block is written.
    var write = 0
    /// How many samples the ring holds since the line last went from idle to recording
    /// (at most `capacity`).
    var recorded = 0
    /// The delay played, in frames (during a fade: the one faded to).
    var current = 0
    /// During a fade: the delay faded from, the frames done and the fade's length (0 = none).
    var from = 0
    var fadePosition = 0
    var fadeLength = 0
    /// A line made with the mixer, before it ever played: its ring of zeros is the output's
    /// true past (silence), so its first delay is played from the first frame, without a fade.
    var startsSilent = false
    /// Whether `ring` was mapped from the kernel (`DelayLinePool`), not allocated.
    var isMapped = false

    /// The longest delay the ring can play whatever the block size.
    var maximumDelay: Int { capacity - maximumFrameCount }

    var isIdle: Bool { current == 0 && fadeLength == 0 }

    /// Delays `out` (or, where nobody listens, the silence it stands for) by the line's delay,
    /// moving toward `target` frames with fades of `fadeFrames` (0: a change is a jump).
    mutating func process(_ out: UnsafeMutablePointer<Float>?, frames: Int, target requested: Int, fadeFrames: Int) {
        let target = min(max(requested, 0), maximumDelay)
        if startsSilent {
            startsSilent = false
            recorded = capacity
            current = target
        }
        if isIdle && target == 0 {
            recorded = 0
            return
        }
        let start = write, mask = capacity - 1
        record(out, frames: frames, at: start)
        write = (start + frames) & mask
        let before = recorded
        recorded = min(recorded + frames, capacity)
        if fadeLength == 0 && target != current && target <= before {
            if fadeFrames > 0 {
                from = current
                fadePosition = 0
                fadeLength = fadeFrames
            }
            current = target
        }
        guard let out else {
            if fadeLength != 0 { advanceFade(by: frames) }
            return
        }
        var n = 0
        if fadeLength != 0 {
            // The fade: the old delay's samples, then the new one's blended in, a contiguous
            // stretch of the ring at a time.
            let count = min(frames, fadeLength - fadePosition)
            read(into: out, count: count, at: (start - from) & mask)
            var position = (start - current) & mask
            while n < count {
                let stretch = min(count - n, capacity - position)
                DelayLine.blend(out + n, ring + position, stretch, first: fadePosition + n + 1, length: fadeLength)
                n += stretch
                position = 0
            }
            advanceFade(by: count)
        }
        if n < frames && current != 0 { read(into: out + n, count: frames - n, at: (start + n - current) & mask) }
    }

    /// out[k] = a + (b[k] - a) * t, t = (first + k) / length, with a = out[k]: the cross-fade,
    /// eight samples at a time.
    @inline(__always)
    private static func blend(_ out: UnsafeMutablePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int, first: Int, length: Int) {
        typealias V = SIMD8<Float>
        let scale = V(repeating: Float(length)), eight = V(repeating: 8)
        var index = V(0, 1, 2, 3, 4, 5, 6, 7) + V(repeating: Float(first))
        var k = 0
        while k + 8 <= count {
            let a = UnsafeRawPointer(out + k).loadUnaligned(as: V.self), y = UnsafeRawPointer(b + k).loadUnaligned(as: V.self)
            UnsafeMutableRawPointer(out + k).storeBytes(of: a + (y - a) * (index / scale), as: V.self)
            index += eight
            k += 8
        }
        while k < count {
            let a = out[k]
            out[k] = a + (b[k] - a) * (Float(first + k) / Float(length))
            k += 1
        }
    }

    /// Writes a block (silence for none) into the ring at `start`.
    private func record(_ out: UnsafeMutablePointer<Float>?, frames: Int, at start: Int) {
        let first = min(frames, capacity - start)
        if let out {
            (ring + start).update(from: out, count: first)
            if first < frames { ring.update(from: out + first, count: frames - first) }
        } else {
            (ring + start).update(repeating: 0, count: first)
            if first < frames { ring.update(repeating: 0, count: frames - first) }
        }
    }

    /// Reads `count` samples from the ring at `position` on (wrapping).
    private func read(into out: UnsafeMutablePointer<Float>, count: Int, at position: Int) {
        let first = min(count, capacity - position)
        out.update(from: ring + position, count: first)
        if first < count { (out + first).update(from: ring, count: count - first) }
    }

    private mutating func advanceFade(by frames: Int) {
        fadePosition += frames
        if fadePosition >= fadeLength {
            fadePosition = 0
            fadeLength = 0
            from = 0
        }
    }

    /// Takes over a line this one replaces (a bigger ring, for a higher rate): its state and
    /// the recent past its delays read, so the output plays on as if nothing happened. Only
    /// that much is copied (a cycle's work stays small); a longer delay asked for later waits
    /// until the new ring holds it, as on any line.
    mutating func takeOver(from old: DelayLine) {
        let count = min(min(old.recorded, max(old.current, old.from) + maximumFrameCount), min(old.capacity, capacity))
        let first = min(count, old.capacity - ((old.write - count) & (old.capacity - 1)))
        ring.update(from: old.ring + ((old.write - count) & (old.capacity - 1)), count: first)
        if first < count { (ring + first).update(from: old.ring, count: count - first) }
        write = count & (capacity - 1)
        recorded = count
        current = min(old.current, maximumDelay)
        from = min(old.from, maximumDelay)
        fadePosition = old.fadePosition
        fadeLength = old.fadeLength
        startsSilent = old.startsSilent
    }
}

/// The delay lines of a `MatrixMixer`, on the control thread: one per output that has had a
/// delay, reused by every plan while that output exists, freed once no plan holds it.
/// Lines are counted by the plans that hold them: a plan's lines are retained when it is made
/// and released when it is destroyed (which happens only once the render thread let go of it).
package struct DelayLinePool {
    /// The lines of the newest plan, by output.
    private var lines: [UnsafeMutablePointer<DelayLine>?] = []
    /// How many plans hold each line.
    private var holders: [UnsafeMutablePointer<DelayLine>: Int] = [:]

    /// The frames of ring a line needs at `rate`: one second plus the largest block, rounded up
    /// to a power of two (at least 48 kHz's).
    package static func capacity(atRate rate: Double) -> Int {
        let perSecond = rate.isFinite ? Int(min(max(rate, 48000), 768_000)) : 48000
        var capacity = 1
        while capacity < perSecond + maximumFrameCount { capacity <<= 1 }
        return capacity
    }

    /// The lines a plan for `mixer` holds, by output (nil: not delayed): an output keeps its
    /// line while it exists once it has had a delay, so that it can fade back to none; a line
    /// too small for `rate` is replaced by a bigger one (which takes the old one over when
    /// installed). Retained for the plan.
    /// `silentPast`: the mixer has not played yet (its first plan), so new lines start with
    /// their delay, their past silence.
    mutating func lines(for mixer: Mixer, rate: Double, silentPast: Bool = false) -> [UnsafeMutablePointer<DelayLine>?] {
        let capacity = DelayLinePool.capacity(atRate: rate)
        var next = [UnsafeMutablePointer<DelayLine>?](repeating: nil, count: mixer.outputs)
        for j in 0..<mixer.outputs {
            let old = j < lines.count ? lines[j] : nil
            if let old, old.pointee.capacity >= capacity {
                next[j] = old
            } else if old != nil || mixer.outputDelays[j] != 0 {
                next[j] = DelayLinePool.make(capacity: max(capacity, old?.pointee.capacity ?? 0), silentPast: silentPast)
            }
        }
        lines = next
        for case let line? in next { holders[line, default: 0] += 1 }
        return next
    }

    /// Lets go of a destroyed plan's lines, freeing those no plan holds any more.
    mutating func release(_ planLines: UnsafeMutablePointer<UnsafeMutablePointer<DelayLine>?>, count: Int) {
        for j in 0..<count {
            guard let line = planLines[j], let held = holders[line] else { continue }
            if held > 1 {
                holders[line] = held - 1
            } else {
                holders[line] = nil
                DelayLinePool.free(line)
            }
        }
    }

    /// Whether a line of the newest plan is too small for `rate`.
    func needsBiggerLines(atRate rate: Double) -> Bool {
        let capacity = DelayLinePool.capacity(atRate: rate)
        return lines.contains { $0.map { $0.pointee.capacity < capacity } ?? false }
    }

    /// How many lines are allocated (tests).
    var allocated: Int { holders.count }

    /// A ring (256 kB and more) is mapped from the kernel, not taken from malloc: glibc raises
    /// its threshold for mapping to the size of the biggest mapped block freed, so freeing one
    /// ring through free() (the warm-up's, a delay removed) would make every later allocation
    /// of the daemon up to that size come from its heap, for good (BENCHMARKS.md, "Footprint").
    /// The kernel's pages come zeroed: silence.
    private static func make(capacity: Int, silentPast: Bool) -> UnsafeMutablePointer<DelayLine> {
        let bytes = capacity * MemoryLayout<Float>.stride
        let line = UnsafeMutablePointer<DelayLine>.allocate(capacity: 1)
        if let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED {
            let ring = mapped.bindMemory(to: Float.self, capacity: capacity)
            line.initialize(to: DelayLine(ring: ring, capacity: capacity, startsSilent: silentPast, isMapped: true))
        } else {
            // No mapping to be had (a limit on the daemon's mappings): from malloc, as before.
            let ring = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
            ring.initialize(repeating: 0, count: capacity)
            line.initialize(to: DelayLine(ring: ring, capacity: capacity, startsSilent: silentPast))
        }
        return line
    }

    private static func free(_ line: UnsafeMutablePointer<DelayLine>) {
        if line.pointee.isMapped {
            munmap(line.pointee.ring, line.pointee.capacity * MemoryLayout<Float>.stride)
        } else {
            line.pointee.ring.deallocate()
        }
        line.deinitialize(count: 1)
        line.deallocate()
    }
}
