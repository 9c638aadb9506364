// The wire format of levels (the node property `crosspoint.levels`) and the split of a
// set-param into level watches and the rest, both as the node and the client use them.

import CrosspointCore
import CrosspointPipeWire
import CrosspointTestSupport
import Testing

@Suite("Levels on the wire")
struct LevelsCodecTests {
    @Test("A reading is compact JSON, [peak, rms] per channel in port order, null for silence")
    func textOfAReading() {
        let reading = LevelReading(
            sequence: 42, interval: 50, frames: 2400,
            inputs: [Level(peak: -12, rms: -15), .silence, Level(peak: 0, rms: -3.1)],
            outputs: [Level(peak: -18, rms: -21), Level(peak: 6.02, rms: nil)])
        #expect(LevelsCodec.text(reading)
            == #"{"seq":42,"interval":50,"frames":2400,"inputs":[[-12.0,-15.0],[null,null],[0.0,-3.1]],"outputs":[[-18.0,-21.0],[6.0,null]]}"#)
        #expect(LevelsCodec.property == "crosspoint.levels")
    }

    @Test("Ducking rules' reductions ride along as duck, read back; out of range, the field is left out")
    func ducking() {
        let reading = LevelReading(sequence: 1, interval: 50, frames: 960, inputs: [.silence], outputs: [], ducking: [-12.34, 0])
        let text = LevelsCodec.text(reading)
        #expect(text == #"{"seq":1,"interval":50,"frames":960,"inputs":[[null,null]],"outputs":[],"duck":[-12.3,0.0]}"#)
        #expect(LevelsCodec.reading(text)?.ducking == [-12.3, 0])
        #expect(LevelsCodec.reading(#"{"seq":1,"interval":50,"frames":960,"inputs":[],"outputs":[],"duck":[3]}"#)?.ducking == [])
        #expect(LevelsCodec.reading(#"{"seq":1,"interval":50,"frames":960,"inputs":[],"outputs":[],"duck":"x"}"#)?.ducking == [])
    }

    @Test("The longest reading of the largest node (256 x 256, every level at -999.9) is about 8 kB")
    func longestReading() {
        let loudest = Level(peak: -999.9, rms: -999.9)
        let reading = LevelReading(
            sequence: Int(Int32.max), interval: 60000, frames: 1 << 40,
            inputs: Array(repeating: loudest, count: 256), outputs: Array(repeating: loudest, count: 256))
        let bytes = LevelsCodec.text(reading).utf8.count
        #expect(bytes == 83 + 2 * (256 * 15 + 255), "\(bytes) bytes")
        #expect(bytes < 8500)
    }

    @Test("Readings read back as they were written, up to 256 x 256 channels")
    func roundTrip() {
        var rng = SplitMix64(seed: 0x1E7E15)
        for round in 0..<200 {
            let n = round == 0 ? 256 : 1 + rng.index(round < 100 ? 8 : 256)
            let m = round == 0 ? 256 : 1 + rng.index(round < 100 ? 8 : 256)
            func level() -> Level {
                if rng.chance(0.3) { return .silence }
                let peak = (rng.double(in: -140...12) * 10).rounded() / 10
                return Level(peak: peak, rms: rng.chance(0.1) ? nil : ((peak - rng.double(in: 0...20)) * 10).rounded() / 10)
            }
            let reading = LevelReading(
                sequence: rng.index(1 << 30), interval: 33 + rng.index(1000), frames: rng.index(1 << 20),
                inputs: (0..<n).map { _ in level() }, outputs: (0..<m).map { _ in level() })
            #expect(LevelsCodec.reading(LevelsCodec.text(reading)) == reading)
        }
        let beyond = LevelReading(sequence: 1, interval: 33, frames: 1, inputs: [Level(peak: 999.9, rms: 999.9)], outputs: [])
        #expect(LevelsCodec.reading(LevelsCodec.text(beyond)) == beyond)
    }

    @Test("An empty property (nobody watches) and text that is not a reading read as nothing")
    func notAReading() {
        let channel = #"[[-1.0,-2.0]]"#
        let bad = [
            "", "{", "[]", "null", "42", #""text""#, "{}",
            #"{"seq":1,"interval":33,"frames":10,"inputs":[],"outputs":"x"}"#,
            #"{"seq":-1,"interval":33,"frames":10,"inputs":[],"outputs":[]}"#,
            #"{"seq":1.5,"interval":33,"frames":10,"inputs":[],"outputs":[]}"#,
            #"{"seq":1e300,"interval":33,"frames":10,"inputs":[],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"inputs":[],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"frames":10,"inputs":[[1.0]],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"frames":10,"inputs":[[1.0,2.0,3.0]],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"frames":10,"inputs":[["a","b"]],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"frames":10,"inputs":[null],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"frames":10,"inputs":[[[1],2]],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"frames":10,"inputs":[[1e300,2]],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"frames":10,"inputs":[[-1000,2]],"outputs":[]}"#,
            #"{"seq":1,"interval":33,"frames":10,"inputs":"#
                + "[" + Array(repeating: channel.dropFirst().dropLast(), count: 257).joined(separator: ",") + "]" + #","outputs":[]}"#,
            String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        ]
        for text in bad { #expect(LevelsCodec.reading(text) == nil, "\(text.prefix(120))") }
        // Relaxed SPA-JSON (what pw-cli writes) reads too.
        #expect(LevelsCodec.reading(#"{ seq = 3 interval = 33 frames = 0 inputs = [ [ null null ] ] outputs = [ ] }"#)
            == LevelReading(sequence: 3, interval: 33, frames: 0, inputs: [.silence], outputs: []))
    }

    @Test("A set-param's level watches are split from its other keys, each checked")
    func watchesAreSplitFromTheRest() throws {
        let entries: [PropsCodec.Entry] = [
            .init(key: "matrix.0.0", value: .number(0.5)),
            .init(key: "levels.watch", value: .numbers([7, 50])),
            .init(key: "levels.watch", value: .numbers([7, 0])),
            .init(key: "levels.watch", value: .numbers([0, 50])),
            .init(key: "levels.watch", value: .numbers([7, 1e20])),
            .init(key: "levels.watch", value: .numbers([7.5, 50])),
            .init(key: "levels.watch", value: .numbers([1, 2, 3])),
            .init(key: "levels.watch", value: .number(7)),
            .init(key: "levels.watch", value: .strings(["a", "b"])),
            .init(key: "levels.watch", value: .invalid("a value of type Pod")),
            .init(key: nil, value: .number(1)),
            .init(key: "gain.master", value: .number(0.25)),
        ]
        let (claimed, others) = PropsCodec.split(entries, claimed: [LevelWatch.key])
        let requests = claimed.map { entry in Result { () throws(CrosspointError) in try LevelWatch(entry) } }
        #expect(others.map(\.key) == ["matrix.0.0", nil, "gain.master"])
        #expect(requests.count == 9)
        #expect(try requests[0].get() == LevelWatch(watcher: 7, interval: 50))
        #expect(try requests[1].get() == LevelWatch(watcher: 7, interval: 0))
        for request in requests.dropFirst(2) {
            guard case let .failure(error) = request else {
                Issue.record("expected a refusal, got \(request)")
                continue
            }
            #expect(error.description.contains("levels.watch"), "\(error)")
        }
        // With no watches, everything goes to the mixer.
        let plain = PropsCodec.split([.init(key: "inputs", value: .number(4))], claimed: [LevelWatch.key])
        #expect(plain.claimed.isEmpty && plain.others.count == 1)
    }
}
