import Foundation
import Testing

/// Output delays through the real daemon, session manager and module: the node `desk` of the
/// virtual-device tests (its outputs FL and FR on the stand-in interface's FL and FR), a
/// player choosing its `game` device as an application does (`pw-play --target game`), and
/// the interface's monitor recorded. One output is delayed with `crosspoint delay`; the two
/// outputs carry the same mix, so the delay is what lies between them, in samples.
@Suite(.serialized)
struct OutputDelayIntegrationTests {
    private func makeSandbox() throws -> Sandbox {
        let sandbox = try Sandbox(dropIns: [VirtualDeviceTests.fixtures.appendingPathComponent("interface.conf").path,
                                            VirtualDeviceTests.fixtures.appendingPathComponent("devices.conf").path], pulse: true)
        _ = try sandbox.waitFor("the devices and their links", describe: { "\($0.links(of: "desk"))" }) { graph in
            graph.nodeID("game") != nil && graph.nodeID("interface") != nil && graph.links(of: "desk").count == 4
        }
        let linked = sandbox.shell("pw-link desk:out_FL interface:playback_FL && pw-link desk:out_FR interface:playback_FR")
        guard linked.succeeded else { throw SandboxError("linking the outputs: \(linked.stderr)") }
        // Both inputs to both outputs, so that FL and FR carry the same mix.
        #expect(sandbox.crosspoint("param", "desk", "matrix.FR.FL", "1", "matrix.FL.FR", "1").succeeded)
        return sandbox
    }

    /// Plays `samples` (mono, the same on both channels) into `game` and records the interface's
    /// FL and FR (of all four); `during` runs while it plays.
    private func play(_ sandbox: Sandbox, _ samples: [Float], during: () -> Void = {}) throws -> [[Float]] {
        let tag = "\(UInt32.random(in: 0..<UInt32.max))"
        let wav = Sandbox.audioFolder + "crosspoint-\(tag)-in.wav", recorded = Sandbox.audioFolder + "crosspoint-\(tag)-out.wav"
        defer {
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: recorded)
        }
        try Wave.write([samples, samples], to: wav)
        let recorder = try sandbox.start([
            "pw-record", "--target", "interface", "-P", "{ stream.capture.sink = true node.name = rec-\(tag) }",
            "--channels", "4", "--channel-map", PipeWire.channelMap(["FL", "FR", "RL", "RR"]), "--format", "f32", recorded,
        ])
        guard sandbox.shell("pw_wait_ports rec-\(tag) 4 input").succeeded else {
            recorder.stop()
            throw SandboxError("the recorder has no ports")
        }
        usleep(300_000)
        let player = try sandbox.start(["pw-play", "--target", "game", "-P", "{ node.name = play-\(tag) }", wav])
        during()
        player.wait(timeout: 30)
        usleep(300_000)
        recorder.stop()
        let read = try Wave.read(recorded)
        guard read.count == 4 else { throw SandboxError("recorded \(read.count) channels") }
        return Array(read.prefix(2))
    }

    /// Where the loudest sample of each of `count` stretches of `x` is (one click each).
    private func clicks(_ x: [Float], count: Int, spacing: Int) -> [Int] {
        guard let first = x.indices.first(where: { abs(x[$0]) > 0.05 }) else { return [] }
        return (0..<count).compactMap { k in
            let range = (first + k * spacing - spacing / 4)..<min(x.count, first + k * spacing + spacing / 2)
            guard range.lowerBound < range.upperBound else { return nil }
            return range.max { abs(x[$0]) < abs(x[$1]) }
        }
    }

    @Test func aDelayedOutputIsExactlyThatManySamplesLateInMillisecondsOrSamples() throws {
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        // Clicks a quarter of a second apart, after half a second of silence.
        let spacing = 12000, lead = 24000
        var samples = [Float](repeating: 0, count: lead + 6 * spacing)
        for k in 0..<6 { samples[lead + k * spacing] = 0.5 }
        // Samples are converted at the rate the node runs at (crosspoint.rate), or, while it has
        // not run (its links are passive: nothing has played yet), at the graph's clock.rate.
        for (typed, frames) in [("10ms", 480), ("4801samples", 4801), ("0", 0)] {
            let set = sandbox.crosspoint("delay", "desk", "FR", typed)
            #expect(set.succeeded, "\(set.stderr)")
            if typed == "4801samples" {
                // What people read is rounded to the microsecond.
                #expect(set.stdout.contains("100.021 ms") && !set.stdout.contains("100.0208"), "\(set.stdout)")
            }
            usleep(200_000)  // a first delay starts once the node holds that much of the output
            let read = try play(sandbox, samples)
            let left = clicks(read[0], count: 6, spacing: spacing), right = clicks(read[1], count: 6, spacing: spacing)
            print("delay \(typed): clicks on FL at \(left), on FR at \(right)")
            #expect(left.count == 6 && right.count == 6, "\(typed): every click recorded on both outputs")
            #expect(zip(left, right).allSatisfy { $1 - $0 == frames }, "\(typed): FR is \(frames) samples after FL")
            // The click itself is untouched: the same sample, with silence around it.
            for (l, r) in zip(left, right) {
                #expect(read[1][r] == read[0][l] && read[1][r - 1] == 0 && read[1][r + 1] == 0, "\(typed): click at \(r)")
            }
        }
        let shown = sandbox.crosspoint("show", "desk")
        #expect(!shown.stdout.contains("delay "), "no delay row once the delay is 0")
        #expect(sandbox.crosspoint("delay", "desk", "FR", "12.5ms").succeeded)
        #expect(sandbox.crosspoint("show", "desk").stdout.contains("12.5ms"))
        // Bad input: named, and nothing changes.
        for (arguments, message) in [
            (["delay", "desk", "FR", "1001ms"], "delay.out.1: 1001 ms is above the maximum 1000 ms"),
            (["delay", "desk", "FR", "48001samples"], "48001 samples is more than 1 s at 48000 Hz"),
            (["delay", "desk", "RR", "10"], "no output channel is named 'RR'"),
            (["delay", "desk", "FR", "soon"], "'soon' is not a delay"),
            (["param", "desk", "delay.out.FR", "-3"], "delay.out"),
            (["param", "desk", "delay.out.FR", "576samples"], "`crosspoint delay NODE OUTPUT 576samples` converts them"),
        ] {
            let refused = sandbox.run([crosspointExecutable] + arguments, timeout: 30)
            #expect(!refused.succeeded && refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
        }
        // The node's Props, as pw-dump shows them: the delay, kept through the refusals.
        let props = try Graph(sandbox).params(of: "desk")
        #expect((props["delay.out.1"] as? Double) == 12.5 && (props["delay.out.0"] as? Double) == 0, "\(props["delay.out.1"] ?? "none")")
    }

    @Test func changingADelayWhilePlayingDoesNotClick() throws {
        let sandbox = try makeSandbox()
        defer { sandbox.stop() }
        #expect(sandbox.crosspoint("delay", "desk", "FR", "5ms").succeeded)
        // 1 kHz (48 samples a period); each change moves the delay by half a period or more, where a
        // jump would click hardest.
        let samples = (0..<(48000 * 4)).map { n in n < 24000 ? Float(0) : Float(0.4 * sin(2 * Double.pi * 1000 * Double(n) / 48000)) }
        var clean = false
        for attempt in 1...3 where !clean {
            let read = try play(sandbox, samples) {
                // After the half second of silence has begun to play: every change during the sine.
                usleep(400_000)
                for typed in ["5.5ms", "100ms", "0", "0.5ms", "24samples"] {
                    usleep(450_000)
                    let set = sandbox.crosspoint("delay", "desk", "FR", typed)
                    #expect(set.succeeded, "\(typed): \(set.stderr)")
                }
            }
            // The sine's steady part on FL (its start and end step from and to silence), and the
            // same stretch of FR.
            let first = read[0].firstIndex { abs($0) > 0.01 } ?? 0, last = read[0].lastIndex { abs($0) > 0.01 } ?? 0
            let steady = (first + 4800)..<max(first + 4800, last - 4800)
            func largestStep(_ x: [Float]) -> (Float, Int) {
                var best: (Float, Int) = (0, 0)
                for n in steady.dropFirst() where abs(x[n] - x[n - 1]) > best.0 { best = (abs(x[n] - x[n - 1]), n) }
                return best
            }
            // The undelayed output tells what the machine did: a missed cycle steps it too.
            let (own, at) = largestStep(read[0]), (delayed, atDelayed) = largestStep(read[1])
            print("attempt \(attempt): the sine from \(first) to \(last); largest step on FL at \(at), on FR at \(atDelayed)")
            let peak = read[0].map(abs).max() ?? 0
            let expected = peak * Float(2 * Double.pi * 1000 / 48000)
            print("attempt \(attempt): largest step on FL \(own), on FR \(delayed), the sine's own \(expected)")
            guard own <= expected * 1.1 else { continue }
            clean = true
            #expect(peak > 0.01, "the sine was heard")
            #expect(delayed <= expected * 1.1, "a delay change stepped FR by \(delayed), more than the sine's \(expected)")
            // The last change took: FR ends 24 samples behind FL.
            let end = read[0].lastIndex { abs($0) > 0.01 } ?? 0
            let tail = max(0, end - 12000)..<max(0, end - 100)
            #expect(!tail.isEmpty && tail.allSatisfy { abs(read[1][$0] - read[0][$0 - 24]) < 1e-6 }, "FR is FL 24 samples late at the end")
        }
        #expect(clean, "every recording glitched on the undelayed output too")
    }
}
