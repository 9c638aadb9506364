// crosspoint-bench: Crosspoint's render kernel beside OpenBLAS `cblas_sgemm` (one thread) and
// `memcpy`, on the same buffers, for a few matrix shapes and block sizes.
//
//     crosspoint-bench [--quick] [--filter SHAPE]... [--frames 64,256,1024] [--pad FLOATS] [--checksum]
//     crosspoint-bench --levels [--quick] [--filter SHAPE]... [--frames 256]
//     crosspoint-bench --self-check
//
// Each cell is the median, over several batches, of the time per block; each batch repeats
// the operation enough times to last a few milliseconds, and the contenders' batches are
// interleaved so drift on a shared machine hits them alike. The matrix is set with a zero
// ramp and a few blocks are rendered before timing, so the steady state is timed.
//
// The comparison: outputs[M x F] = Cᵀ[M x N] · inputs[N x F], row-major, where C is the N x M
// cross-point matrix (one row per input), the inputs are N contiguous channels of F frames and
// the outputs M contiguous channels of F frames. Crosspoint gets one pointer per channel into
// those same blocks; sgemm gets the blocks themselves; memcpy copies M*F floats into the
// output block in one call, and "memcpy×M" copies them channel by channel (M calls of F
// floats, from M source channels): the floor for a routing that writes M separate buffers.
//
// With --levels it times the cost of metering instead: the render alone, the render with the
// level meter off (the one atomic load the node's data thread makes while nobody watches),
// and with it on (every port measured, banks switched every eighth block as a 50 ms
// collection would at 256 frames), batches interleaved, side by side.
//
// sgemm runs the kernel OpenBLAS picked at load, unless that is a pre-AVX fallback on a CPU
// with AVX: then the benchmark restarts itself with the best kernel the CPU's flags allow
// (openBLASCoreChoice in Support.swift; --self-check checks it) and the header says so.

import COpenBLAS
import CrosspointCore
import CrosspointTestSupport
import Glibc

// MARK: Options

struct Options {
    var quick = false
    var filters: [String] = []
    var frameCounts = [64, 256, 1024]
    var pad = 0
    var checksum = false
    var levels = false
    var midi = false
    var delays = false
    var ducking = false
    var scenes = false
    var kernel = KernelVersion.default
    var selfCheck = false

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var i = 0
        func value(_ flag: String) -> String {
            i += 1
            guard i < arguments.count else { fail("\(flag) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            let a = arguments[i]
            switch a {
            case "--quick", "-q": options.quick = true
            case "--filter", "-f": options.filters.append(value(a).lowercased())
            case "--frames":
                let list = value(a).split(separator: ",").compactMap { Int($0) }
                guard !list.isEmpty, list.allSatisfy({ (1...maximumFrameCount).contains($0) }) else {
                    fail("--frames takes a comma-separated list of 1...\(maximumFrameCount)")
                }
                options.frameCounts = list
            case "--pad":
                guard let pad = Int(value(a)), (0...4096).contains(pad) else { fail("--pad takes 0...4096 floats") }
                options.pad = pad
            case "--checksum": options.checksum = true
            case "--kernel":
                let name = value(a)
                guard let version = KernelVersion(named: name) else {
                    fail("this CPU runs the kernel versions \(KernelVersion.available.map(\.name).joined(separator: ", ")), not '\(name)'")
                }
                options.kernel = version
            case "--levels": options.levels = true
            case "--midi": options.midi = true
            case "--delays": options.delays = true
            case "--ducking": options.ducking = true
            case "--scenes": options.scenes = true
            case "--self-check": options.selfCheck = true
            case "--help", "-h":
                print("""
                    usage: crosspoint-bench [--quick] [--filter SHAPE]... [--frames 64,256,1024] [--pad FLOATS]
                                            [--checksum] [--levels] [--midi] [--delays] [--ducking] [--scenes] [--kernel NAME]
                           crosspoint-bench --self-check
                      --quick           fewer, shorter batches (about 6x faster, noisier)
                      --filter SHAPE    only shapes whose name contains SHAPE (e.g. 64x64, identity,
                                        "256x256 dense"); repeatable
                      --frames LIST     block sizes to time (default 64,256,1024)
                      --pad FLOATS      gap between channels (default 0: the channels of a block are
                                        back to back, the exact row-major matrices sgemm is given;
                                        sgemm's leading dimensions grow to match)
                      --checksum        also print, per shape, a hash of the bits of Crosspoint's
                                        output (all block sizes): equal hashes from two builds mean
                                        bit-identical output, e.g. before and after a kernel change
                      --levels          time metering instead: render alone, meter off, meter on
                                        (default shapes 64x64 dense and 256x256 dense)
                      --midi            time MIDI control's data-thread work (an event, a feedback
                                        message) beside an 8x8 render of 64 frames
                      --delays          time output delays: every output delayed, and cross-fading,
                                        beside the same render without delays
                      --ducking         time ducking rules: one and four rules at their depth, beside
                                        the same render without rules
                      --scenes          time a scene moving: the render while every cross-point
                                        glides, and a step on the main loop, beside a steady render
                      --kernel NAME     the mixing kernel's version (default: the one chosen at load,
                                        the best this CPU runs: \(KernelVersion.default); this CPU runs
                                        \(KernelVersion.available.map(\.name).joined(separator: ", ")))
                      --self-check      check the choice of OpenBLAS kernel (below) on made-up CPUs, and exit

                    sgemm runs the kernel OpenBLAS picks when it is loaded (the `openblas:` line names it),
                    unless OpenBLAS fell back to a pre-AVX kernel (Prescott, Core2, ...) on a CPU with AVX,
                    as 0.3.21 does on CPUs it does not know: then the benchmark restarts itself with
                    OPENBLAS_CORETYPE set to the best kernel the CPU's flags allow (Cooperlake, SkylakeX,
                    Haswell or Sandybridge) and says so. An OPENBLAS_CORETYPE you set is kept.
                    """)
                exit(0)
            default:
                if a.hasPrefix("--filter=") {
                    options.filters.append(String(a.dropFirst("--filter=".count)).lowercased())
                } else {
                    fail("unknown argument '\(a)' (try --help)")
                }
            }
            i += 1
        }
        return options
    }
}

func fail(_ message: String) -> Never {
    var text = "crosspoint-bench: \(message)\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

// MARK: Shapes

enum MatrixKind: String {
    case dense, identity, channelMap = "channel-map"
}

struct Shape {
    let inputs: Int
    let outputs: Int
    let kind: MatrixKind
    var name: String { "\(inputs)x\(outputs) \(kind.rawValue)" }

    /// One row per input, one gain per output.
    func rows(using rng: inout SplitMix64) -> [[Double]] {
        var rows = [[Double]](repeating: [Double](repeating: 0, count: outputs), count: inputs)
        switch kind {
        case .dense:
            // Every cross-point non-zero and not 1, so no copy shortcut applies.
            for i in 0..<inputs {
                for j in 0..<outputs {
                    let magnitude = Double.random(in: 0.1...0.9, using: &rng)
                    rows[i][j] = Bool.random(using: &rng) ? magnitude : -magnitude
                }
            }
        case .identity:
            for k in 0..<min(inputs, outputs) { rows[k][k] = 1 }
        case .channelMap:
            // A seeded permutation of the inputs onto the outputs, with no fixed point.
            precondition(inputs == outputs)
            var permutation = Array(0..<outputs)
            repeat { permutation.shuffle(using: &rng) } while zip(permutation, 0...).contains { $0 == $1 }
            for i in 0..<inputs { rows[i][permutation[i]] = 1 }
        }
        return rows
    }
}

let allShapes = [
    Shape(inputs: 2, outputs: 1, kind: .dense),
    Shape(inputs: 2, outputs: 2, kind: .dense),
    Shape(inputs: 8, outputs: 8, kind: .dense),
    Shape(inputs: 64, outputs: 64, kind: .dense),
    Shape(inputs: 64, outputs: 64, kind: .identity),
    Shape(inputs: 64, outputs: 64, kind: .channelMap),
    Shape(inputs: 256, outputs: 256, kind: .dense),
    Shape(inputs: 256, outputs: 256, kind: .identity),
]

// MARK: Workloads

protocol Workload {
    mutating func run()
}

struct CrosspointRender: Workload {
    var renderer: MatrixRenderer
    let frames: Int
    let inputs: UnsafeBufferPointer<UnsafePointer<Float>?>
    let outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>

    @inline(__always)
    mutating func run() {
        renderer.render(frameCount: frames, inputs: inputs, outputs: outputs)
    }
}

struct BLASProduct: Workload {
    let m: blasint, n: blasint, frames: blasint, stride: blasint
    let a: UnsafePointer<Float>  // M x N, row-major: Cᵀ
    let b: UnsafePointer<Float>  // N x F, row-major: the inputs
    let c: UnsafeMutablePointer<Float>  // M x F, row-major: the outputs

    @inline(__always)
    func run() {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, frames, n, 1, a, n, b, stride, 0, c, stride)
    }
}

struct MemoryCopy: Workload {
    let destination: UnsafeMutableRawPointer
    let source: UnsafeRawPointer
    let bytes: Int

    @inline(__always)
    func run() {
        memcpy(destination, source, bytes)
    }
}

struct ChannelCopy: Workload {
    let destinations: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>
    let source: UnsafePointer<Float>
    let stride: Int
    let frames: Int

    @inline(__always)
    func run() {
        for j in 0..<destinations.count {
            memcpy(destinations[j]!, source + j * stride, frames * MemoryLayout<Float>.stride)
        }
    }
}

// MARK: Timing

@inline(never)
func timeBatch<W: Workload>(_ work: inout W, iterations: Int) -> UInt64 {
    let start = monotonicNanoseconds()
    for _ in 0..<iterations { work.run() }
    return monotonicNanoseconds() &- start
}

/// Iterations for one batch to last about `batchNanoseconds` (runs the work meanwhile, which
/// doubles as warm-up).
func calibrate<W: Workload>(_ work: inout W, batchNanoseconds: UInt64) -> Int {
    var iterations = 1
    while true {
        let elapsed = timeBatch(&work, iterations: iterations)
        if elapsed >= batchNanoseconds / 4 || iterations >= 1 << 28 {
            let scaled = Double(iterations) * Double(batchNanoseconds) / Double(max(elapsed, 1))
            return max(1, Int(scaled.rounded()))
        }
        iterations *= elapsed < batchNanoseconds / 64 ? 8 : 2
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

struct CellResult {
    var crosspoint: Double
    var sgemm: Double
    var memcpy: Double
    var channelMemcpy: Double
}

/// Median ns per block of each contender, batches interleaved.
func measure<A: Workload, B: Workload, C: Workload, D: Workload>(
    _ a: inout A, _ b: inout B, _ c: inout C, _ d: inout D, batches: Int, batchNanoseconds: UInt64
) -> CellResult {
    let na = calibrate(&a, batchNanoseconds: batchNanoseconds)
    let nb = calibrate(&b, batchNanoseconds: batchNanoseconds)
    let nc = calibrate(&c, batchNanoseconds: batchNanoseconds)
    let nd = calibrate(&d, batchNanoseconds: batchNanoseconds)
    var ta: [Double] = [], tb: [Double] = [], tc: [Double] = [], td: [Double] = []
    ta.reserveCapacity(batches)
    tb.reserveCapacity(batches)
    tc.reserveCapacity(batches)
    td.reserveCapacity(batches)
    for _ in 0..<batches {
        ta.append(Double(timeBatch(&a, iterations: na)) / Double(na))
        tb.append(Double(timeBatch(&b, iterations: nb)) / Double(nb))
        tc.append(Double(timeBatch(&c, iterations: nc)) / Double(nc))
        td.append(Double(timeBatch(&d, iterations: nd)) / Double(nd))
    }
    return CellResult(crosspoint: median(ta), sgemm: median(tb), memcpy: median(tc), channelMemcpy: median(td))
}

// MARK: One shape

struct Row {
    let shape: String
    let frames: Int
    let result: CellResult
    /// On the shape's first row: the largest |crosspoint - sgemm| and the largest |sgemm| output.
    let check: (difference: Double, magnitude: Double)?
    /// On the shape's first row: FNV-1a over the bits of every output sample of every block size.
    var outputHash: UInt64 = 0
}

func benchmark(_ shape: Shape, frameCounts: [Int], pad: Int, batches: Int, batchNanoseconds: UInt64,
               kernel: KernelVersion) throws -> [Row] {
    let n = shape.inputs, m = shape.outputs
    let maxStride = frameCounts.max()! + pad
    var rng = SplitMix64(seed: 0xC055_9017 &+ UInt64(n * 1000 + m) &+ UInt64(shape.kind == .channelMap ? 1 : 0))
    let rows = shape.rows(using: &rng)

    let mixer = MatrixMixer(try Mixer(inputs: n, outputs: m), kernel: kernel)
    try mixer.update { mixer throws(CrosspointError) in
        try mixer.setRamp(milliseconds: 0)
        try mixer.setMatrix(rows: rows)
    }

    // Cᵀ for sgemm, from the gains Crosspoint actually applies.
    let a = allocateFloats(m * n)
    for j in 0..<m {
        for i in 0..<n { a[j * n + i] = mixer.mixer.effectiveGain(input: i, output: j) }
    }
    let inputBlock = allocateFloats(n * maxStride)
    for k in 0..<(n * maxStride) { inputBlock[k] = Float.random(in: -1...1, using: &rng) }
    let outputBlock = allocateFloats(m * maxStride)
    let copySource = allocateFloats(m * maxStride)
    for k in 0..<(m * maxStride) { copySource[k] = Float.random(in: -1...1, using: &rng) }
    let check = allocateFloats(m * maxStride)
    let inputPointers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: n)
    let outputPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: m)
    defer {
        for p in [a, inputBlock, outputBlock, copySource, check] { freeFloats(p) }
        inputPointers.deallocate()
        outputPointers.deallocate()
    }

    var result: [Row] = []
    var maxDifference = 0.0, maxMagnitude = 0.0
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for frames in frameCounts {
        // Channels of `frames` floats, `stride` apart: the row-major matrices sgemm sees.
        let stride = frames + pad
        for i in 0..<n { inputPointers[i] = UnsafePointer(inputBlock + i * stride) }
        for j in 0..<m { outputPointers[j] = outputBlock + j * stride }
        var render = CrosspointRender(
            renderer: mixer.renderer, frames: frames,
            inputs: UnsafeBufferPointer(start: inputPointers, count: n),
            outputs: UnsafeBufferPointer(start: outputPointers, count: m))
        var blas = BLASProduct(
            m: blasint(m), n: blasint(n), frames: blasint(frames), stride: blasint(stride),
            a: a, b: inputBlock, c: outputBlock)
        var copy = MemoryCopy(
            destination: UnsafeMutableRawPointer(outputBlock), source: UnsafeRawPointer(copySource),
            bytes: m * frames * MemoryLayout<Float>.stride)

        // Install the plan and reach the steady state.
        for _ in 0..<4 { render.run() }

        // Honesty check: the same product both ways.
        outputBlock.update(repeating: .nan, count: m * stride)
        render.run()
        check.update(from: outputBlock, count: m * stride)
        for j in 0..<m {
            for k in (j * stride)..<(j * stride + frames) {
                hash = (hash ^ UInt64(check[k].bitPattern)) &* 0x100_0000_01B3
            }
        }
        outputBlock.update(repeating: .nan, count: m * stride)
        blas.run()
        for j in 0..<m {
            for k in (j * stride)..<(j * stride + frames) {
                let d = Double(abs(check[k] - outputBlock[k]))
                maxDifference = d.isNaN ? .infinity : max(maxDifference, d)
                maxMagnitude = max(maxMagnitude, Double(abs(outputBlock[k])))
            }
        }

        var channelCopy = ChannelCopy(
            destinations: UnsafeBufferPointer(start: outputPointers, count: m), source: copySource,
            stride: stride, frames: frames)
        let cell = measure(&render, &blas, &copy, &channelCopy, batches: batches, batchNanoseconds: batchNanoseconds)
        result.append(Row(shape: shape.name, frames: frames, result: cell, check: nil))
    }
    if !result.isEmpty {
        let first = result[0]
        result[0] = Row(
            shape: first.shape, frames: first.frames, result: first.result,
            check: (maxDifference, maxMagnitude), outputHash: hash)
    }
    return result
}

// MARK: Metering

/// A render with what the node's data thread does for levels: the atomic check, and while
/// watched the measuring of every port (processCycle); every eighth block the control side asks for a
/// switch of banks (a bare request, as `LevelMeter.collect` makes, without its copying, which
/// runs on the main loop).
struct MeteredRender: Workload {
    var renderer: MatrixRenderer
    let meter: LevelMeter
    let tap: LevelTap
    let frames: Int
    let inputs: UnsafeBufferPointer<UnsafePointer<Float>?>
    let outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>
    var blocks = 0

    @inline(__always)
    mutating func run() {
        // As processCycle does it (RealTime.swift).
        let watched = tap.isWatched
        if watched { tap.beginBlock(frames: frames, inputs: inputs) }
        renderer.render(frameCount: frames, inputs: inputs, outputs: outputs, levels: watched ? tap : nil)
        blocks &+= 1
        if blocks & 7 == 0 { _ = meter.take { _ in 0 } }
    }
}

/// The measuring alone: every port of a block already rendered, as the meter does it.
struct MeasureOnly: Workload {
    let tap: LevelTap
    let frames: Int
    let inputs: UnsafeBufferPointer<UnsafePointer<Float>?>
    let outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>

    @inline(__always)
    func run() { tap.measure(frames: frames, inputs: inputs, outputs: outputs) }
}

struct LevelsRow {
    let shape: String
    let frames: Int
    /// Median ns per block.
    let render: Double
    let off: Double
    let on: Double
    let measure: Double
    /// Medians of the ratios of batches timed one right after the other: on a shared machine
    /// these move much less than the ratio of two medians.
    let offOverRender: Double
    let onOverOff: Double
}

/// Times the four contenders in interleaved batches; medians of the times and of the
/// ratios of neighbouring batches.
func measureLevels<A: Workload, B: Workload, C: Workload, D: Workload>(
    _ render: inout A, _ off: inout B, _ on: inout C, _ only: inout D, batches: Int, batchNanoseconds: UInt64
) -> (render: Double, off: Double, on: Double, measure: Double, offOverRender: Double, onOverOff: Double) {
    let na = calibrate(&render, batchNanoseconds: batchNanoseconds)
    let nb = calibrate(&off, batchNanoseconds: batchNanoseconds)
    let nc = calibrate(&on, batchNanoseconds: batchNanoseconds)
    let nd = calibrate(&only, batchNanoseconds: batchNanoseconds)
    var ta: [Double] = [], tb: [Double] = [], tc: [Double] = [], td: [Double] = []
    var offRatios: [Double] = [], onRatios: [Double] = []
    for k in 0..<batches {
        // Alternate the order, so that neither contender always runs first.
        let a: Double, b: Double, c: Double
        if k % 2 == 0 {
            a = Double(timeBatch(&render, iterations: na)) / Double(na)
            b = Double(timeBatch(&off, iterations: nb)) / Double(nb)
            c = Double(timeBatch(&on, iterations: nc)) / Double(nc)
        } else {
            c = Double(timeBatch(&on, iterations: nc)) / Double(nc)
            b = Double(timeBatch(&off, iterations: nb)) / Double(nb)
            a = Double(timeBatch(&render, iterations: na)) / Double(na)
        }
        ta.append(a)
        tb.append(b)
        tc.append(c)
        td.append(Double(timeBatch(&only, iterations: nd)) / Double(nd))
        offRatios.append(b / a)
        onRatios.append(c / b)
    }
    return (median(ta), median(tb), median(tc), median(td), median(offRatios), median(onRatios))
}

func benchmarkLevels(_ shape: Shape, frameCounts: [Int], batches: Int, batchNanoseconds: UInt64, kernel: KernelVersion)
    throws -> [LevelsRow]
{
    let n = shape.inputs, m = shape.outputs
    var rng = SplitMix64(seed: 0xC055_9017 &+ UInt64(n * 1000 + m) &+ UInt64(shape.kind == .channelMap ? 1 : 0))
    let rows = shape.rows(using: &rng)
    // One engine (steady: no ramp) and the same buffers for all three contenders.
    let mixer = MatrixMixer(try Mixer(inputs: n, outputs: m), kernel: kernel)
    try mixer.update { mixer throws(CrosspointError) in
        try mixer.setRamp(milliseconds: 0)
        try mixer.setMatrix(rows: rows)
    }
    let stride = frameCounts.max()!
    let inputBlock = allocateFloats(n * stride)
    for k in 0..<(n * stride) { inputBlock[k] = Float.random(in: -1...1, using: &rng) }
    let outputBlock = allocateFloats(m * stride)
    let inputPointers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: n)
    let outputPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: m)
    defer {
        freeFloats(inputBlock)
        freeFloats(outputBlock)
        inputPointers.deallocate()
        outputPointers.deallocate()
    }
    let off = LevelMeter(), on = LevelMeter()
    on.start()
    var result: [LevelsRow] = []
    for frames in frameCounts {
        for i in 0..<n { inputPointers[i] = UnsafePointer(inputBlock + i * frames) }
        for j in 0..<m { outputPointers[j] = outputBlock + j * frames }
        let ins = UnsafeBufferPointer(start: inputPointers, count: n)
        let outs = UnsafeBufferPointer(start: outputPointers, count: m)
        var render = CrosspointRender(renderer: mixer.renderer, frames: frames, inputs: ins, outputs: outs)
        var meterOff = MeteredRender(renderer: mixer.renderer, meter: off, tap: off.tap, frames: frames, inputs: ins, outputs: outs)
        var meterOn = MeteredRender(renderer: mixer.renderer, meter: on, tap: on.tap, frames: frames, inputs: ins, outputs: outs)
        var measureOnly = MeasureOnly(tap: on.tap, frames: frames, inputs: ins, outputs: outs)
        for _ in 0..<4 {
            render.run()
            meterOff.run()
            meterOn.run()
        }
        let t = measureLevels(&render, &meterOff, &meterOn, &measureOnly, batches: batches, batchNanoseconds: batchNanoseconds)
        result.append(LevelsRow(shape: shape.name, frames: frames, render: t.render, off: t.off, on: t.on, measure: t.measure,
                                offOverRender: t.offOverRender, onOverOff: t.onOverOff))
    }
    return result
}

func runLevels(_ options: Options, machine: MachineInfo, batches: Int, batchNanoseconds: UInt64) {
    let shapes = allShapes.filter { shape in
        options.filters.isEmpty ? shape.kind == .dense && shape.inputs >= 64
            : options.filters.contains { shape.name.lowercased().contains($0) }
    }
    guard !shapes.isEmpty else { fail("no shape matches --filter \(options.filters.joined(separator: ", "))") }
    print("crosspoint-bench --levels: the cost of metering (render alone, meter off, meter on)")
    print("date:    \(machine.date)")
    print("cpu:     \(machine.cpuModel), \(machine.onlineCores) cores online, flags: \(machine.vectorFlags.joined(separator: " "))")
    print("build:   \(buildKind); \(options.quick ? "quick: " : "")\(batches) batches of ~\(batchNanoseconds / 1_000_000) ms per cell and contender")
    print("")
    print("Time per block (median). off = render + the atomic check the data thread makes while nobody")
    print("watches; on = render + every input and output measured, banks switched every 8th block;")
    print("measure only = the measuring of every port of a rendered block, alone. Times are medians;")
    print("off/rndr and on/off are medians of the ratios of batches timed one right after the other.")
    print("")
    let widths = [18, 6, 11, 11, 11, 8, 8, 12]
    func line(_ cells: [String]) -> String {
        var s = "|"
        for (k, cell) in cells.enumerated() { s += " " + pad(cell, widths[k], right: k > 0) + " |" }
        return s
    }
    print(line(["shape", "frames", "render", "meter off", "meter on", "off/rndr", "on/off", "measure only"]))
    print("|" + widths.enumerated().map { k, w in String(repeating: "-", count: k > 0 ? w + 1 : w + 2) + (k > 0 ? ":" : "") }
        .joined(separator: "|") + "|")
    warmUp(nanoseconds: options.quick ? 100_000_000 : 300_000_000)
    var verdicts: [String] = []
    for shape in shapes {
        let rows: [LevelsRow]
        do {
            rows = try benchmarkLevels(shape, frameCounts: options.frameCounts, batches: batches, batchNanoseconds: batchNanoseconds,
                                           kernel: options.kernel)
        } catch {
            fail("\(shape.name): \(error)")
        }
        for row in rows {
            print(line([row.shape, "\(row.frames)", formatTime(row.render), formatTime(row.off), formatTime(row.on),
                        format("%.3fx", row.offOverRender), format("%.3fx", row.onOverOff), formatTime(row.measure)]))
            fflush(nil)
            if row.shape == "64x64 dense" && row.frames == 256 {
                let overhead = (row.onOverOff - 1) * 100
                verdicts.append(format("64x64 dense @256: metering on adds %.1f%% (target <= 5%%): ", overhead) + (overhead <= 5 ? "met" : "MISSED"))
            }
        }
    }
    if !verdicts.isEmpty {
        print("")
        print("Targets:")
        for v in verdicts { print("  " + v) }
    }
}

#if DEBUG
let buildKind = "debug (numbers meaningless: build with -c release)"
#else
let buildKind = "release"
#endif

// MARK: Main

/// Keeps the core busy for a while before the first measurement, so the first cells are not
/// timed while the clock is still ramping up (they came out up to 2x slow without this).
func warmUp(nanoseconds: UInt64) {
    let count = 4096
    let a = allocateFloats(count), b = allocateFloats(count)
    defer { freeFloats(a); freeFloats(b) }
    let start = monotonicNanoseconds()
    while monotonicNanoseconds() &- start < nanoseconds {
        for _ in 0..<64 {
            memcpy(b, a, count * MemoryLayout<Float>.stride)
            a[0] += b[count - 1]
        }
    }
}

@main
struct CrosspointBench {
    static func main() {
        // OpenBLAS reads OPENBLAS_NUM_THREADS when it is loaded, before main, and starts its worker
        // threads then; openblas_set_num_threads(1) later stops it using them, but they stay
        // alive (and on some builds spin). So without the variable, set it and start over.
        // OPENBLAS_CORETYPE is read at load too: when OpenBLAS fell back to a pre-AVX kernel on a
        // CPU with AVX (one it does not know), ask for the best kernel the CPU's flags allow,
        // in the same restart, and pass on what OpenBLAS had picked (openBLASCoreChoice). A
        // user's OPENBLAS_CORETYPE is kept.
        let environment = { (name: String) in getenv(name).map { String(cString: $0) } }
        var restart = false
        if environment("OPENBLAS_NUM_THREADS") != "1" {
            setenv("OPENBLAS_NUM_THREADS", "1", 1)
            restart = true
        }
        var blasOrigin = BLASCoreOrigin.openBLAS
        if let asked = environment("OPENBLAS_CORETYPE") {
            if let picked = environment(openBLASPickedVariable) {
                blasOrigin = .chosen(picked: picked, asked: asked)
                unsetenv(openBLASPickedVariable)
            } else {
                blasOrigin = .user(asked)
            }
        } else if let picked = openblas_get_corename().map({ String(cString: $0) }),
                  // Only a DYNAMIC_ARCH build has kernels to choose from.
                  openblas_get_config().map({ String(cString: $0).contains("DYNAMIC_ARCH") }) == true,
                  let wanted = openBLASCoreChoice(picked: picked, cpuFlags: CPUInfo.read().flags)
        {
            setenv("OPENBLAS_CORETYPE", wanted, 1)
            setenv(openBLASPickedVariable, picked, 1)
            blasOrigin = .unapplied(picked: picked, wanted: wanted)
            restart = true
        }
        if restart {
            execv("/proc/self/exe", CommandLine.unsafeArgv)
            // exec failed: carry on with the one-thread setting below, and OpenBLAS's own kernel.
            unsetenv(openBLASPickedVariable)
            if case .unapplied = blasOrigin { unsetenv("OPENBLAS_CORETYPE") }
        }
        openblas_set_num_threads(1)

        let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
        if options.selfCheck { exit(selfCheck() ? 0 : 1) }
        let shapes = allShapes.filter { shape in
            options.filters.isEmpty || options.filters.contains { shape.name.lowercased().contains($0) }
        }
        guard !shapes.isEmpty else { fail("no shape matches --filter \(options.filters.joined(separator: ", "))") }
        let batches = options.quick ? 3 : 9
        let batchNanoseconds: UInt64 = options.quick ? 5_000_000 : 10_000_000

        let machine = MachineInfo.current()
        if options.midi {
            runMIDI(quick: options.quick, machine: machine)
            return
        }
        if options.delays {
            runDelays(quick: options.quick, machine: machine)
            return
        }
        if options.ducking {
            runDucking(quick: options.quick, machine: machine)
            return
        }
        if options.scenes {
            runScenes(quick: options.quick, machine: machine)
            return
        }
        if options.levels {
            var levelsOptions = options
            if !CommandLine.arguments.contains("--frames") { levelsOptions.frameCounts = [256] }
            // More, shorter batches than the main table: the ratios are what matter here.
            runLevels(levelsOptions, machine: machine, batches: options.quick ? 11 : 41,
                      batchNanoseconds: options.quick ? 2_000_000 : 4_000_000)
            return
        }
        #if DEBUG
        let build = "debug (numbers meaningless: build with -c release)"
        #else
        let build = "release"
        #endif
        print("crosspoint-bench: Crosspoint render vs OpenBLAS cblas_sgemm vs memcpy")
        print("date:    \(machine.date)")
        print("cpu:     \(machine.cpuModel), \(machine.onlineCores) cores online, flags: \(machine.vectorFlags.joined(separator: " "))")
        print("openblas: \(machine.blasConfig) (\(describeBLASCore(machine.blasCore, origin: blasOrigin))), threads: \(machine.blasThreads) (process threads: \(machine.processThreads))")
        print("build:   \(build); \(options.quick ? "quick: " : "")median of \(batches) batches of ~\(batchNanoseconds / 1_000_000) ms per cell and contender")
        print("layout:  buffers 64-byte aligned; channel stride = frames" + (options.pad > 0 ? " + \(options.pad) floats" : " (back to back)"))
        print("kernel:  \(options.kernel) (chosen at load: \(KernelVersion.default); this CPU runs \(KernelVersion.available.map(\.name).joined(separator: ", ")))")
        print("")
        print("Time per block (median). outputs[M x F] = Cᵀ[M x N] · inputs[N x F]; memcpy copies M*F floats")
        print("in one call, memcpy×M in M calls of F floats (one per output channel).")
        print("max abs Δ = largest |crosspoint - sgemm| over every output sample of every block size;")
        print("max abs y = largest |output| (so max abs Δ / max abs y is the relative error).")
        print("")

        let header = [
            "shape", "frames", "crosspoint", "sgemm", "memcpy", "memcpy×M", "xp/sgemm", "xp/memcpy", "xp/memcpy×M",
            "max abs Δ", "max abs y",
        ]
        let widths = [18, 6, 11, 11, 11, 11, 8, 9, 11, 9, 9]
        func line(_ cells: [String]) -> String {
            var s = "|"
            for (k, cell) in cells.enumerated() { s += " " + pad(cell, widths[k], right: k > 0) + " |" }
            return s
        }
        print(line(header))
        print("|" + widths.enumerated().map { k, w in
            String(repeating: "-", count: k > 0 ? w + 1 : w + 2) + (k > 0 ? ":" : "")
        }.joined(separator: "|") + "|")

        warmUp(nanoseconds: options.quick ? 100_000_000 : 300_000_000)

        var all: [Row] = []
        for shape in shapes {
            let rows: [Row]
            do {
                rows = try benchmark(shape, frameCounts: options.frameCounts, pad: options.pad, batches: batches,
                                     batchNanoseconds: batchNanoseconds, kernel: options.kernel)
            } catch {
                fail("\(shape.name): \(error)")
            }
            for row in rows {
                let r = row.result
                print(line([
                    row.shape, "\(row.frames)", formatTime(r.crosspoint), formatTime(r.sgemm), formatTime(r.memcpy),
                    formatTime(r.channelMemcpy),
                    format("%.2fx", r.crosspoint / r.sgemm), format("%.2fx", r.crosspoint / r.memcpy),
                    format("%.2fx", r.crosspoint / r.channelMemcpy),
                    row.check.map { format("%.1e", $0.difference) } ?? "",
                    row.check.map { format("%.1f", $0.magnitude) } ?? "",
                ]))
                fflush(nil)  // rows as they come, even into a pipe
            }
            all += rows
        }

        if options.checksum {
            print("")
            print("Output hashes (FNV-1a of Crosspoint's output bits, all block sizes):")
            for row in all where row.check != nil {
                print("  " + pad(row.shape, 18) + format(" %016llx", row.outputHash))
            }
        }

        // The targets, where this run measured them: dense at or below single-thread sgemm
        // (1.25x at 64 frames), routings at a single memcpy's speed (1.25x at 64 frames, 1.10x
        // above).
        print("")
        var verdicts: [String] = []
        for row in all where row.shape.hasSuffix("dense") && row.shape.hasPrefix("64x64") || row.shape.hasPrefix("256x256 dense") {
            let ratio = row.result.crosspoint / row.result.sgemm, limit = row.frames <= 64 ? 1.25 : 1.0
            verdicts.append("\(row.shape) @\(row.frames): " + format("crosspoint/sgemm %.2fx (target <= %.2fx): ", ratio, limit)
                + (ratio <= limit ? "met" : "MISSED"))
        }
        for row in all where row.shape.hasSuffix("identity") || row.shape.hasSuffix("channel-map") {
            let ratio = row.result.crosspoint / row.result.memcpy, limit = row.frames <= 64 ? 1.25 : 1.10
            verdicts.append("\(row.shape) @\(row.frames): " + format("crosspoint/memcpy %.2fx (target <= %.2fx): ", ratio, limit)
                + (ratio <= limit ? "met" : "MISSED"))
        }
        for row in all {
            guard let check = row.check, !(check.difference <= 1e-5 * max(check.magnitude, 1)) else { continue }
            verdicts.append("\(row.shape): crosspoint and sgemm DISAGREE (max abs Δ \(check.difference))")
        }
        if !verdicts.isEmpty {
            print("Targets:")
            for v in verdicts { print("  " + v) }
        }
    }
}
