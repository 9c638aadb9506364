import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire
import Glibc

/// A node's part that recalls scenes (issue 31): it claims `scene.recall` and moves the node
/// from the mix it has to the scene by itself, over the time asked (up to 60 s), with no client
/// in the loop.
///
/// Why here, on the main loop, and not in the render cycle: the way is worked out once
/// (`SceneMorph`: which keys move, from what, to what), and every `stepMilliseconds` the part
/// sets each key to where its curve is (gains in dB, equal power where a cross-point fades in or
/// out) and hands the renderer the new plan with its changes gliding over the first half of the
/// step: the audio follows the curve by glides from one point to the next (0.3 dB each for a
/// 60 dB fade over 10 s), never a step, and the render cycle renders half of a move's blocks
/// steady, at a steady mix's cost. The render cycle sees an ordinary
/// ramp, which it already makes without allocating; computing 4,096 curves (exp, sin) per block
/// there would cost the data thread more than the ramps do, and a new plan, which a change of
/// ports or delays needs, can only be allocated here.
///
/// A change someone makes meanwhile to a key the recall moves (a fader, a set-param, MIDI)
/// takes that key out of the move: it stays where they put it. A change of the node's channels
/// plans the rest of the way again from where the mix is. A new recall replaces one under way,
/// from where it is; a recall at time 0 applies the scene at once (at `ramp.ms`).
final class SceneMotion: NodePart {
    /// How often a moving scene sets its keys: 200 steps a move, every 20 ms at the most and
    /// every 50 ms at the least (a move of 10 s: every 50 ms). Each step is a plan made here and
    /// a glide taken over by the renderer; between two points 50 ms apart a gain's curve and the
    /// straight line of its glide differ by less than 0.01 dB (a 60 dB fade over 10 s moves 0.3 dB
    /// a step), and fewer steps cost the main loop and the data thread less (bench-graph).
    static func stepMilliseconds(for duration: Int64) -> Int64 { min(max(duration / 200, 20), 50) }
    /// What each setting glides over: half the step (10 to 25 ms). A glide costs the render
    /// cycle about twice a steady mix (two sums an output): gliding all along (over two steps,
    /// each taken on from where the last was) kept a 64x64 node morphing at 1.53x its static
    /// busy time at quantum 256, half the time 1.18x; the 10 s test's curve is then within
    /// 0.11-0.19 dB instead of 0.05-0.07 (a quarter: 0.31, over the test's 0.3; BENCHMARKS: Scenes moving).
    static func glideMilliseconds(forStep step: Int64) -> Double { Double(step) / 2 }
    /// How often Props follow a moving scene (the last step publishes at once).
    static let publishMilliseconds: UInt64 = 250

    private unowned let node: FilterNode
    private let loop: UnsafeMutablePointer<pw_loop>
    private var timer: UnsafeMutablePointer<spa_source>?

    private struct Move {
        var morph: SceneMorph
        let target: Scene
        /// When the (re)planned way started, and how long it takes, in milliseconds.
        var start: Int64
        var duration: Int64
        /// The mix the last step left: a key that differs from it now was changed by someone else.
        var last: Mixer
        /// When the last step ran, and the most any step ran after its time (ms): a main loop kept
        /// busy (a loaded machine) holds the mix where it is until the step runs, and the move
        /// lags its curve by that much there (each step is taken from the clock: it catches up).
        var lastStep: Int64
        var latest: Int64 = 0
        var steps = 0
    }
    private var move: Move?

    init(node: FilterNode, loop: UnsafeMutablePointer<pw_loop>) {
        self.node = node
        self.loop = loop
    }

    var claimedKeys: [String] { [SceneRecall.key] }

    func request(_ entry: PropsCodec.Entry) {
        do throws(CrosspointError) {
            let recall = try SceneRecall(try Mixer.parameterValue(entry.value, key: SceneRecall.key))
            try start(recall)
        } catch {
            Log.warn("\(node.configuration.nodeName): set-param refused: \(error)")
        }
    }

    func destroy(connectionGone: Bool) {
        if let timer { cpshim_loop_destroy_source(loop, timer) }
        timer = nil
        move = nil
    }

    // MARK: Moving

    private func start(_ recall: SceneRecall) throws(CrosspointError) {
        let mixer = node.mixer
        guard let target = mixer.scene(named: recall.name) else {
            var probe = mixer
            try probe.recall(recall.name)  // throws, naming the scenes there are
            return
        }
        if move != nil { Log.info("\(node.configuration.nodeName): scene recall under way replaced by '\(target.name)'") }
        move = nil
        let unmatched = target.unmatched(on: mixer)
        if !unmatched.inputs.isEmpty || !unmatched.outputs.isEmpty {
            Log.warn("\(node.configuration.nodeName): scene '\(target.name)' has channels this node has not (\(Scene.describe(unmatched: unmatched))): recalled where the names match")
        }
        guard recall.milliseconds > 0 else {
            try node.update { m throws(CrosspointError) in try m.recall(target.name) }
            Log.info("\(node.configuration.nodeName): scene '\(target.name)' recalled")
            return
        }
        move = Move(morph: SceneMorph(from: Scene(name: "", of: mixer), to: target, on: mixer, keeping: mixer.sceneSafeParameters),
                    target: target, start: Self.now(), duration: Int64(recall.milliseconds.rounded(.up)), last: mixer, lastStep: Self.now())
        Log.info("\(node.configuration.nodeName): recalling scene '\(target.name)' over \(Gain.format(recall.milliseconds)) ms")
        step()
    }

    /// Sets every moving key to where its curve is now, and plays it gliding over two steps.
    private func step() {
        guard var m = move else { return }
        let now = Self.now(), current = node.mixer
        if current.inputChannels != m.last.inputChannels || current.outputChannels != m.last.outputChannels {
            // The channels changed: the rest of the way, planned again from where the mix is.
            let left = max(m.duration - (now - m.start), 0)
            m.morph = SceneMorph(from: Scene(name: "", of: current), to: m.target, on: current, keeping: current.sceneSafeParameters)
            (m.start, m.duration) = (now, left)
        } else if current != m.last {
            m.morph = m.morph.leaving(m.morph.moved(between: m.last, and: current))
        }
        let stepTime = Self.stepMilliseconds(for: m.duration)
        if m.steps > 0 { m.latest = max(m.latest, now - m.lastStep - stepTime) }
        (m.lastStep, m.steps) = (now, m.steps + 1)
        let t = m.duration <= 0 ? 1 : min(Double(now - m.start) / Double(m.duration), 1)
        var next = current
        do throws(CrosspointError) {
            try m.morph.apply(at: t, to: &next)
        } catch {
            Log.warn("\(node.configuration.nodeName): scene '\(m.target.name)' stopped: \(error)")
            move = nil
            return
        }
        let final = t >= 1
        m.last = next
        move = final ? nil : m
        let step = Self.stepMilliseconds(for: m.duration)
        node.move(to: next, glide: Self.glideMilliseconds(forStep: step), final: final, publishInterval: Self.publishMilliseconds)
        if final {
            Log.info("\(node.configuration.nodeName): scene '\(m.target.name)' recalled in \(m.steps) steps, the latest \(m.latest) ms late")
            return
        }
        if timer == nil {
            timer = cpshim_loop_add_timer(loop, { data, _ in
                Unmanaged<SceneMotion>.fromOpaque(data!).takeUnretainedValue().step()
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        if let timer { _ = cpshim_loop_arm_timer(loop, timer, UInt64(step)) }
    }

    /// Milliseconds on the monotonic clock.
    private static func now() -> Int64 { LevelPublisher.now() }
}
