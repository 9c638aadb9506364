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

    /// A signal of the given channels (each starting with the silent lead-in).
    init(samples: [[Float]]) { channels = samples }

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

/// What `playThrough` (or `recordSink`) recorded: the node's outputs, and in the same
/// recording the reference path, the player's first channel linked straight to the sink.
struct Recording {
    /// One channel per output of the node; empty for an output that was not recorded.
    var outputs: [[Float]]
    /// The reference channel as recorded.
    var reference: [Float]
    /// What the reference carries: the signal's first channel.
    var referenceSignal: [Float]

    /// The same recording with only the outputs at `indices`, in that order.
    func outputs(_ indices: [Int]) -> Recording {
        Recording(outputs: indices.map { outputs[$0] }, reference: reference, referenceSignal: referenceSignal)
    }
}

/// How a recording compares with what was expected. The recording trails the played signal
/// by whatever the tools add (nothing with PipeWire 0.3.65; a quantum with 1.x, whose
/// pw-cat and pw-record streams are asynchronous): the lags are measured by
/// cross-correlation, the node's outputs and the reference path's separately, and the node
/// must add none of its own (`addedDelay == 0`). Then sample by sample at the measured lag.
struct Comparison: CustomStringConvertible {
    /// Largest |recorded - expected| per output over the steady window, in full scale.
    let maxError: [Float]
    /// Largest |recorded| per output, for reading the error against.
    let peak: [Float]
    /// How many samples the node's outputs trail the signal, over all outputs that should
    /// carry any (nil if none should: they are then compared at the reference's lag).
    let lag: Int?
    /// How many samples the reference path (player straight to the sink) trails the signal.
    let referenceLag: Int?
    /// Largest |recorded - expected| of the reference path at its lag (a check of the rig).
    let referenceError: Float
    /// The delay the node adds of its own: 0 when its outputs are exactly as late as the reference.
    var addedDelay: Int? { lag.flatMap { lag in referenceLag.map { lag - $0 } } }
    /// The steady window, in the signal's samples: from 50 ms after the signal starts to 100 ms
    /// before it ends (what the players' and recorders' starts and ends cannot touch).
    let window: Range<Int>

    /// Largest |a - b| of two recorded channels over the steady window at the reference's lag,
    /// and the first sample (in the signal's samples) where they differ.
    func difference(_ a: [Float], _ b: [Float]) -> (largest: Float, first: Int?) {
        let at = referenceLag ?? lag ?? 0
        var largest: Float = 0, first: Int?
        for n in window {
            let k = n + at
            let d = k >= 0 && k < a.count && k < b.count ? abs(a[k] - b[k]) : .infinity
            if d > 0 && first == nil { first = n }
            largest = max(largest, d)
        }
        return (largest, first)
    }

    var description: String {
        "lag \(lag.map(String.init) ?? "-") (reference \(referenceLag.map(String.init) ?? "-")); per output max error "
            + maxError.map { String(format: "%.2e", $0) }.joined(separator: " ")
            + "; peaks " + peak.map { String(format: "%.3f", $0) }.joined(separator: " ")
            + String(format: "; reference error %.2e", referenceError)
    }

    /// Compares the window from 50 ms after the signal starts to 100 ms before it ends.
    init(recording: Recording, expected: [[Float]]) throws {
        precondition(recording.outputs.count == expected.count, "one expected channel per recorded output")
        peak = recording.outputs.map { $0.reduce(0) { max($0, abs($1)) } }
        // The lags from the lead-in and the first 0.2 s of signal: the onset decides. (Over
        // the whole signal, a recording whose end pw-cat cut short, as it does by up to a
        // quantum, matches a 330 Hz tone as well 1,600 samples early: 11 whole periods.)
        func head(_ channel: [Float]) -> [Float] { Array(channel.prefix(TestSignal.leadIn + 9600)) }
        referenceLag = CrossCorrelation.lag(recorded: [recording.reference], expected: [head(recording.referenceSignal)])
        lag = CrossCorrelation.lag(recorded: recording.outputs, expected: expected.map(head))
        guard let at = lag ?? referenceLag else { throw SandboxError("the reference path recorded no signal") }
        let signalLength = recording.referenceSignal.count - TestSignal.leadIn
        let window = (TestSignal.leadIn + 2400)..<(TestSignal.leadIn + signalLength - 4800)
        self.window = window
        func error(_ recorded: [Float], _ expected: [Float], at lag: Int) -> Float {
            var e: Float = 0
            for n in window {
                let r = n + lag >= 0 && n + lag < recorded.count ? recorded[n + lag] : .infinity
                e = max(e, abs(r - expected[n]))
            }
            return e
        }
        maxError = expected.indices.map { error(recording.outputs[$0], expected[$0], at: at) }
        referenceError = referenceLag.map { error(recording.reference, recording.referenceSignal, at: $0) } ?? .infinity
    }

    /// Expects every output within `tolerance` of full scale, no delay added by the node,
    /// and a faithful reference path.
    func expectMatch(tolerance: Float = 1e-4, _ what: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
        let prefix = what.isEmpty ? "" : what + ": "
        for j in maxError.indices {
            #expect(maxError[j] <= tolerance, "\(prefix)output \(j): \(self)", sourceLocation: sourceLocation)
        }
        #expect(lag == nil || addedDelay == 0, "\(prefix)the node adds \(addedDelay ?? 0) samples of delay: \(self)",
                sourceLocation: sourceLocation)
        #expect(referenceError <= 1e-4, "\(prefix)the reference path is not the signal: \(self)", sourceLocation: sourceLocation)
    }
}
