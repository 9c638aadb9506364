/// An effect with its own input and output counts, rendered one block at a time: the seed's
/// "effect node render block", without its allocations.
///
/// A host (the PipeWire node, a test, a benchmark) hands it one pointer per input, `nil`
/// where nothing feeds that input (read as silence, as are inputs past the end of the
/// buffer), and one pointer per output, `nil` where nobody listens (skipped). The block
/// writes every output it is given, every frame, with no allocation, lock, throw or class
/// retain: it runs on the real-time thread.
///
/// A stereo-to-mono effect, for example, is
///
///     struct StereoToMono: RenderBlock {
///         var inputCount: Int { 2 }
///         var outputCount: Int { 1 }
///         mutating func render(frameCount: Int, inputs: UnsafeBufferPointer<UnsafePointer<Float>?>,
///                              outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>) {
///             guard let out = outputs[0] else { return }
///             let l = inputs.count > 0 ? inputs[0] : nil, r = inputs.count > 1 ? inputs[1] : nil
///             for n in 0..<frameCount { out[n] = 0.5 * ((l?[n] ?? 0) + (r?[n] ?? 0)) }
///         }
///     }
public protocol RenderBlock {
    /// How many inputs the block reads.
    var inputCount: Int { get }
    /// How many outputs the block writes.
    var outputCount: Int { get }
    /// Renders `frameCount` frames, 1 to `maximumFrameCount`.
    mutating func render(
        frameCount: Int,
        inputs: UnsafeBufferPointer<UnsafePointer<Float>?>,
        outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>?>)
}

/// The most frames one render call may ask for (PipeWire's largest quantum).
public let maximumFrameCount = 8192
