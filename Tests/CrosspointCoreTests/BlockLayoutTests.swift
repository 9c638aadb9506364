// BlockLayout: the arrays of a plan (and of a node's port table) carved from one allocation.
// What matters: every array at its own alignment, none overlapping another, all inside the block.

import CrosspointCore
import Testing

@Suite("One block for many arrays")
struct BlockLayoutTests {
    @Test("Offsets are aligned, in order, and do not overlap; the arrays hold what was put in")
    func layout() {
        var layout = BlockLayout()
        let a = layout.reserve(UInt8.self, 3)
        let b = layout.reserve(Double.self, 5)
        let c = layout.reserve(Int32.self, 0)  // empty: still one slot, never shared
        let d = layout.reserve(Float.self, 7, alignment: 64)
        let e = layout.reserve(UnsafeRawPointer?.self, 2)
        let ranges = [(a, 3 * 1), (b, 5 * 8), (c, 1 * 4), (d, 7 * 4), (e, 2 * 8)]
        for (k, (offset, bytes)) in ranges.enumerated() {
            #expect(offset + bytes <= layout.byteCount)
            if k > 0 { #expect(offset >= ranges[k - 1].0 + ranges[k - 1].1, "array \(k) overlaps the one before") }
        }
        #expect(a == 0)
        #expect(b % MemoryLayout<Double>.alignment == 0)
        #expect(d % 64 == 0)
        #expect(e % MemoryLayout<UnsafeRawPointer?>.alignment == 0)

        let block = layout.allocate()
        defer { block.base.deallocate() }
        #expect(Int(bitPattern: block.base) % 64 == 0)
        let bytes = block.array(at: a, from: [UInt8(1), 2, 3])
        let doubles = block.array(at: b, repeating: 2.5, count: 5)
        let floats = block.array(at: d, from: (0..<7).map(Float.init))
        #expect(Int(bitPattern: floats) % 64 == 0)
        #expect(Array(UnsafeBufferPointer(start: bytes, count: 3)) == [1, 2, 3])
        #expect(Array(UnsafeBufferPointer(start: doubles, count: 5)) == [2.5, 2.5, 2.5, 2.5, 2.5])
        #expect(Array(UnsafeBufferPointer(start: floats, count: 7)) == (0..<7).map(Float.init))
    }
}
