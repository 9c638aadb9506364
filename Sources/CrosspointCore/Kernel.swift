// The arithmetic of the render path that stays in Swift: ramps, silence and level
// meters, SIMD8 loops over plain pointers with scalar tails. Steady mixing is the C kernel's
// (CCrosspointKernel: one version per instruction set, chosen at load). Every function
// computes each frame with the same operations in the same order whatever the frame count, so
// a column that did not change renders bit-identically.

import CCrosspointKernel

/// A version of the steady-state mixing kernel: one per instruction set (on x86-64 "baseline",
/// "avx2" with FMA, "avx512"; "generic" elsewhere). The library chooses the best this CPU runs
/// when it is loaded (or the one the environment variable `CROSSPOINT_KERNEL` names); tests
/// and benchmarks may ask a `MatrixMixer` for another.
public struct KernelVersion: Hashable, Sendable, CustomStringConvertible {
    let index: Int32

    /// The version chosen at load.
    public static var `default`: KernelVersion { KernelVersion(index: xp_kernel_default()) }

    /// Every version this CPU runs, the plainest first.
    public static var available: [KernelVersion] {
        var versions: [KernelVersion] = []
        var k: Int32 = 0
        while xp_kernel_name(k) != nil {
            if xp_kernel_runs(k) != 0 { versions.append(KernelVersion(index: k)) }
            k += 1
        }
        return versions
    }

    /// The version with this name, if this CPU runs it.
    public init?(named name: String) {
        guard let version = KernelVersion.available.first(where: { $0.name == name }) else { return nil }
        self = version
    }

    init(index: Int32) { self.index = index }

    public var name: String { xp_kernel_name(index).map { String(cBytes: $0) } ?? "unknown" }
    public var description: String { name }
}

typealias Vector = SIMD8<Float>

@inline(__always)
private func load(_ p: UnsafePointer<Float>, _ n: Int) -> Vector {
    UnsafeRawPointer(p + n).loadUnaligned(as: Vector.self)
}

@inline(__always)
private func store(_ v: Vector, _ p: UnsafeMutablePointer<Float>, _ n: Int) {
    UnsafeMutableRawPointer(p + n).storeBytes(of: v, as: Vector.self)
}

enum Kernel {
    /// out = 0
    @inline(__always)
    static func clear(_ out: UnsafeMutablePointer<Float>, _ count: Int) {
        out.update(repeating: 0, count: count)
    }

    /// out (=|+=) a * (from + step * (position + 1 + n)): one source along a linear ramp.
    @inline(__always)
    static func ramp(
        _ out: UnsafeMutablePointer<Float>, _ count: Int, accumulate: Bool,
        _ a: UnsafePointer<Float>, from: Float, step: Float, position: Int
    ) {
        // Two copies of the loop, each with a constant `accumulate`: a test inside the loop
        // makes LLVM split the SIMD8 accumulator and scalarise part of it.
        if accumulate {
            rampLoop(out, count, accumulate: true, a, from: from, step: step, position: position)
        } else {
            rampLoop(out, count, accumulate: false, a, from: from, step: step, position: position)
        }
    }

    @inline(__always)
    private static func rampLoop(
        _ out: UnsafeMutablePointer<Float>, _ count: Int, accumulate: Bool,
        _ a: UnsafePointer<Float>, from: Float, step: Float, position: Int
    ) {
        let vFrom = Vector(repeating: from), vStep = Vector(repeating: step)
        var index = Vector(0, 1, 2, 3, 4, 5, 6, 7) + Vector(repeating: Float(position + 1))
        let eight = Vector(repeating: 8)
        var n = 0
        while n + 8 <= count {
            var acc = load(a, n) * (vFrom + vStep * index)
            if accumulate { acc = load(out, n) + acc }
            store(acc, out, n)
            index += eight
            n += 8
        }
        while n < count {
            var acc = a[n] * (from + step * Float(position + 1 + n))
            if accumulate { acc = out[n] + acc }
            out[n] = acc
            n += 1
        }
    }
}

extension Kernel {
    /// Adds `count` samples to a level meter's accumulators, lane by lane: `peak` keeps the
    /// largest square of a sample in each lane (the peak is its root, taken when read),
    /// `squares` adds the squares up. Three operations a vector: one square serves both. The
    /// lanes are reduced only when the levels are read (on the control side), so a block costs
    /// its loop and little else: most blocks are a few hundred frames, where a reduction per
    /// block would cost as much as the loop. Four pairs of accumulators let the additions run
    /// side by side. A NaN sample is skipped by the peak (the comparison is false) and makes
    /// the sum NaN; an infinite one makes both infinite. A square never rounds across 1:
    /// |x| >= 1 exactly when x*x >= 1.
    @inline(__always)
    static func level(_ a: UnsafePointer<Float>, _ count: Int, peak: inout Vector, squares: inout Vector) {
        // Frame counts are 0 to 8192: the bounds below cannot overflow.
        let count = max(count, 0), whole32 = count & ~31, whole8 = count & ~7
        var peak0 = peak, peak1 = Vector(), peak2 = Vector(), peak3 = Vector()
        var sq0 = squares, sq1 = Vector(), sq2 = Vector(), sq3 = Vector()
        var n = 0
        while n < whole32 {
            let x0 = load(a, n), x1 = load(a, n &+ 8), x2 = load(a, n &+ 16), x3 = load(a, n &+ 24)
            let m0 = x0 * x0, m1 = x1 * x1, m2 = x2 * x2, m3 = x3 * x3
            peak0 = peak0.replacing(with: m0, where: m0 .> peak0)
            peak1 = peak1.replacing(with: m1, where: m1 .> peak1)
            peak2 = peak2.replacing(with: m2, where: m2 .> peak2)
            peak3 = peak3.replacing(with: m3, where: m3 .> peak3)
            sq0 += m0
            sq1 += m1
            sq2 += m2
            sq3 += m3
            n &+= 32
        }
        while n < whole8 {
            let x = load(a, n), m = x * x
            peak1 = peak1.replacing(with: m, where: m .> peak1)
            sq1 += m
            n &+= 8
        }
        if n < count {
            // The last few samples, zero-padded to a vector (a zero changes neither).
            var x = Vector()
            for k in 0..<(count &- n) { x[k] = a[n &+ k] }
            let m = x * x
            peak2 = peak2.replacing(with: m, where: m .> peak2)
            sq2 += m
        }
        let peak01 = peak0.replacing(with: peak1, where: peak1 .> peak0)
        let peak23 = peak2.replacing(with: peak3, where: peak3 .> peak2)
        peak = peak01.replacing(with: peak23, where: peak23 .> peak01)
        squares = (sq0 + sq1) + (sq2 + sq3)
    }
}
