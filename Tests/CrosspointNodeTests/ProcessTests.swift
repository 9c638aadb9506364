// The node's data-thread path, exactly as the daemon runs it (`processCycle` in
// RealTime.swift: the port table filled from the ports' buffers, then the render), with only
// `pw_filter_get_dsp_buffer` stood in for by plain buffers.

import CAllocationCounter
import CrosspointCore
import CrosspointNode
import CrosspointTestSupport
import Testing

/// Fake ports: each port handle is the address of its own sample buffer; an unlinked port
/// has no buffer (the stand-in returns NULL, as PipeWire does).
final class FakePorts {
    let frames: Int
    let inputs: [UnsafeMutablePointer<Float>]
    let outputs: [UnsafeMutablePointer<Float>]
    var unlinked: Set<UnsafeMutableRawPointer> = []

    init(inputs n: Int, outputs m: Int, frames: Int) {
        self.frames = frames
        inputs = (0..<n).map { _ in .allocate(capacity: frames) }
        outputs = (0..<m).map { _ in .allocate(capacity: frames) }
        for p in inputs + outputs { p.initialize(repeating: 0, count: frames) }
    }

    deinit { for p in inputs + outputs { p.deallocate() } }

    var handles: (inputs: [UnsafeMutableRawPointer?], outputs: [UnsafeMutableRawPointer?]) {
        (inputs.map { UnsafeMutableRawPointer($0) }, outputs.map { UnsafeMutableRawPointer($0) })
    }
}

@Suite("The node's process path")
struct ProcessTests {
    /// Frees what `run` made: the port table and the context.
    static func release(_ context: UnsafeMutablePointer<DSPContext>) {
        PortTable.destroy(context.pointee.table)
        context.deinitialize(count: 1)
        context.deallocate()
    }

    /// Runs `cycles` process cycles with a plan change before every tenth, each cycle inside
    /// an allocation-counting window; returns the allocations and frees counted. With
    /// `metering`, the levels are watched: a reading is taken (outside the windows) every
    /// sixth cycle.
    func run(inputs n: Int, outputs m: Int, cycles: Int, frames: Int, metering: Bool = false) throws
        -> (allocations: Int, frees: Int, context: UnsafeMutablePointer<DSPContext>, engine: MatrixMixer, ports: FakePorts,
            meter: LevelMeter, readings: [LevelReading])
    {
        var rng = SplitMix64(seed: UInt64(n * 1000 + m))
        var model = try Mixer(inputs: n, outputs: m)
        try model.setMatrix(rows: (0..<n).map { _ in (0..<m).map { _ in rng.chance(0.5) ? rng.double(in: -2...2) : 0 } })
        try model.setRamp(milliseconds: 2)
        let engine = MatrixMixer(model)
        let ports = FakePorts(inputs: n, outputs: m, frames: frames)
        ports.unlinked = [UnsafeMutableRawPointer(ports.inputs[0]), UnsafeMutableRawPointer(ports.outputs[m - 1])]
        let handles = ports.handles
        let meter = LevelMeter()
        if metering { meter.start() }
        var readings: [LevelReading] = []
        let context = UnsafeMutablePointer<DSPContext>.allocate(capacity: 1)
        context.initialize(to: DSPContext(renderer: engine.renderer, levels: meter.tap, owner: nil,
                                          table: PortTable.make(inputs: handles.inputs, outputs: handles.outputs)))
        let unlinked = ports.unlinked
        var allocations = 0, frees = 0
        for cycle in 0..<cycles {
            if cycle % 6 == 5, meter.collect() {
                readings.append(meter.reading(inputs: n, outputs: m, sequence: readings.count, interval: 33))
            }
            if cycle % 50 == 0 { for p in ports.inputs { for k in 0..<frames { p[k] = rng.sample() } } }
            if cycle % 10 == 9 {
                let (i, j, gain) = (rng.index(n), rng.index(m), rng.double(in: -2...2))
                try engine.update { model throws(CrosspointError) in
                    try model.setCrosspoint(input: i, output: j, gain: gain)
                }
            }
            crosspoint_alloc_counting_begin()
            processCycle(context, frames: UInt64(frames), rate: 48000) { port, _ in
                unlinked.contains(port) ? nil : port
            }
            allocations += crosspoint_alloc_counting_end()
            frees += crosspoint_alloc_counting_frees()
        }
        return (allocations, frees, context, engine, ports, meter, readings)
    }

    @Test("Thousands of process cycles, with plan changes and ramps in flight, allocate and free nothing",
          arguments: [(2, 1), (8, 8), (64, 64)])
    func processAllocatesNothing(shape: (Int, Int)) throws {
        #expect(crosspoint_alloc_counter_is_active() == 1, "the allocation counter must be interposed")
        let (n, m) = shape
        let cycles = n * m > 1000 ? 2000 : 5000  // a debug build renders 64x64 slowly
        let result = try run(inputs: n, outputs: m, cycles: cycles, frames: 256)
        defer { ProcessTests.release(result.context) }
        #expect(result.allocations == 0 && result.frees == 0,
                "\(n)x\(m): \(result.allocations) allocations, \(result.frees) frees in \(cycles) cycles")
    }

    @Test("The process path mixes what the model says, with unlinked inputs silent and unlinked outputs untouched")
    func processMixesTheModel() throws {
        let result = try run(inputs: 4, outputs: 3, cycles: 200, frames: 128)  // ramps long settled
        defer { ProcessTests.release(result.context) }
        let ports = result.ports, model = result.engine.mixer
        // Two more cycles with no change: the last ramp (2 ms) has ended.
        let unlinked = ports.unlinked
        for _ in 0..<2 {
            processCycle(result.context, frames: UInt64(ports.frames), rate: 48000) { port, _ in unlinked.contains(port) ? nil : port }
        }
        // The last cycle's inputs are still in the buffers; input 0 is unlinked (silence).
        for j in 0..<2 {
            for k in 0..<ports.frames {
                var expected: Double = 0
                for i in 1..<4 { expected += Double(model.effectiveGain(input: i, output: j)) * Double(ports.inputs[i][k]) }
                #expect(abs(Double(ports.outputs[j][k]) - expected) < 1e-4, "output \(j) frame \(k)")
            }
        }
        #expect((0..<ports.frames).allSatisfy { ports.outputs[2][$0] == 0 }, "an unlinked output is never written")
    }
}

@Suite("The node's process path, levels watched")
struct ProcessMeteringTests {
    @Test("Thousands of process cycles measuring levels, with readings taken between them, allocate and free nothing",
          arguments: [(2, 1), (8, 8), (64, 64), (256, 256)])
    func meteringAllocatesNothing(shape: (Int, Int)) throws {
        let (n, m) = shape
        let cycles = n * m > 10_000 ? 120 : n * m > 1000 ? 1200 : 3000
        let result = try ProcessTests().run(inputs: n, outputs: m, cycles: cycles, frames: 256, metering: true)
        defer { ProcessTests.release(result.context) }
        #expect(result.allocations == 0 && result.frees == 0,
                "\(n)x\(m): \(result.allocations) allocations, \(result.frees) frees in \(cycles) cycles")
        #expect(result.readings.count == cycles / 6, "a reading every sixth cycle")
        // The first collection drops what came before the start; then each holds what the
        // data thread measured up to the switch the one before asked for: the first five
        // cycles, then six each.
        #expect(result.readings.first?.frames == 0)
        #expect(result.readings.dropFirst().first?.frames == 5 * 256)
        #expect(result.readings.dropFirst(2).allSatisfy { $0.frames == 6 * 256 }, "each reading covers six cycles")
    }

    @Test("The process path measures what each port read and wrote; an unlinked input and an unlinked output read silence")
    func meteringMeasuresThePorts() throws {
        let result = try ProcessTests().run(inputs: 4, outputs: 3, cycles: 200, frames: 128, metering: true)
        defer { ProcessTests.release(result.context) }
        let ports = result.ports, meter = result.meter, context = result.context
        let unlinked = ports.unlinked
        func cycle() { processCycle(context, frames: UInt64(ports.frames), rate: 48000) { port, _ in unlinked.contains(port) ? nil : port } }
        // Known inputs (the ramps have long settled); the cycle after the switch asked for
        // here is measured alone, then handed over by the next switch.
        var rng = SplitMix64(seed: 99)
        for p in ports.inputs { for k in 0..<ports.frames { p[k] = rng.sample() * 0.5 } }
        meter.collect()
        cycle()
        #expect(meter.collect())
        _ = meter.reading(inputs: 4, outputs: 3, sequence: 0, interval: 33)
        cycle()  // the same inputs: the same outputs again
        #expect(meter.collect())
        let reading = meter.reading(inputs: 4, outputs: 3, sequence: 1, interval: 33)
        func level(_ p: UnsafeMutablePointer<Float>) -> Level {
            let samples = Array(UnsafeBufferPointer(start: p, count: ports.frames))
            return Level(peak: samples.reduce(0) { max($0, abs($1)) },
                         sumOfSquares: samples.reduce(0.0) { $0 + Double($1) * Double($1) }, frames: samples.count)
        }
        #expect(reading.frames == ports.frames)
        #expect(reading.inputs[0] == .silence, "input 0 is unlinked")
        #expect(reading.outputs[2] == .silence, "output 2 is unlinked")
        // Within a tenth of a dB, the reading's rounding.
        func close(_ a: Level, _ b: Level) -> Bool {
            guard let ap = a.peak, let bp = b.peak, let ar = a.rms, let br = b.rms else { return false }
            return abs(ap - bp) <= 0.1 + 1e-9 && abs(ar - br) <= 0.1 + 1e-9
        }
        for i in 1..<4 { #expect(close(reading.inputs[i], level(ports.inputs[i])), "input \(i): \(reading.inputs[i])") }
        for j in 0..<2 { #expect(close(reading.outputs[j], level(ports.outputs[j])), "output \(j): \(reading.outputs[j])") }
    }

    @Test("Not watched, the process path leaves the meter alone")
    func unwatchedMeterIsUntouched() throws {
        let result = try ProcessTests().run(inputs: 2, outputs: 2, cycles: 50, frames: 64)
        defer { ProcessTests.release(result.context) }
        #expect(!result.meter.isWatching && result.readings.isEmpty)
        #expect(!result.meter.isWaiting, "no switch was ever asked for, or made")
    }
}
