// The arithmetic of the render path: SIMD8 loops over plain pointers, with scalar tails.
// Every function computes each frame with the same operations in the same order whatever
// the frame count, so a column that did not change renders bit-identically.

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

    /// out = a (a memcpy)
    @inline(__always)
    static func copy(_ out: UnsafeMutablePointer<Float>, _ a: UnsafePointer<Float>, _ count: Int) {
        out.update(from: a, count: count)
    }

    /// out (=|+=) a*ga
    @inline(__always)
    static func mix1(
        _ out: UnsafeMutablePointer<Float>, _ count: Int, accumulate: Bool,
        _ a: UnsafePointer<Float>, _ ga: Float
    ) {
        // Two copies of the loop, each with a constant `accumulate`: a test inside the loop
        // makes LLVM split the SIMD8 accumulator and scalarise part of it.
        if accumulate {
            mix1Loop(out, count, accumulate: true, a, ga)
        } else {
            mix1Loop(out, count, accumulate: false, a, ga)
        }
    }

    @inline(__always)
    private static func mix1Loop(
        _ out: UnsafeMutablePointer<Float>, _ count: Int, accumulate: Bool,
        _ a: UnsafePointer<Float>, _ ga: Float
    ) {
        let va = Vector(repeating: ga)
        var n = 0
        while n + 8 <= count {
            var acc = load(a, n) * va
            if accumulate { acc = load(out, n) + acc }
            store(acc, out, n)
            n += 8
        }
        while n < count {
            var acc = a[n] * ga
            if accumulate { acc = out[n] + acc }
            out[n] = acc
            n += 1
        }
    }

    /// out (=|+=) a*ga + b*gb
    @inline(__always)
    static func mix2(
        _ out: UnsafeMutablePointer<Float>, _ count: Int, accumulate: Bool,
        _ a: UnsafePointer<Float>, _ ga: Float, _ b: UnsafePointer<Float>, _ gb: Float
    ) {
        // Two copies of the loop, each with a constant `accumulate`: a test inside the loop
        // makes LLVM split the SIMD8 accumulator and scalarise part of it.
        if accumulate {
            mix2Loop(out, count, accumulate: true, a, ga, b, gb)
        } else {
            mix2Loop(out, count, accumulate: false, a, ga, b, gb)
        }
    }

    @inline(__always)
    private static func mix2Loop(
        _ out: UnsafeMutablePointer<Float>, _ count: Int, accumulate: Bool,
        _ a: UnsafePointer<Float>, _ ga: Float, _ b: UnsafePointer<Float>, _ gb: Float
    ) {
        let va = Vector(repeating: ga), vb = Vector(repeating: gb)
        var n = 0
        while n + 8 <= count {
            var acc = load(a, n) * va + load(b, n) * vb
            if accumulate { acc = load(out, n) + acc }
            store(acc, out, n)
            n += 8
        }
        while n < count {
            var acc = a[n] * ga + b[n] * gb
            if accumulate { acc = out[n] + acc }
            out[n] = acc
            n += 1
        }
    }

    /// out (=|+=) a*ga + b*gb + c*gc + d*gd: four sources per pass over the output.
    @inline(__always)
    static func mix4(
        _ out: UnsafeMutablePointer<Float>, _ count: Int, accumulate: Bool,
        _ a: UnsafePointer<Float>, _ ga: Float, _ b: UnsafePointer<Float>, _ gb: Float,
        _ c: UnsafePointer<Float>, _ gc: Float, _ d: UnsafePointer<Float>, _ gd: Float
    ) {
        // Two copies of the loop, each with a constant `accumulate`: a test inside the loop
        // makes LLVM split the SIMD8 accumulator and scalarise part of it.
        if accumulate {
            mix4Loop(out, count, accumulate: true, a, ga, b, gb, c, gc, d, gd)
        } else {
            mix4Loop(out, count, accumulate: false, a, ga, b, gb, c, gc, d, gd)
        }
    }

    @inline(__always)
    private static func mix4Loop(
        _ out: UnsafeMutablePointer<Float>, _ count: Int, accumulate: Bool,
        _ a: UnsafePointer<Float>, _ ga: Float, _ b: UnsafePointer<Float>, _ gb: Float,
        _ c: UnsafePointer<Float>, _ gc: Float, _ d: UnsafePointer<Float>, _ gd: Float
    ) {
        let va = Vector(repeating: ga), vb = Vector(repeating: gb)
        let vc = Vector(repeating: gc), vd = Vector(repeating: gd)
        var n = 0
        while n + 8 <= count {
            var acc = (load(a, n) * va + load(b, n) * vb) + (load(c, n) * vc + load(d, n) * vd)
            if accumulate { acc = load(out, n) + acc }
            store(acc, out, n)
            n += 8
        }
        while n < count {
            var acc = (a[n] * ga + b[n] * gb) + (c[n] * gc + d[n] * gd)
            if accumulate { acc = out[n] + acc }
            out[n] = acc
            n += 1
        }
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
    /// The largest and smallest sample and the sum of the squares of `count` samples: what a
    /// level meter needs (the peak is max(largest, -smallest)). Four SIMD8 accumulators, so the
    /// additions do not wait on each other. A NaN sample is skipped by the largest and smallest
    /// (the comparisons are false) and makes the sum NaN.
    @inline(__always)
    static func level(_ a: UnsafePointer<Float>, _ count: Int) -> (largest: Float, smallest: Float, squares: Float) {
        var hi0 = Vector(), hi1 = Vector(), hi2 = Vector(), hi3 = Vector()
        var lo0 = Vector(), lo1 = Vector(), lo2 = Vector(), lo3 = Vector()
        var sq0 = Vector(), sq1 = Vector(), sq2 = Vector(), sq3 = Vector()
        var n = 0
        while n + 32 <= count {
            let x0 = load(a, n), x1 = load(a, n + 8), x2 = load(a, n + 16), x3 = load(a, n + 24)
            hi0 = hi0.replacing(with: x0, where: x0 .> hi0)
            hi1 = hi1.replacing(with: x1, where: x1 .> hi1)
            hi2 = hi2.replacing(with: x2, where: x2 .> hi2)
            hi3 = hi3.replacing(with: x3, where: x3 .> hi3)
            lo0 = lo0.replacing(with: x0, where: x0 .< lo0)
            lo1 = lo1.replacing(with: x1, where: x1 .< lo1)
            lo2 = lo2.replacing(with: x2, where: x2 .< lo2)
            lo3 = lo3.replacing(with: x3, where: x3 .< lo3)
            sq0 += x0 * x0
            sq1 += x1 * x1
            sq2 += x2 * x2
            sq3 += x3 * x3
            n += 32
        }
        while n + 8 <= count {
            let x = load(a, n)
            hi0 = hi0.replacing(with: x, where: x .> hi0)
            lo0 = lo0.replacing(with: x, where: x .< lo0)
            sq0 += x * x
            n += 8
        }
        let hi = hi0.replacing(with: hi1, where: hi1 .> hi0), hj = hi2.replacing(with: hi3, where: hi3 .> hi2)
        let lo = lo0.replacing(with: lo1, where: lo1 .< lo0), lj = lo2.replacing(with: lo3, where: lo3 .< lo2)
        var largest = hi.replacing(with: hj, where: hj .> hi).max()
        var smallest = lo.replacing(with: lj, where: lj .< lo).min()
        var squares = ((sq0 + sq1) + (sq2 + sq3)).sum()
        while n < count {
            let x = a[n]
            if x > largest { largest = x }
            if x < smallest { smallest = x }
            squares += x * x
            n += 1
        }
        return (largest, smallest, squares)
    }
}
