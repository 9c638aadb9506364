import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire
import Glibc

// The levels' design, from the node's side. Measuring on the data thread and the two banks
// between the threads: the header of Sources/CrosspointCore/Levels.swift. Reading them from
// outside: `LevelsWatcher` (CrosspointClient).
//
// On the main loop (this class): a timer collects what the data thread measured every 50 ms
// (or at the interval, if shorter) into totals (`LevelMeter.collect`), so a reading is at most
// one collection old whatever the interval; at the interval, the totals become a reading
// (`LevelReading`, rounded to 0.1 dB) and go out. A reading never waits for more than one
// interval and never comes more often than the data thread runs (a 2048-frame quantum, 43 ms,
// gives 23 readings a second at a 33 ms interval). If the data thread has not switched for
// 500 ms, the node is not running (nothing is linked to it): the reading says so (frames 0,
// every port silent).
//
// Who watches: a lease in a write-only key. A watcher sends `"levels.watch" [ watcher interval ]`
// as a set-param; `[ watcher 0 ]` ends it. A lease lasts 4 s; the watcher renews it every
// second. Up to 16 watchers (`LevelLeases`); the node publishes at the shortest interval any
// asked for, at least 33 ms (30 a second). A newcomer beyond 16 takes the place of the lease
// that ends first. The key is in the parameter table (`ParameterKind.levelsWatch`, access
// `.writeOnly`): PropInfo lists it, Props does not, and the model checks it and stays as it is
// (`Mixer.set`), so a fuzzed or stray `levels.watch` changes nothing. This part claims the key
// (`NodePart.claimedKeys`): the node's owner takes the watches out of a set-param before the
// mixer sees the rest, and a set-param that carried only watches republishes nothing. The
// values come from any client: `Int(exactly:)` and range checks, a warning naming the key for
// anything else.
//
// How the levels leave the node: a node property. `crosspoint.levels` is compact JSON
// (`LevelsCodec`):
//
//   {"seq":42,"interval":50,"frames":2400,"inputs":[[-12.0,-15.0],...],"outputs":[...]}
//
// one `[peak, rms]` per port in port order, null for silence; an empty string once nobody
// watches. It is set with `pw_filter_update_properties`, so the daemon sends the node's info
// to every client bound to the node. The ways out the design's issue listed, weighed:
//
//   way out                 cost to every other client               readable by             chosen
//   ----------------------  ---------------------------------------  ----------------------  ------
//   levels inside Props     the whole matrix (hundreds of kB at      anything reading Props  no
//                           64x64, every key) to every listener at
//                           every reading
//   a capture stream per    one link and one stream per port (512    a PipeWire client that  no
//   watched port            at 256x256) in everyone's graph, and     captures
//                           real-time work in the watcher
//   a separate small param  only subscribed clients get it, but      a client that knows     no
//   (another param id)      there is no param id for levels: a       the id
//                           made-up id shows as a number in pw-dump
//                           and pw-cli, and needs enum_params or a
//                           subscription to read
//   shared memory           none, the cheapest by far                only our client: it     no
//                                                                    needs a way to pass
//                                                                    the memory (no
//                                                                    PipeWire tool can read
//                                                                    it)
//   node properties         every client bound to the node           pw-cli info, pw-dump,   yes
//                           (WirePlumber, patchbays, pw-dump -m)     pw-mon, any client's
//                           receives the node's whole property       node info
//                           dictionary at each reading: under 1 kB
//                           for a small node, at most 8.3 kB of
//                           levels plus the other properties at
//                           256x256, at most 30 times a second, and
//                           only while leased
//
// Node properties are the one way any tool reads with no code, and the cost falls only while
// someone watches. Measured on a machine with 2 vCPUs: a 256x256 node watched at 33 ms (23
// readings a second under the player's 2048-frame quantum) cost the daemon 1.2% of a core more
// than unwatched, WirePlumber 0.1% more. PipeWire sets no limit on a property's length; the
// native protocol's buffers grow to fit a message. The lease, not a flag, bounds it: a watcher
// that dies takes the publishing with it within 4 s.

/// Publishes a node's levels while someone watches (main loop): keeps the watchers' leases
/// (`levels.watch`), starts the data thread's meter with the first lease and stops it with the
/// last. A timer collects what the data thread measured every `collectionPeriod` (or faster,
/// at a shorter interval), and at the shortest interval asked for the reading goes out, as
/// text (`LevelsCodec`), as the node property `crosspoint.levels`. A reading is therefore at
/// most one collection old, whatever the interval. Props are never republished for it. A node
/// part (NodePart); the meter is the node's (its data thread's tap is in the node's context).
final class LevelPublisher: NodePart {
    /// How often the data thread is asked to hand over what it measured.
    static let collectionPeriod = 50
    /// The longest a switch of banks may wait for the data thread (the longest quantum, 8192
    /// frames, is 186 ms at 44.1 kHz): past it, the node is not running, and a reading says so
    /// (frames 0, every channel silent).
    static let idleAfterMilliseconds: Int64 = 500

    private let node: FilterNode
    private let meter: LevelMeter
    private var leases = LevelLeases()
    private let loop: UnsafeMutablePointer<pw_loop>
    private var timer: UnsafeMutablePointer<spa_source>?
    /// The interval published at; nil when not publishing.
    private var publishingInterval: Int?
    /// When the next reading is due, and since when the data thread has not made the switch
    /// asked for.
    private var nextReading: Int64 = 0
    private var waitingSince: Int64 = 0
    private var sequence = 0

    init(node: FilterNode, loop: UnsafeMutablePointer<pw_loop>) {
        self.node = node
        meter = node.levelMeter
        self.loop = loop
    }

    var claimedKeys: [String] { [LevelWatch.key] }

    /// A `levels.watch` request: applied, or refused with a warning naming the key.
    func request(_ entry: PropsCodec.Entry) {
        do throws(CrosspointError) {
            apply(try LevelWatch(entry))
        } catch {
            Log.warn("\(node.configuration.nodeName): set-param refused: \(error)")
        }
    }

    /// Sets the property (the text is empty when the last watcher has gone).
    private func publish(_ text: String) { node.publishProperty(LevelsCodec.property, text) }

    /// Takes a watcher's request: starts publishing with the first lease, follows the shortest
    /// interval, stops at once when the last watcher releases its lease.
    func apply(_ watch: LevelWatch) {
        let now = LevelPublisher.now()
        leases.expire(now: now)
        leases.apply(watch, now: now)
        guard let interval = leases.interval else {
            stop()
            return
        }
        if publishingInterval == nil {
            meter.start()
            waitingSince = now
            nextReading = now + Int64(interval)
            publishingInterval = interval
            arm(milliseconds: Int64(min(interval, LevelPublisher.collectionPeriod)))
        } else if interval != publishingInterval {
            // A faster watcher gets its first reading on time.
            nextReading = min(nextReading, now + Int64(interval))
            publishingInterval = interval
            arm(milliseconds: Int64(min(interval, LevelPublisher.collectionPeriod)))
        }
    }

    /// Stops publishing and frees the timer; before the filter goes.
    func destroy(connectionGone: Bool) {
        meter.stop()
        if let timer { cpshim_loop_destroy_source(loop, timer) }
        timer = nil
        publishingInterval = nil
    }

    private func tick() {
        let now = LevelPublisher.now()
        leases.expire(now: now)
        guard let interval = leases.interval else {
            stop()
            return
        }
        publishingInterval = interval
        if meter.collect() { waitingSince = now }
        var delay = Int64(min(interval, LevelPublisher.collectionPeriod))
        if now >= nextReading {
            let idle = meter.isWaiting && now - waitingSince >= LevelPublisher.idleAfterMilliseconds
            if meter.collectedFrames > 0 || idle {
                let mixer = node.mixer
                sequence += 1
                var reading = meter.reading(inputs: mixer.inputs, outputs: mixer.outputs, sequence: sequence, interval: interval)
                reading.ducking = node.engine.duckingReductions
                publish(LevelsCodec.text(reading))
                // From now, not from when it was due: never more than one reading an interval.
                nextReading = now + Int64(interval)
                if idle { waitingSince = now }
            } else if now - waitingSince < 200 {
                // Due, but the data thread has not handed anything over yet: look again soon.
                delay = 5
            }
        }
        arm(milliseconds: min(delay, max(1, nextReading - now)))
    }

    private func stop() {
        guard publishingInterval != nil else { return }
        publishingInterval = nil
        meter.stop()
        if let timer { _ = cpshim_loop_arm_timer(loop, timer, 0) }
        publish("")
    }

    private func arm(milliseconds: Int64) {
        if timer == nil {
            timer = cpshim_loop_add_timer(loop, { data, _ in
                Unmanaged<LevelPublisher>.fromOpaque(data!).takeUnretainedValue().tick()
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        if let timer { _ = cpshim_loop_arm_timer(loop, timer, UInt64(max(milliseconds, 1))) }
    }

    /// Milliseconds on the monotonic clock.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
