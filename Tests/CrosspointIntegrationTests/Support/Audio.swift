import Foundation
import Testing

/// 32-bit float WAV files, as pw-cat plays and pw-record writes them.
enum Wave {
    static func write(_ channels: [[Float]], rate: Int = 48000, to path: String) throws {
        let frames = channels[0].count, count = channels.count
        var data = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        let bytes = UInt32(frames * count * 4)
        data.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes); data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(3); u16(UInt16(count))
        u32(UInt32(rate)); u32(UInt32(rate * count * 4)); u16(UInt16(count * 4)); u16(32)
        data.append(contentsOf: Array("data".utf8)); u32(bytes)
        var interleaved = [Float](repeating: 0, count: frames * count)
        for (c, channel) in channels.enumerated() { for n in 0..<frames { interleaved[n * count + c] = channel[n] } }
        interleaved.withUnsafeBytes { data.append(contentsOf: $0) }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Reads a float WAV into one array per channel.
    static func read(_ path: String) throws -> [[Float]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        func u32(_ at: Int) -> UInt32 { data[at..<at + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } }
        func u16(_ at: Int) -> UInt16 { data[at..<at + 2].withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) } }
        guard data.count > 12, String(decoding: data[0..<4], as: UTF8.self) == "RIFF" else {
            throw SandboxError("\(path) is not a WAV file")
        }
        var offset = 12, channels = 0, bits = 0
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = Int(u32(offset + 4))
            if id == "fmt " {
                channels = Int(u16(offset + 10))
                bits = Int(u16(offset + 22))
            } else if id == "data" {
                guard bits == 32, channels > 0 else { throw SandboxError("\(path): expected 32-bit float, got \(bits) bits") }
                let end = min(data.count, offset + 8 + size)
                let samples = data[(offset + 8)..<end].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                let frames = samples.count / channels
                return (0..<channels).map { c in (0..<frames).map { samples[$0 * channels + c] } }
            }
            offset += 8 + size + (size & 1)
        }
        throw SandboxError("\(path) has no data chunk")
    }
}

/// A test signal: per channel a distinct cosine tone after a silent lead-in, so that the
/// first sample of audio is sharp and the recording can be aligned to it exactly.
struct TestSignal {
    static let rate = 48000
    static let leadIn = 24000  // 0.5 s: room to make every link before audio starts
    let channels: [[Float]]

    init(channels count: Int, seconds: Double = 1.2, amplitude: Float = 0.2) {
        let frames = TestSignal.leadIn + Int(seconds * Double(TestSignal.rate))
        channels = (0..<count).map { c in
            let frequency = 330.0 + 190.0 * Double(c)  // 330, 520, 710, ... Hz: no two alike
            return (0..<frames).map { n in
                n < TestSignal.leadIn ? 0
                    : amplitude * Float(cos(2 * .pi * frequency * Double(n - TestSignal.leadIn) / Double(TestSignal.rate)))
            }
        }
    }

    /// What output j must carry: the signal through `gains[i][j]`, with unlinked inputs silent.
    func expected(gains: [[Double]], linkedInputs: Set<Int>) -> [[Float]] {
        let outputs = gains.first?.count ?? 0
        return (0..<outputs).map { j in
            var out = [Float](repeating: 0, count: channels[0].count)
            for (i, row) in gains.enumerated() where linkedInputs.contains(i) && row[j] != 0 {
                for n in out.indices { out[n] += Float(row[j]) * channels[i][n] }
            }
            return out
        }
    }
}

/// How a recording compares with what was expected.
struct Comparison: CustomStringConvertible {
    /// Largest |recorded - expected| per output over the steady window, in full scale.
    let maxError: [Float]
    /// Largest |recorded| per output, for reading the error against.
    let peak: [Float]
    let offset: Int
    var description: String {
        "offset \(offset); per output max error " + maxError.map { String(format: "%.2e", $0) }.joined(separator: " ")
            + "; peaks " + peak.map { String(format: "%.3f", $0) }.joined(separator: " ")
    }

    /// Aligns `recorded` to `expected` on the first sample of audio, then compares the
    /// window from 50 ms after it to 100 ms before the signal ends.
    init(recorded: [[Float]], expected: [[Float]]) throws {
        let energetic = expected.indices.max { a, b in
            expected[a].reduce(0) { $0 + abs($1) } < expected[b].reduce(0) { $0 + abs($1) }
        }!
        let threshold: Float = 1e-3
        peak = recorded.map { $0.reduce(0) { max($0, abs($1)) } }
        let signalLength = expected[0].count - TestSignal.leadIn
        var best = 0
        if expected[energetic].contains(where: { abs($0) > threshold }) {
            guard let onsetExpected = expected[energetic].firstIndex(where: { abs($0) > threshold }),
                  let onsetRecorded = recorded[energetic].firstIndex(where: { abs($0) > threshold })
            else { throw SandboxError("no audio arrived on output \(energetic) (peak \(peak[energetic]))") }
            // Refine by a few samples around the onset.
            let coarse = onsetRecorded - onsetExpected
            var bestError = Float.infinity
            for d in (coarse - 3)...(coarse + 3) {
                var e: Float = 0
                for n in (onsetExpected + 2400)..<(onsetExpected + 4800) where n + d >= 0 && n + d < recorded[energetic].count {
                    e = max(e, abs(recorded[energetic][n + d] - expected[energetic][n]))
                }
                if e < bestError { bestError = e; best = d }
            }
        }
        offset = best
        let window = (TestSignal.leadIn + 2400)..<(TestSignal.leadIn + signalLength - 4800)
        maxError = expected.indices.map { j in
            var e: Float = 0
            for n in window {
                let r = n + best >= 0 && n + best < recorded[j].count ? recorded[j][n + best] : .infinity
                e = max(e, abs(r - expected[j][n]))
            }
            return e
        }
    }
}
