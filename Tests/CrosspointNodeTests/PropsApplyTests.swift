// What one set-param may cost the daemon's main loop: shape changes and refusals are bounded.

import CrosspointCore
import CrosspointPipeWire
import Testing

@Suite("Props application limits")
struct PropsApplyTests {
    @Test("At most 16 changes of shape apply from one set-param; the rest are refused in one warning")
    func shapeChangesAreBounded() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        let entries = (1...40000).map { PropsCodec.Entry(key: $0 % 2 == 0 ? "inputs" : "outputs", value: .number($0 % 4 < 2 ? 256 : 1)) }
        let (changed, warnings) = mixer.apply(entries)
        #expect(changed)
        // The 16th entry is "inputs" 256 (k = 16: 16 % 4 == 0 -> 256) after "outputs" 1 (k = 15).
        #expect(mixer.inputs == 256 && mixer.outputs == 1)
        #expect(warnings == ["39984 changes of inputs, outputs or their positions refused: one set-param takes at most 16; send more in separate calls"])
    }

    @Test("A set-param of many bad keys names 64 of them and counts the rest")
    func warningsAreBounded() throws {
        var mixer = try Mixer(inputs: 2, outputs: 2)
        let entries = (0..<1000).map { PropsCodec.Entry(key: "no.such.\($0)", value: .number(1)) }
        let (changed, warnings) = mixer.apply(entries)
        #expect(!changed)
        #expect(warnings.count == 65)
        #expect(warnings.first == "unknown parameter 'no.such.0'")
        #expect(warnings.last == "... and 936 more refused entries in this set-param")
    }
}
