// The RenderBlock protocol: a host that knows nothing of mixers drives any block.

import CrosspointCore
import CrosspointTestSupport
import Testing

/// The example from RenderBlock's documentation: stereo in, the average out.
struct StereoToMono: RenderBlock {
    var inputCount: Int { 2 }
    var outputCount: Int { 1 }
    mutating func render(
        frameCount: Int, inputs: UnsafeBufferPointer<UnsafePointer<Float>?>,
        outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>
    ) {
        guard outputs.count > 0, let out = outputs[0] else { return }
        let l = inputs.count > 0 ? inputs[0] : nil, r = inputs.count > 1 ? inputs[1] : nil
        for n in 0..<frameCount { out[n] = 0.5 * ((l?[n] ?? 0) + (r?[n] ?? 0)) }
    }
}

/// A generic host: renders `frames` frames of `block` in chunks of `chunk`, from inputs it owns.
func host<Block: RenderBlock>(_ block: inout Block, inputs: [[Float]?], frames: Int, chunk: Int) -> [[Float]] {
    let bench = Bench(inputs: block.inputCount, outputs: block.outputCount, capacity: frames)
    for (i, signal) in inputs.enumerated() {
        if let signal { bench.input(i).update(from: signal, count: frames) } else { bench.connectInput(i, false) }
    }
    var outputs = [[Float]](repeating: [], count: block.outputCount)
    var done = 0
    while done < frames {
        let count = min(chunk, frames - done)
        // Hand the block pointers into the middle of the buffers, as a host with a ring would.
        let ins = UnsafeMutableBufferPointer<UnsafePointer<Float>?>.allocate(capacity: block.inputCount)
        let outs = UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>.allocate(capacity: block.outputCount)
        defer { ins.deallocate(); outs.deallocate() }
        for i in 0..<block.inputCount { ins[i] = bench.inputPointers[i].map { $0 + done } }
        for j in 0..<block.outputCount { outs[j] = bench.output(j) + done }
        block.render(frameCount: count, inputs: UnsafeBufferPointer(ins), outputs: UnsafeBufferPointer(outs))
        done += count
    }
    for j in 0..<block.outputCount { outputs[j] = bench.samples(output: j, frames: frames) }
    return outputs
}

@Suite("RenderBlock")
struct RenderBlockTests {
    @Test("A stereo-to-mono effect written against RenderBlock renders the average")
    func stereoToMonoExampleRenders() {
        var rng = SplitMix64(seed: 3)
        let l = (0..<300).map { _ in rng.sample() }, r = (0..<300).map { _ in rng.sample() }
        var effect = StereoToMono()
        #expect(effect.inputCount == 2 && effect.outputCount == 1)
        let out = host(&effect, inputs: [l, r], frames: 300, chunk: 64)
        #expect(out.count == 1 && out[0].count == 300)
        for n in 0..<300 { #expect(out[0][n] == 0.5 * (l[n] + r[n])) }
        // A missing input is silence.
        let leftOnly = host(&effect, inputs: [l, nil], frames: 300, chunk: 7)
        #expect(leftOnly[0] == l.map { 0.5 * $0 })
    }

    @Test("The example and a default 2x1 MatrixRenderer sound the same through the same host")
    func exampleAndMatrixRendererAgree() throws {
        var rng = SplitMix64(seed: 4)
        let l = (0..<1000).map { _ in rng.sample() }, r = (0..<1000).map { _ in rng.sample() }
        var effect = StereoToMono()
        let mixer = MatrixMixer(try makeMixer(2, 1))
        var renderer = mixer.renderer
        #expect(renderer.inputCount == effect.inputCount && renderer.outputCount == effect.outputCount)
        for chunk in [1000, 128, 13] {
            let byEffect = host(&effect, inputs: [l, r], frames: 1000, chunk: chunk)
            let byMixer = host(&renderer, inputs: [l, r], frames: 1000, chunk: chunk)
            #expect(byEffect == byMixer, "chunks of \(chunk)")
        }
    }

    @Test("The largest block is PipeWire's largest quantum")
    func maximumFrameCountIs8192() {
        #expect(maximumFrameCount == 8192)
        var effect = StereoToMono()
        let ones = [Float](repeating: 1, count: maximumFrameCount)
        let out = host(&effect, inputs: [ones, ones], frames: maximumFrameCount, chunk: maximumFrameCount)
        #expect(out[0].allSatisfy { $0 == 1 })
    }
}
