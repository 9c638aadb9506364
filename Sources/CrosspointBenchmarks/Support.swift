// Plumbing for the benchmark: a monotonic clock, aligned buffers, a seeded generator,
// formatting and machine information. Glibc only, no Foundation.

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
        if let file = fopen("/proc/cpuinfo", "r") {
            defer { fclose(file) }
            var line: UnsafeMutablePointer<CChar>? = nil
            var capacity = 0
            var haveModel = false, haveFlags = false
            while getline(&line, &capacity, file) > 0, let l = line {
                let text = String(cString: l)
                guard let colon = text.firstIndex(of: ":") else { continue }
                let key = text[..<colon].trimmingCharacters()
                let value = text[text.index(after: colon)...].trimmingCharacters()
                if !haveModel && key == "model name" {
                    info.cpuModel = value
                    haveModel = true
                } else if !haveFlags && key == "flags" {
                    let flags = Set(value.split(separator: " ").map(String.init))
                    info.vectorFlags = ["sse4_2", "avx", "avx2", "fma", "avx512f"].filter { flags.contains($0) }
                    haveFlags = true
                }
            }
            free(line)
        }
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

extension StringProtocol {
    func trimmingCharacters() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
