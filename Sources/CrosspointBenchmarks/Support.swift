// Plumbing for the benchmark: a monotonic clock, aligned buffers, a seeded generator,
// formatting and machine information. Glibc only, no Foundation.

import CrosspointCore
import CrosspointTestSupport
import COpenBLAS
import Glibc

// MARK: Clock

/// Nanoseconds on CLOCK_MONOTONIC.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

// MARK: Buffers

/// `count` floats, 64-byte aligned (a cache line, and enough for any vector width).
func allocateFloats(_ count: Int) -> UnsafeMutablePointer<Float> {
    let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * MemoryLayout<Float>.stride, alignment: 64)
    let p = raw.bindMemory(to: Float.self, capacity: max(count, 1))
    p.initialize(repeating: 0, count: max(count, 1))
    return p
}

func freeFloats(_ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).deallocate()
}

// MARK: Formatting

/// printf-style formatting through vsnprintf (numbers only; the format is trusted).
func format(_ spec: String, _ args: CVarArg...) -> String {
    withVaList(args) { va in
        var buffer = [CChar](repeating: 0, count: 256)
        _ = buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, spec, va) }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// A time per block: `850.3 ns`, `12.41 µs`, `1.204 ms`.
func formatTime(_ ns: Double) -> String {
    if ns < 1_000 { return format("%.1f ns", ns) }
    if ns < 1_000_000 { return format("%.2f µs", ns / 1_000) }
    return format("%.3f ms", ns / 1_000_000)
}

func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
    let n = s.count
    guard n < width else { return s }
    let fill = String(repeating: " ", count: width - n)
    return right ? fill + s : s + fill
}

// MARK: Machine

struct MachineInfo {
    var cpuModel = "unknown"
    var onlineCores = 0
    var vectorFlags: [String] = []
    var date = ""
    var blasCore = ""
    var blasConfig = ""
    var blasThreads = 0
    /// Threads in this process (1 unless OpenBLAS started workers).
    var processThreads = 0

    static func current() -> MachineInfo {
        var info = MachineInfo()
        info.onlineCores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        let cpu = CPUInfo.read()
        info.cpuModel = cpu.model
        info.vectorFlags = ["sse4_2", "avx", "avx2", "fma", "avx512f"].filter { cpu.flags.contains($0) }
        var t = time(nil)
        var tm = tm()
        localtime_r(&t, &tm)
        var buffer = [CChar](repeating: 0, count: 64)
        _ = buffer.withUnsafeMutableBufferPointer { strftime($0.baseAddress!, $0.count, "%Y-%m-%d %H:%M %Z", &tm) }
        info.date = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if let core = openblas_get_corename() { info.blasCore = String(cString: core) }
        if let config = openblas_get_config() { info.blasConfig = String(cString: config) }
        info.blasThreads = Int(openblas_get_num_threads())
        if let file = fopen("/proc/self/status", "r") {
            defer { fclose(file) }
            var line: UnsafeMutablePointer<CChar>? = nil
            var capacity = 0
            while getline(&line, &capacity, file) > 0, let l = line {
                let text = String(cString: l)
                if text.hasPrefix("Threads:") { info.processThreads = Int(text.dropFirst(8).trimmingCharacters()) ?? 0 }
            }
            free(line)
        }
        return info
    }
}

/// The first CPU's model name and flags in /proc/cpuinfo.
struct CPUInfo {
    var model = "unknown"
    var flags: Set<String> = []

    static func read() -> CPUInfo {
        var info = CPUInfo()
        guard let file = fopen("/proc/cpuinfo", "r") else { return info }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        var haveModel = false, haveFlags = false
        while !(haveModel && haveFlags), getline(&line, &capacity, file) > 0, let l = line {
            let text = String(cString: l)
            guard let colon = text.firstIndex(of: ":") else { continue }
            let key = text[..<colon].trimmingCharacters()
            let value = text[text.index(after: colon)...].trimmingCharacters()
            if !haveModel && key == "model name" {
                info.model = value
                haveModel = true
            } else if !haveFlags && key == "flags" {
                info.flags = Set(value.split(separator: " ").map(String.init))
                haveFlags = true
            }
        }
        free(line)
        return info
    }
}

// MARK: OpenBLAS's kernel

// OpenBLAS (DYNAMIC_ARCH, as Debian ships it) picks its kernel when it is loaded, from the
// CPU's family and model. A model it does not know gets a pre-AVX kernel: 0.3.21 runs
// Prescott (SSE3) on, for instance, an Intel Xeon with AVX-512 whose model postdates it, and
// its sgemm is then about 9x slower than the AVX-512 kernel the CPU runs. Measured against
// that, Crosspoint would look far better than it is. So when OpenBLAS picked a pre-AVX
// kernel on a CPU with AVX, the benchmark asks for the best kernel the CPU's flags allow
// (OPENBLAS_CORETYPE, read at load: the benchmark re-executes itself) and says so.

/// The x86-64 core types of OpenBLAS 0.3.21 (lowercased) whose kernels predate AVX: what it
/// falls back to on a CPU it does not know, and right only on a CPU without AVX.
let openBLASPreAVXCores: Set<String> = [
    "unknown", "katmai", "coppermine", "northwood", "prescott", "banias", "atom", "core2", "penryn",
    "dunnington", "nehalem", "athlon", "opteron", "opteron_sse3", "barcelona", "nano", "bobcat",
]

/// The AVX core types to choose from, best first, as OPENBLAS_CORETYPE spells them, with the
/// /proc/cpuinfo flags their kernels need. OpenBLAS 0.3.21 builds SkylakeX's kernels with
/// -march=skylake-avx512 and Cooperlake's with -march=cooperlake (so the compiler may use
/// BMI, LZCNT (`abm`), MOVBE and F16C as well as AVX-512 F/CD/BW/DQ/VL; Cooperlake adds
/// AVX512_BF16), Haswell's with -mavx2 and FMA3 assembly, Sandybridge's with AVX assembly.
/// OpenBLAS itself checks none of this when OPENBLAS_CORETYPE names a core: a kernel the CPU
/// lacks instructions for would crash. (0.3.21 does not take the name Cooperlake, an
/// off-by-one fixed in 0.3.22: it warns "Core not found" only with OPENBLAS_VERBOSE and
/// falls back to judging the CPU by its features, which gives Cooperlake on a CPU with
/// AVX512_BF16. The benchmark reports the core OpenBLAS ended up running either way.)
let openBLASAVXCores: [(name: String, flags: [String])] = {
    let sandybridge = ["avx"]
    let haswell = sandybridge + ["avx2", "fma"]
    let skylakeX = haswell + ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "bmi1", "bmi2", "abm", "movbe", "f16c"]
    return [
        ("Cooperlake", skylakeX + ["avx512_bf16"]),
        ("SkylakeX", skylakeX),
        ("Haswell", haswell),
        ("Sandybridge", sandybridge),
    ]
}()

/// The core type to ask OpenBLAS for, or nil to leave its own pick alone: nil when it picked
/// an AVX kernel (or one this list does not know) itself, or when the CPU has no AVX.
/// `picked` is `openblas_get_corename()`, `cpuFlags` the flags in /proc/cpuinfo.
func openBLASCoreChoice(picked: String, cpuFlags: Set<String>) -> String? {
    let name = picked.lowercased()
    guard openBLASPreAVXCores.contains(name) || name.contains("generic") else { return nil }
    // Linux spells it avx512_bf16; accept the spelling without the underscore too.
    let flags = cpuFlags.contains("avx512bf16") ? cpuFlags.union(["avx512_bf16"]) : cpuFlags
    return openBLASAVXCores.first { core in core.flags.allSatisfy(flags.contains) }?.name
}

/// How the kernel OpenBLAS runs came about.
enum BLASCoreOrigin: Equatable {
    /// OpenBLAS's own pick, left alone.
    case openBLAS
    /// OPENBLAS_CORETYPE as the user set it.
    case user(String)
    /// The benchmark asked for `asked` from the CPU's flags, where OpenBLAS had picked `picked`.
    case chosen(picked: String, asked: String)
    /// OpenBLAS picked `picked`, the CPU runs `wanted`, but re-executing to ask for it failed.
    case unapplied(picked: String, wanted: String)
}

/// The environment variable that carries OpenBLAS's own pick across the re-execution.
let openBLASPickedVariable = "CROSSPOINT_BENCH_OPENBLAS_PICKED"

/// `core Cooperlake, ...`: the kernel sgemm runs and where it came from, for the header.
func describeBLASCore(_ core: String, origin: BLASCoreOrigin) -> String {
    let same = { (a: String, b: String) in a.lowercased() == b.lowercased() }
    switch origin {
    case .openBLAS:
        return "core \(core), OpenBLAS's own pick"
    case .user(let asked):
        return same(core, asked)
            ? "core \(core), set by the user: OPENBLAS_CORETYPE=\(asked)"
            : "core \(core); the user's OPENBLAS_CORETYPE=\(asked) was not taken as such"
    case .chosen(let picked, let asked):
        return same(core, asked)
            ? "core \(core), chosen from the CPU's flags: OpenBLAS picked \(picked)"
            : "core \(core): asked for \(asked) from the CPU's flags, as OpenBLAS picked \(picked)"
    case .unapplied(_, let wanted):
        return "core \(core): OpenBLAS's generic fallback, though this CPU runs \(wanted) (re-executing to ask for it failed)"
    }
}

/// `crosspoint-bench --self-check`: the choice of OpenBLAS kernel on a few made-up CPUs, and
/// what it would be on this one. Returns whether every check passed.
func selfCheck() -> Bool {
    let sse: Set<String> = ["sse", "sse2", "ssse3", "sse4_1", "sse4_2", "popcnt"]
    let avx = sse.union(["avx"])
    let avx2 = avx.union(["avx2", "fma", "bmi1", "bmi2", "abm", "movbe", "f16c"])
    let avx512 = avx2.union(["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"])
    let cases: [(what: String, picked: String, flags: Set<String>, expected: String?)] = [
        ("unknown Xeon with AVX512_BF16", "Prescott", avx512.union(["avx512_bf16"]), "Cooperlake"),
        ("the same, flag spelled avx512bf16", "Prescott", avx512.union(["avx512bf16"]), "Cooperlake"),
        ("unknown Xeon with AVX-512", "Prescott", avx512, "SkylakeX"),
        ("AVX-512 without VL", "Prescott", avx512.subtracting(["avx512vl"]), "Haswell"),
        ("AVX-512 without MOVBE", "Prescott", avx512.subtracting(["movbe"]), "Haswell"),
        ("AVX2 and FMA", "Core2", avx2, "Haswell"),
        ("AVX2 without FMA", "Prescott", avx2.subtracting(["fma"]), "Sandybridge"),
        ("AVX only", "Katmai", avx, "Sandybridge"),
        ("Nehalem fallback with AVX2 (lowercase name)", "nehalem", avx2, "Haswell"),
        ("a generic-named kernel", "generic", avx2, "Haswell"),
        ("no AVX: Nehalem is right", "Nehalem", sse, nil),
        ("no AVX: Prescott is right", "Prescott", ["sse", "sse2", "sse3"], nil),
        ("OpenBLAS picked Haswell on AVX-512: left alone", "Haswell", avx512.union(["avx512_bf16"]), nil),
        ("OpenBLAS picked Zen: left alone", "Zen", avx2, nil),
        ("OpenBLAS picked Cooperlake: left alone", "Cooperlake", avx512.union(["avx512_bf16"]), nil),
        ("OpenBLAS picked SkylakeX: left alone", "SkylakeX", avx512, nil),
        ("a core name this list does not know: left alone", "SapphireRapids", avx512, nil),
    ]
    var passed = true
    print("OpenBLAS kernel choice (OpenBLAS's pick, CPU flags -> the core asked for):")
    for c in cases {
        let got = openBLASCoreChoice(picked: c.picked, cpuFlags: c.flags)
        let ok = got == c.expected
        passed = passed && ok
        print("  \(ok ? "ok  " : "FAIL") \(pad(c.what, 50)) \(pad(c.picked, 14)) -> \(got ?? "left alone")"
              + (ok ? "" : " (expected \(c.expected ?? "left alone"))"))
    }
    let descriptions: [(BLASCoreOrigin, String, String)] = [
        (.chosen(picked: "Prescott", asked: "SkylakeX"), "SkylakeX", "core SkylakeX, chosen from the CPU's flags: OpenBLAS picked Prescott"),
        (.user("prescott"), "Prescott", "core Prescott, set by the user: OPENBLAS_CORETYPE=prescott"),
        (.openBLAS, "Zen", "core Zen, OpenBLAS's own pick"),
    ]
    for (origin, core, expected) in descriptions {
        let got = describeBLASCore(core, origin: origin)
        let ok = got == expected
        passed = passed && ok
        print("  \(ok ? "ok  " : "FAIL") header: \(got)" + (ok ? "" : " (expected \(expected))"))
    }
    let cpu = CPUInfo.read()
    let here = openblas_get_corename().map { String(cString: $0) } ?? "?"
    let ifPrescott = openBLASCoreChoice(picked: "Prescott", cpuFlags: cpu.flags) ?? "Prescott (no AVX)"
    print("This CPU (\(cpu.model)): had OpenBLAS fallen back to Prescott, the benchmark would ask for \(ifPrescott);")
    print("  OpenBLAS runs \(here) in this process" + (getenv("OPENBLAS_CORETYPE").map { " (OPENBLAS_CORETYPE=\(String(cString: $0)))" } ?? ""))
    print(passed ? "self-check: all passed" : "self-check: FAILED")
    return passed
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}

/// One block of random input channels and one of output channels, back to back, and the
/// pointer arrays a renderer is handed: what the side benchmarks (--delays, --midi, --ducking)
/// render through. Freed with it.
final class RenderBlocks {
    let inputs: Int, outputs: Int, frames: Int
    private let inputBlock: UnsafeMutablePointer<Float>, outputBlock: UnsafeMutablePointer<Float>
    private let ins: UnsafeMutablePointer<UnsafePointer<Float>?>
    private let outs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

    init(inputs n: Int, outputs m: Int, frames: Int, rng: inout SplitMix64) {
        (inputs, outputs, self.frames) = (n, m, frames)
        inputBlock = allocateFloats(n * frames)
        outputBlock = allocateFloats(m * frames)
        for k in 0..<(n * frames) { inputBlock[k] = Float.random(in: -1...1, using: &rng) }
        ins = .allocate(capacity: n)
        outs = .allocate(capacity: m)
        for i in 0..<n { ins[i] = UnsafePointer(inputBlock + i * frames) }
        for j in 0..<m { outs[j] = outputBlock + j * frames }
    }

    deinit {
        freeFloats(inputBlock)
        freeFloats(outputBlock)
        ins.deallocate()
        outs.deallocate()
    }

    /// `engine`'s renderer over these blocks.
    func render(_ engine: MatrixMixer) -> CrosspointRender {
        CrosspointRender(renderer: engine.renderer, frames: frames,
                         inputs: UnsafeBufferPointer(start: ins, count: inputs), outputs: UnsafeBufferPointer(start: outs, count: outputs))
    }
}

/// Times three workloads in batches of `blocks`, interleaved (a, b, c, then c, b, a), so that
/// all three see the same machine; `before` runs ahead of each batch k, given c (a change to
/// make and to let c take). Per batch: each one's time a block, and b's and c's over a's.
func timeInterleaved<A: Workload, B: Workload, C: Workload>(
    _ a: inout A, _ b: inout B, _ c: inout C, batches: Int, blocks: Int, before: (Int, inout C) -> Void = { _, _ in }
) -> (a: [Double], b: [Double], c: [Double], bOverA: [Double], cOverA: [Double]) {
    var ta: [Double] = [], tb: [Double] = [], tc: [Double] = [], rb: [Double] = [], rc: [Double] = []
    for k in 0..<batches {
        before(k, &c)
        let x: Double, y: Double, z: Double
        if k % 2 == 0 {
            x = Double(timeBatch(&a, iterations: blocks)); y = Double(timeBatch(&b, iterations: blocks))
            z = Double(timeBatch(&c, iterations: blocks))
        } else {
            z = Double(timeBatch(&c, iterations: blocks)); y = Double(timeBatch(&b, iterations: blocks))
            x = Double(timeBatch(&a, iterations: blocks))
        }
        ta.append(x / Double(blocks)); tb.append(y / Double(blocks)); tc.append(z / Double(blocks))
        rb.append(y / x); rc.append(z / x)
    }
    return (ta, tb, tc, rb, rc)
}
