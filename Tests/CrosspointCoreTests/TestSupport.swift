// Shared test equipment: a seeded random number generator, a plain reference mixer in
// Double, and a bench that owns audio buffers and drives any `RenderBlock`.

import CrosspointCore
import CrosspointTestSupport
import Testing

// MARK: - Random numbers

// MARK: - The reference mixer

/// The mixer formula, written out plainly in Double from a `Mixer`'s public state:
///
///     out[j] = master * outGain[j] * sum_i( inGain[i] * matrix[i][j] * in[i] )
///
/// with every mute zeroing its term.
struct ReferenceMixer {
    let inputs: Int
    let outputs: Int
    let master: Double
    let inputGains: [Double]
    let outputGains: [Double]
    /// `matrix[input][output]`
    let matrix: [[Double]]

    init(_ mixer: Mixer) {
        inputs = mixer.inputs
        outputs = mixer.outputs
        master = mixer.masterMute ? 0 : Double(mixer.masterGain)
        inputGains = (0..<mixer.inputs).map { mixer.inputMutes[$0] ? 0 : Double(mixer.inputGains[$0]) }
        outputGains = (0..<mixer.outputs).map { mixer.outputMutes[$0] ? 0 : Double(mixer.outputGains[$0]) }
        matrix = (0..<mixer.inputs).map { i in
            (0..<mixer.outputs).map { j in Double(mixer.matrix[i * mixer.outputs + j]) }
        }
    }

    /// The gain from input `i` to output `j`, everything folded in.
    func gain(input i: Int, output j: Int) -> Double {
        master * outputGains[j] * inputGains[i] * matrix[i][j]
    }

    /// The largest magnitude output `j` can reach with inputs in [-1, 1] (at least 1): the
    /// full scale errors are measured against.
    func fullScale(output j: Int) -> Double {
        max(1, (0..<inputs).reduce(0) { $0 + abs(gain(input: $1, output: j)) })
    }

    /// Mixes `frames` frames; `nil` inputs, and inputs past the end of `signals`, are silence.
    func render(_ signals: [[Float]?], frames: Int) -> [[Double]] {
        (0..<outputs).map { j in
            var out = [Double](repeating: 0, count: frames)
            for i in 0..<min(inputs, signals.count) {
                guard let signal = signals[i] else { continue }
                let g = inputGains[i] * matrix[i][j]
                if g == 0 { continue }
                for n in 0..<frames { out[n] += g * Double(signal[n]) }
            }
            let post = master * outputGains[j]
            for n in 0..<frames { out[n] *= post }
            return out
        }
    }
}

// MARK: - The bench

/// Owns one buffer per input and per output, and the pointer arrays a host hands a
/// `RenderBlock`. Disconnecting an input or output sets its pointer to `nil`. Nothing here
/// allocates once constructed, so the real-time tests can render through it.
final class Bench {
    let inputCount: Int
    let outputCount: Int
    let capacity: Int
    private let inputStorage: UnsafeMutablePointer<Float>
    private let outputStorage: UnsafeMutablePointer<Float>
    let inputPointers: UnsafeMutableBufferPointer<UnsafePointer<Float>?>
    let outputPointers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>

    init(inputs: Int, outputs: Int, capacity: Int) {
        inputCount = inputs
        outputCount = outputs
        self.capacity = capacity
        inputStorage = .allocate(capacity: max(inputs, 1) * capacity)
        inputStorage.initialize(repeating: 0, count: max(inputs, 1) * capacity)
        outputStorage = .allocate(capacity: max(outputs, 1) * capacity)
        outputStorage.initialize(repeating: 0, count: max(outputs, 1) * capacity)
        inputPointers = .allocate(capacity: inputs)
        outputPointers = .allocate(capacity: outputs)
        for i in 0..<inputs { inputPointers[i] = UnsafePointer(inputStorage + i * capacity) }
        for j in 0..<outputs { outputPointers[j] = outputStorage + j * capacity }
    }

    deinit {
        inputStorage.deallocate()
        outputStorage.deallocate()
        inputPointers.deallocate()
        outputPointers.deallocate()
    }

    func input(_ i: Int) -> UnsafeMutablePointer<Float> { inputStorage + i * capacity }
    func output(_ j: Int) -> UnsafeMutablePointer<Float> { outputStorage + j * capacity }

    func connectInput(_ i: Int, _ connected: Bool) {
        inputPointers[i] = connected ? UnsafePointer(input(i)) : nil
    }

    func connectOutput(_ j: Int, _ connected: Bool) {
        outputPointers[j] = connected ? output(j) : nil
    }

    /// Random samples in [-1, 1] in the first `frames` frames of every input.
    func fillInputs(_ rng: inout SplitMix64, frames: Int) {
        for i in 0..<inputCount {
            for n in 0..<frames { input(i)[n] = rng.sample() }
        }
    }

    /// The same value in every frame of input `i`.
    func fillInput(_ i: Int, with value: Float) {
        input(i).update(repeating: value, count: capacity)
    }

    /// NaN in every output frame, so that a frame the block fails to write shows.
    func poisonOutputs() {
        outputStorage.update(repeating: .nan, count: max(outputCount, 1) * capacity)
    }

    /// Renders through the `RenderBlock` protocol, as a host would. `inputs` and `outputs`
    /// may hand over fewer pointers than the bench has.
    func render<Block: RenderBlock>(_ block: inout Block, frames: Int, inputs: Int? = nil, outputs: Int? = nil) {
        let i = UnsafeBufferPointer(rebasing: inputPointers[0..<(inputs ?? inputCount)])
        let o = UnsafeBufferPointer(rebasing: outputPointers[0..<(outputs ?? outputCount)])
        block.render(frameCount: frames, inputs: i, outputs: o)
    }

    /// The input signals as the reference mixer reads them: `nil` where disconnected.
    func signals(frames: Int) -> [[Float]?] {
        (0..<inputCount).map { i in
            inputPointers[i].map { Array(UnsafeBufferPointer(start: $0, count: frames)) }
        }
    }

    func samples(output j: Int, frames: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: output(j), count: frames))
    }
}

// MARK: - Renders

/// A `MatrixMixer` on a bench, rendered block by block, its outputs appended to `recorded`.
final class Rig {
    let mixer: MatrixMixer
    var renderer: MatrixRenderer
    let bench: Bench
    /// Every frame rendered so far, per output.
    var recorded: [[Float]]

    init(_ model: Mixer, capacity: Int = maximumFrameCount, sampleRate: Double = 48000, kernel: KernelVersion = .default) {
        mixer = MatrixMixer(model, sampleRate: sampleRate, kernel: kernel)
        renderer = mixer.renderer
        bench = Bench(inputs: model.inputs, outputs: model.outputs, capacity: capacity)
        recorded = Array(repeating: [], count: model.outputs)
    }

    /// Renders `frames` frames in blocks of `block` (the last one shorter), recording them.
    /// The bench's buffers hold one continuous stretch: block k reads and writes the frames
    /// after block k - 1's.
    func run(frames: Int, block: Int) {
        guard frames <= bench.capacity else {
            Issue.record("the bench holds \(bench.capacity) frames, not \(frames)")
            return
        }
        let ins = UnsafeMutableBufferPointer<UnsafePointer<Float>?>.allocate(capacity: bench.inputCount)
        let outs = UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>.allocate(capacity: bench.outputCount)
        defer {
            ins.deallocate()
            outs.deallocate()
        }
        bench.poisonOutputs()
        var done = 0
        while done < frames {
            let count = min(block, frames - done)
            for i in 0..<bench.inputCount { ins[i] = bench.inputPointers[i].map { $0 + done } }
            for j in 0..<bench.outputCount { outs[j] = bench.outputPointers[j].map { $0 + done } }
            renderer.render(frameCount: count, inputs: UnsafeBufferPointer(ins), outputs: UnsafeBufferPointer(outs))
            done += count
        }
        for j in 0..<bench.outputCount where bench.outputPointers[j] != nil {
            recorded[j] += bench.samples(output: j, frames: frames)
        }
    }

    /// Makes a change through `MatrixMixer.update`. (It takes the closure untyped and hands
    /// over the result: `MatrixMixer.update` wants a `throws(CrosspointError)` closure, which
    /// Swift 6.3 does not infer for `{ try $0.setCrosspoint(...) }`.)
    func update(_ change: (inout Mixer) throws -> Void) {
        var next = mixer.mixer
        do {
            try change(&next)
            try mixer.update { m throws(CrosspointError) in m = next }
        } catch {
            Issue.record("update failed: \(error)")
        }
    }
}

/// The first frame at which `a` and `b` differ bit for bit (or in length), or nil.
func firstDifference(_ a: some Collection<Float>, _ b: some Collection<Float>) -> Int? {
    var n = 0
    for (x, y) in zip(a, b) {
        if x.bitPattern != y.bitPattern { return n }
        n += 1
    }
    return a.count == b.count ? nil : n
}

/// The mixer of `inputs` x `outputs`, or a test failure.
func makeMixer(_ inputs: Int, _ outputs: Int) throws -> Mixer {
    try Mixer(inputs: inputs, outputs: outputs)
}

/// The error `body` throws, checked to be a `CrosspointError` whose description contains
/// every string of `mentions`. Records an issue when nothing or something else is thrown.
@discardableResult
func expectCrosspointError(
    mentioning mentions: [String],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> CrosspointError? {
    do {
        try body()
    } catch let error as CrosspointError {
        for text in mentions {
            #expect(
                error.description.lowercased().contains(text.lowercased()),
                "'\(error.description)' does not mention '\(text)'", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected a CrosspointError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
    Issue.record("expected a CrosspointError mentioning \(mentions), nothing was thrown", sourceLocation: sourceLocation)
    return nil
}

// MARK: - Presets by kind

extension PresetValue {
    /// The values in order, lists flattened (a matrix row by row).
    var flattened: [ParameterValue] {
        switch self {
        case let .value(v): [v]
        case let .list(items): items.flatMap(\.flattened)
        }
    }

    /// A list of numbers, one per channel.
    static func numbers(_ values: [Double]) -> PresetValue { .list(values.map { .value(.number($0)) }) }
}

extension Preset {
    /// A key's numbers, lists flattened (a matrix row by row); nil when the preset leaves it out.
    func numbers(_ kind: ParameterKind) -> [Double]? {
        values[kind].map { $0.flattened.map { if case let .number(v) = $0 { v } else { .nan } } }
    }

    /// Replaces one value of a key: `path` indexes its lists, outermost first.
    mutating func set(_ kind: ParameterKind, _ path: Int..., to value: ParameterValue) {
        func replaced(_ node: PresetValue, _ path: ArraySlice<Int>) -> PresetValue {
            guard let k = path.first, case var .list(items) = node else { return .value(value) }
            items[k] = replaced(items[k], path.dropFirst())
            return .list(items)
        }
        values[kind] = replaced(values[kind] ?? .value(value), path[...])
    }
}
