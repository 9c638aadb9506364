// Shared by the fuzz targets (scripts/fuzz compiles it into each one).
import CrosspointCore
import Glibc

/// A few mixers, as module arguments make them: the shipped drop-in's stereo to mono, a
/// 4x3 of AUX channels, a plain 2x2, and mono to 8.
let fuzzShapes: [Mixer] = {
    do {
        var shipped = try Mixer(inputs: 2, outputs: 1, inputChannels: ["FL", "FR"], outputChannels: ["MONO"])
        try shipped.setMatrix(rows: [[0.5], [0.5]])
        var mixed = try Mixer(inputs: 4, outputs: 3)
        try mixed.setMatrix(rows: [[1, 0.5, 0], [0, -0.75, 0.25], [0.3, 0, 1], [0, 0.2, -0.5]])
        try mixed.setRamp(milliseconds: 5)
        return [shipped, mixed, try Mixer(inputs: 2, outputs: 2), try Mixer(inputs: 1, outputs: 8)]
    } catch {
        fatalError("fuzz shapes: \(error)")
    }
}()

/// Renders a few blocks of `engine` with a signal on every input and a buffer on every
/// output, as the node's process callback does with every port linked.
func renderBlocks(_ engine: MatrixMixer, inputs: Int, outputs: Int, blocks: Int = 3, frames: Int = 64) {
    let input = [Float](repeating: 0.25, count: frames)
    var output = [Float](repeating: 0, count: frames * outputs)
    input.withUnsafeBufferPointer { signal in
        output.withUnsafeMutableBufferPointer { out in
            let ins = [UnsafePointer<Float>?](repeating: signal.baseAddress, count: inputs)
            let outs = (0..<outputs).map { Optional(out.baseAddress! + $0 * frames) }
            var renderer = engine.renderer
            ins.withUnsafeBufferPointer { i in
                outs.withUnsafeBufferPointer { o in
                    for _ in 0..<blocks { renderer.render(frameCount: frames, inputs: i, outputs: o) }
                }
            }
        }
    }
    for sample in output where !sample.isFinite { fatalError("the renderer wrote \(sample)") }
}

/// Writes `bytes` as file `name` in `directory` (seed corpus).
func writeSeed(_ bytes: [UInt8], _ directory: String, _ name: String) {
    let path = directory + "/" + name
    guard let file = fopen(path, "wb") else { fatalError("cannot write \(path)") }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

/// The directory named by CROSSPOINT_FUZZ_WRITE_SEEDS, if set: the target writes its
/// generated seeds there and exits instead of fuzzing.
var seedDirectory: String? { getenv("CROSSPOINT_FUZZ_WRITE_SEEDS").map { String(cString: $0) } }
