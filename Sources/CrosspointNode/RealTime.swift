import CCrosspointShim
import CPipeWire
import CrosspointCore

// The real-time side of a node: everything the data thread touches, and nothing else.
// Rules here: no allocation, no lock, no log, no I/O, no `throw`, no class retain/release.
// Tests/CrosspointNodeTests/ProcessTests.swift runs `processCycle` under an allocation counter.

/// What the data thread reads: the renderer, the level meter's tap and its own table of ports.
package struct DSPContext {
    package var renderer: MatrixRenderer
    package var levels: LevelTap
    /// The `FilterNode`, unretained; read only by main-loop callbacks.
    package var owner: UnsafeMutableRawPointer?
    package var table: UnsafeMutablePointer<PortTable>
    /// `pw_filter_get_dsp_buffer`, called through this pointer (beside the rest of the
    /// context) rather than through the module's PLT and GOT: two pages fewer a cycle.
    package var getBuffer: @convention(c) (UnsafeMutableRawPointer?, UInt32) -> UnsafeMutableRawPointer? = pw_filter_get_dsp_buffer
    /// MIDI control, once the node has had its MIDI ports (MIDIPorts.swift).
    var midi: MIDIRealtime? = nil

    package init(renderer: MatrixRenderer, levels: LevelTap, owner: UnsafeMutableRawPointer?, table: UnsafeMutablePointer<PortTable>) {
        self.renderer = renderer
        self.levels = levels
        self.owner = owner
        self.table = table
    }
}

/// The data thread's port table and the buffer pointers it fills each cycle, allocated on the
/// main loop.
package struct PortTable {
    package let inputs: UnsafeMutableBufferPointer<UnsafeMutableRawPointer?>
    package let outputs: UnsafeMutableBufferPointer<UnsafeMutableRawPointer?>
    package let inputBuffers: UnsafeMutableBufferPointer<UnsafePointer<Float>?>
    package let outputBuffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>
    /// The MIDI ports, while the node has them.
    package var midiInput: UnsafeMutableRawPointer? = nil
    package var midiOutput: UnsafeMutableRawPointer? = nil

    /// A table of these ports (main loop): the table and its four arrays in one block.
    package static func make(inputs: [UnsafeMutableRawPointer?], outputs: [UnsafeMutableRawPointer?],
                     midiInput: UnsafeMutableRawPointer? = nil, midiOutput: UnsafeMutableRawPointer? = nil) -> UnsafeMutablePointer<PortTable> {
        var layout = BlockLayout()
        let tableAt = layout.reserve(PortTable.self, 1)
        let insAt = layout.reserve(UnsafeMutableRawPointer?.self, inputs.count)
        let outsAt = layout.reserve(UnsafeMutableRawPointer?.self, outputs.count)
        let inBuffersAt = layout.reserve(UnsafePointer<Float>?.self, inputs.count)
        let outBuffersAt = layout.reserve(UnsafeMutablePointer<Float>?.self, outputs.count)
        let block = layout.allocate()
        var table = PortTable(
            inputs: UnsafeMutableBufferPointer(start: block.array(at: insAt, from: inputs), count: inputs.count),
            outputs: UnsafeMutableBufferPointer(start: block.array(at: outsAt, from: outputs), count: outputs.count),
            inputBuffers: UnsafeMutableBufferPointer(
                start: block.array(at: inBuffersAt, repeating: nil, count: inputs.count), count: inputs.count),
            outputBuffers: UnsafeMutableBufferPointer(
                start: block.array(at: outBuffersAt, repeating: nil, count: outputs.count), count: outputs.count))
        table.midiInput = midiInput
        table.midiOutput = midiOutput
        return block.array(at: tableAt, repeating: table, count: 1)  // at the block's start (tableAt is 0)
    }

    /// Frees a table the data thread no longer reads (main loop): its block, which starts with it.
    package static func destroy(_ table: UnsafeMutablePointer<PortTable>) {
        table.deinitialize(count: 1)
        UnsafeMutableRawPointer(table).deallocate()
    }

    /// Hands the data thread `table` in place of its current one, synchronously on the data
    /// loop (`pw_loop_invoke`, blocking), then frees the old one: once this returns, no port
    /// missing from `table` is touched by the data thread (module-combine-stream.c does the same).
    static func swap(in context: UnsafeMutablePointer<DSPContext>, _ table: UnsafeMutablePointer<PortTable>,
                     on loop: UnsafeMutablePointer<pw_loop>?) {
        var swap = (context: context, table: table)
        _ = withUnsafeMutablePointer(to: &swap) { pointer in
            cpshim_loop_invoke(loop, { _, _, _, _, _, user in
                guard let swap = user?.assumingMemoryBound(to: (context: UnsafeMutablePointer<DSPContext>, table: UnsafeMutablePointer<PortTable>).self)
                else { return 0 }
                let old = swap.pointee.context.pointee.table
                swap.pointee.context.pointee.table = swap.pointee.table
                swap.pointee.table = old
                return 0
            }, 0, nil, 0, true, pointer)
        }
        destroy(swap.table)
    }
}

/// One cycle of the data thread: asks `buffer` for each port's buffer (NULL = unlinked:
/// silence in, skipped out), renders, and, only while someone watches the levels, measures
/// what every port read and wrote (an unlinked port adds silence). `buffer` is
/// `pw_filter_get_dsp_buffer` in the node and a stand-in in the tests; everything else is
/// exactly what runs in the daemon.
@inline(__always)
package func processCycle(
    _ context: UnsafeMutablePointer<DSPContext>, frames requested: UInt64, rate: UInt32,
    buffer: (UnsafeMutableRawPointer, UInt32) -> UnsafeMutableRawPointer?
) {
    let frames = Int(min(requested, UInt64(maximumFrameCount)))
    guard frames > 0 else { return }
    let table = context.pointee.table.pointee
    for k in 0..<table.inputs.count {
        let data = table.inputs[k].flatMap { buffer($0, UInt32(frames)) }
        table.inputBuffers[k] = data.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) }
    }
    for k in 0..<table.outputs.count {
        table.outputBuffers[k] = table.outputs[k].flatMap { buffer($0, UInt32(frames)) }?.assumingMemoryBound(to: Float.self)
    }
    if rate > 0 { context.pointee.renderer.sampleRate = Double(rate) }
    // Levels, while watched: the inputs first (which brings them into the cache for the
    // render), each output as soon as it is rendered.
    let levels = context.pointee.levels
    let watched = levels.isWatched
    if watched { levels.beginBlock(frames: frames, inputs: UnsafeBufferPointer(table.inputBuffers)) }
    context.pointee.renderer.render(
        frameCount: frames, inputs: UnsafeBufferPointer(table.inputBuffers), outputs: UnsafeBufferPointer(table.outputBuffers),
        levels: watched ? levels : nil)
}

/// The filter's process callback (`PW_FILTER_FLAG_RT_PROCESS`: on the data thread).
func dspProcess(_ data: UnsafeMutableRawPointer?, _ position: UnsafeMutablePointer<spa_io_position>?) {
    guard let data, let position else { return }
    let context = data.assumingMemoryBound(to: DSPContext.self)
    let getBuffer = context.pointee.getBuffer
    processMIDI(context)
    processCycle(context, frames: position.pointee.clock.duration,
                 rate: position.pointee.clock.rate.denom) { getBuffer($0, $1) }
}
