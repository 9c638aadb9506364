import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// Levels: per channel, the peak (largest |sample|) and the RMS of what a node's ports read and
// wrote, measured on the render thread while someone watches, read on the control thread.
// How a node publishes them, who watches and why a node property: the header of
// Sources/CrosspointNode/LevelPublisher.swift.
//
// The render side (`LevelTap`, a plain value) adds each block into one of two banks; the
// control side (`LevelMeter`) asks it to switch banks and reads the bank it left. The two
// meet through three atomics and nothing else: no lock, no allocation, no retain on the
// render side. While nobody watches, the render side costs one relaxed atomic load per block.
//
// On the render (data) thread, while someone watches (`processCycle` in the node):
// `LevelTap.beginBlock` measures the inputs, which also brings them into the cache for the
// render, and the renderer measures the outputs right after writing them, while they are in
// the cache (`MatrixRenderer.render(levels:)`: after `xp_run` when nothing ramps, else output
// by output). `Kernel.level` keeps per port and per SIMD lane the largest square and the sum of
// squares (its comment says why: no reduction per block). This costs 2 to 3.5% of a 64x64
// dense render at 256 frames (BENCHMARKS.md). An unlinked input has no buffer and reads
// silence; an unlinked output is not rendered, so it has no buffer either and reads silence:
// rendering it only to measure it would cost a full mix of an output nobody hears.
//
// Between the threads (`LevelState`): two banks of accumulators, preallocated for the largest
// node (256 + 256 ports), and three atomics, each with one writer: `watching` and `requested`
// (control), `switched` (render). The control side asks for a switch by bumping `requested`
// (release); at the start of its next block the render side zeroes the other bank, makes it
// the one it writes, and publishes `switched` (release). Once `switched` matches (acquire),
// the bank it left is the control side's to read until the next request. Nothing is shared
// while written, no lock, and the control side never writes a bank. After a `start`, the
// first bank handed over is dropped, since it may hold what was measured before an earlier
// `stop`.

/// One channel's level over one reading, in dBFS to a tenth of a dB, as published: nil is
/// silence (every sample exactly zero, or no audio at all).
public struct Level: Equatable, Sendable {
    /// Largest |sample|, dBFS.
    public var peak: Double?
    /// Root mean square, dBFS (a full-scale sine reads -3.0).
    public var rms: Double?

    public static let silence = Level(peak: nil, rms: nil)
    /// What a channel that carried a NaN or an infinite sample reads: beyond measure (and so
    /// clipping).
    public static let beyondMeasure = 999.9

    public init(peak: Double?, rms: Double?) {
        self.peak = peak
        self.rms = rms
    }

    /// A level from a measurement: the largest |sample|, the sum of the squares and the
    /// number of frames they came from. Rounded to a tenth of a dB, except that a level below
    /// full scale never reads 0.0 or more (-0.04 dB reads -0.1): `peak >= 0` is exactly
    /// "a sample reached full scale", which is what a clip mark shows.
    public init(peak: Float, sumOfSquares: Double, frames: Int) {
        guard frames > 0 else {
            self = .silence
            return
        }
        guard peak.isFinite, sumOfSquares.isFinite else {
            self.init(peak: Level.beyondMeasure, rms: Level.beyondMeasure)
            return
        }
        let meanSquare = sumOfSquares / Double(frames)
        self.init(
            peak: peak > 0 ? Level.tenths(20 * log10(Double(peak)), belowFullScale: peak < 1) : nil,
            rms: meanSquare > 0 ? Level.tenths(10 * log10(meanSquare), belowFullScale: meanSquare < 1) : nil)
    }

    /// Whether the peak reached full scale (0 dBFS) or more.
    public var clips: Bool { (peak ?? -.infinity) >= 0 }

    static func tenths(_ decibels: Double, belowFullScale: Bool) -> Double {
        guard decibels.isFinite else { return decibels > 0 ? beyondMeasure : -beyondMeasure }
        var rounded = (decibels * 10).rounded() / 10
        if belowFullScale && rounded >= 0 { rounded = -0.1 }
        return min(max(rounded, -beyondMeasure), beyondMeasure)
    }

    /// A level as the JSON the node publishes and `crosspoint meter --json` prints: `-12.0`,
    /// `0.0`, `null` for silence.
    public static func json(_ decibels: Double?) -> String {
        guard let decibels, decibels.isFinite else { return "null" }
        // Clamped as the node clamps them (and so that no value can trap the conversion).
        let tenths = Int((min(abs(decibels), beyondMeasure) * 10).rounded())
        return (decibels < 0 && tenths != 0 ? "-" : "") + "\(tenths / 10).\(tenths % 10)"
    }
}

/// One reading of a node's levels: every input (as it arrives, before its gain and mute) and
/// every output (as it leaves), over the time since the previous reading.
public struct LevelReading: Equatable, Sendable {
    /// Counts the node's readings; a watcher takes a larger one as new.
    public var sequence: Int
    /// The interval, in milliseconds, the node publishes at now.
    public var interval: Int
    /// Frames measured; 0 when the node did not run (nothing linked to it: all silence).
    public var frames: Int
    public var inputs: [Level]
    public var outputs: [Level]
    /// Each ducking rule's gain reduction (dB, 0 or below) as the reading was taken, in the
    /// rules' order (`duck`; DuckingRule); empty when the node has none.
    public var ducking: [Double]

    public init(sequence: Int, interval: Int, frames: Int, inputs: [Level], outputs: [Level], ducking: [Double] = []) {
        self.sequence = sequence
        self.interval = interval
        self.frames = frames
        self.inputs = inputs
        self.outputs = outputs
        self.ducking = ducking
    }
}

/// What the control and render sides share. Lives at a fixed address.
struct LevelState: ~Copyable {
    /// Channels per direction: a node's most.
    static let capacity = Mixer.channelLimit.upperBound
    /// Slots per bank: inputs, then outputs.
    static let slots = 2 * capacity

    /// Whether to measure (written by control, read by render every block).
    let watching = Atomic<Bool>(false)
    /// How many bank switches control has asked for (written by control).
    let requested = Atomic<UInt32>(0)
    /// How many the render side has made (written by render). It writes bank `switched & 1`.
    let switched = Atomic<UInt32>(0)
    /// Two banks of `slots` peaks (as the largest square of a sample) and sums of squares,
    /// each eight lanes wide (the kernel's, reduced when read), and one frame count each.
    let peaks: UnsafeMutablePointer<SIMD8<Float>>
    let squares: UnsafeMutablePointer<SIMD8<Float>>
    let frames: UnsafeMutablePointer<Int>

    init() {
        peaks = .allocate(capacity: 2 * LevelState.slots)
        peaks.initialize(repeating: .zero, count: 2 * LevelState.slots)
        squares = .allocate(capacity: 2 * LevelState.slots)
        squares.initialize(repeating: .zero, count: 2 * LevelState.slots)
        frames = .allocate(capacity: 2)
        frames.initialize(repeating: 0, count: 2)
    }

    func free() {
        peaks.deallocate()
        squares.deallocate()
        frames.deallocate()
    }

    /// Zeroes one bank (render side, as it switches to it).
    @inline(__always)
    func clear(bank: Int) {
        let base = bank * LevelState.slots
        (peaks + base).update(repeating: .zero, count: LevelState.slots)
        (squares + base).update(repeating: .zero, count: LevelState.slots)
        frames[bank] = 0
    }
}

/// The render half of a `LevelMeter`: a plain value holding one pointer, safe to call from the
/// real-time thread (no allocation, lock, log, throw or retain).
public struct LevelTap {
    let state: UnsafeMutablePointer<LevelState>

    /// Whether anyone watches: one relaxed atomic load, all metering costs while nobody does.
    @inline(__always)
    public var isWatched: Bool { state.pointee.watching.load(ordering: .relaxed) }

    /// Adds one block to the levels: `frames` frames of every input and output port (nil: no
    /// buffer, which adds silence: an unlinked input is silent, and an unlinked output is not
    /// rendered). The same as `beginBlock` and then `measureOutput` for each output.
    public func measure(
        frames: Int, inputs: UnsafeBufferPointer<UnsafePointer<Float>?>,
        outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>
    ) {
        beginBlock(frames: frames, inputs: inputs)
        for j in 0..<outputs.count {
            guard let p = outputs[j] else { continue }
            measureOutput(j, p, frames: frames)
        }
    }

    /// Starts a block: first switches banks if the control side asked for it (so a block of
    /// no frames only switches), then counts its frames and measures its inputs (nil: no
    /// buffer, silence). Inputs past the meter's capacity are left out.
    public func beginBlock(frames: Int, inputs: UnsafeBufferPointer<UnsafePointer<Float>?>) {
        let s = state
        let wanted = s.pointee.requested.load(ordering: .acquiring)
        var bank = s.pointee.switched.load(ordering: .relaxed)
        if wanted != bank {
            s.pointee.clear(bank: Int(wanted & 1))
            s.pointee.switched.store(wanted, ordering: .releasing)
            bank = wanted
        }
        guard frames > 0 else { return }
        let base = Int(bank & 1) * LevelState.slots
        s.pointee.frames[Int(bank & 1)] += frames
        for i in 0..<min(inputs.count, LevelState.capacity) {
            guard let p = inputs[i] else { continue }
            add(p, frames, at: base + i)
        }
    }

    /// Adds output `j`'s block, right after it was rendered (while it is in the cache), to the
    /// bank `beginBlock` chose. Outputs past the meter's capacity are left out.
    @inline(__always)
    public func measureOutput(_ j: Int, _ samples: UnsafePointer<Float>, frames: Int) {
        guard j >= 0, j < LevelState.capacity, frames > 0 else { return }
        let bank = Int(state.pointee.switched.load(ordering: .relaxed) & 1)
        add(samples, frames, at: bank * LevelState.slots + LevelState.capacity + j)
    }

    @inline(__always)
    public func measureOutput(_ j: Int, _ samples: UnsafeMutablePointer<Float>, frames: Int) {
        measureOutput(j, UnsafePointer(samples), frames: frames)
    }

    @inline(__always)
    private func add(_ samples: UnsafePointer<Float>, _ frames: Int, at slot: Int) {
        let peak = state.pointee.peaks + slot, squares = state.pointee.squares + slot
        Kernel.level(samples, frames, peak: &peak.pointee, squares: &squares.pointee)
    }
}

/// The bank the render side has left, as the control side reads it: per slot (inputs
/// `0 ..< 256`, then outputs `256 ..< 512`) the peak and the sum of squares, and the frames
/// measured.
public struct LevelBank {
    let state: UnsafeMutablePointer<LevelState>
    let bank: Int

    /// Slots per bank: 256 inputs, then 256 outputs.
    public static var slots: Int { LevelState.slots }
    /// The slot of output 0.
    public static var firstOutput: Int { LevelState.capacity }

    public var frames: Int { state.pointee.frames[bank] }
    /// The largest |sample| of a slot (the root of the largest square).
    public func peak(_ slot: Int) -> Float { state.pointee.peaks[bank * LevelState.slots + slot].max().squareRoot() }
    /// The sum of the squares of a slot (its lanes added up in Double).
    public func squares(_ slot: Int) -> Double {
        let lanes = state.pointee.squares[bank * LevelState.slots + slot]
        var sum = 0.0
        for k in lanes.indices { sum += Double(lanes[k]) }
        return sum
    }
}

/// A node's level meter, control side: starts and stops the measuring, collects what the
/// render side measured, and makes readings of it.
///
/// `collect` asks the render side to switch banks (it does so at the start of its next
/// block) and adds the bank it left to the totals; `reading` turns the totals into a reading
/// and starts them afresh. Collecting often (every 50 ms) and publishing at whatever interval
/// watchers want keeps a reading at most one collection old. The control side never writes a
/// bank: the render side zeroes a bank as it switches to it.
public final class LevelMeter {
    let state: UnsafeMutablePointer<LevelState>
    /// Switches asked for (the control side's copy of `state.requested`).
    private var requested: UInt32 = 0
    /// Whether the next bank handed over is to be dropped: the first after `start` may hold
    /// levels measured before an earlier `stop`.
    private var discardNext = true
    /// The totals since the last reading (control side).
    private var peaks = [Float](repeating: 0, count: LevelState.slots)
    private var squares = [Double](repeating: 0, count: LevelState.slots)
    /// Frames in the totals.
    public private(set) var collectedFrames = 0

    public init() {
        // The warm-up's own banks first: freed, they are the memory this meter's banks then
        // take, so that the daemon's heap does not grow by both (64 kB each).
        LevelMeter.warmUp()
        state = .allocate(capacity: 1)
        state.initialize(to: LevelState())
    }

    /// Measures a block once, off the render thread, so that the runtime metadata the
    /// measuring kernel's SIMD types need exists before a real-time thread asks for it.
    private static let warmedUp: Bool = {
        let state = UnsafeMutablePointer<LevelState>.allocate(capacity: 1)
        state.initialize(to: LevelState())
        defer {
            state.pointee.free()
            state.deinitialize(count: 1)
            state.deallocate()
        }
        let samples = [Float](repeating: 0.5, count: 77)
        samples.withUnsafeBufferPointer { buffer in
            let inputs = [buffer.baseAddress]
            let outputs = [UnsafeMutablePointer(mutating: buffer.baseAddress)]
            inputs.withUnsafeBufferPointer { ins in
                outputs.withUnsafeBufferPointer { outs in
                    state.pointee.watching.store(true, ordering: .relaxed)
                    LevelTap(state: state).measure(frames: buffer.count, inputs: ins, outputs: outs)
                }
            }
        }
        return true
    }()

    private static func warmUp() { _ = warmedUp }

    /// Frees the banks. The render thread must no longer be using `tap`.
    deinit {
        state.pointee.free()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The render half, a plain value the render thread may copy and call.
    public var tap: LevelTap { LevelTap(state: state) }

    /// Whether the render side measures.
    public var isWatching: Bool { state.pointee.watching.load(ordering: .relaxed) }

    /// Whether a switch asked for has not happened yet (the render side has not run since).
    public var isWaiting: Bool { state.pointee.switched.load(ordering: .acquiring) != requested }

    /// Starts measuring, with empty totals. The first bank the render side hands over is
    /// dropped (it may hold levels from before an earlier `stop`).
    public func start() {
        guard !isWatching else { return }
        discardNext = true
        clearTotals()
        state.pointee.watching.store(true, ordering: .releasing)
        if !isWaiting { requestSwitch() }
    }

    /// Stops measuring; the render side goes back to one atomic load a block.
    public func stop() {
        state.pointee.watching.store(false, ordering: .releasing)
    }

    /// If the render side has switched banks since the last call, hands the bank it left to
    /// `read` (except the first after `start`) and asks for the next switch. Nil while the
    /// switch is pending (or not watching). Allocates nothing itself.
    public func take<R>(_ read: (LevelBank) -> R) -> R? {
        guard isWatching, !isWaiting else { return nil }
        let result = discardNext ? nil : read(LevelBank(state: state, bank: Int((requested & 1) ^ 1)))
        discardNext = false
        requestSwitch()
        return result
    }

    /// Adds what the render side measured up to its last switch to the totals, and asks for
    /// the next switch. Returns whether there was a switch to collect (false while it is
    /// pending: the render side has not run since the last call).
    @discardableResult
    public func collect() -> Bool {
        guard isWatching, !isWaiting else { return false }
        _ = take { bank in
            for k in 0..<LevelState.slots {
                peaks[k] = max(peaks[k], bank.peak(k))
                squares[k] += bank.squares(k)
            }
            collectedFrames += bank.frames
        }
        return true
    }

    /// The totals as a reading of the first `inputs` inputs and `outputs` outputs (frames 0,
    /// all silent, when nothing was collected), then starts them afresh.
    public func reading(inputs: Int, outputs: Int, sequence: Int, interval: Int) -> LevelReading {
        func level(_ k: Int) -> Level {
            Level(peak: peaks[k], sumOfSquares: squares[k], frames: collectedFrames)
        }
        let reading = LevelReading(
            sequence: sequence, interval: interval, frames: collectedFrames,
            inputs: (0..<min(max(inputs, 0), LevelState.capacity)).map(level),
            outputs: (0..<min(max(outputs, 0), LevelState.capacity)).map { level(LevelState.capacity + $0) })
        clearTotals()
        return reading
    }

    private func clearTotals() {
        for k in 0..<LevelState.slots {
            peaks[k] = 0
            squares[k] = 0
        }
        collectedFrames = 0
    }

    private func requestSwitch() {
        requested &+= 1
        state.pointee.requested.store(requested, ordering: .releasing)
    }
}
