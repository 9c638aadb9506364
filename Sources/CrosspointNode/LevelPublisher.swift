import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire
import Glibc

/// Publishes a node's levels while someone watches (main loop): keeps the watchers' leases
/// (`levels.watch`), starts the data thread's meter with the first lease and stops it with the
/// last. A timer collects what the data thread measured every `collectionPeriod` (or faster,
/// at a shorter interval), and at the shortest interval asked for the reading goes out, as
/// text (`LevelsCodec`), to `onPublish`, which sets the node property `crosspoint.levels`.
/// A reading is therefore at most one collection old, whatever the interval. Props are never
/// republished for it.
final class LevelPublisher {
    /// How often the data thread is asked to hand over what it measured.
    static let collectionPeriod = 50
    /// The longest a switch of banks may wait for the data thread (the longest quantum, 8192
    /// frames, is 186 ms at 44.1 kHz): past it, the node is not running, and a reading says so
    /// (frames 0, every channel silent).
    static let idleAfterMilliseconds: Int64 = 500

    private let meter = LevelMeter()
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

    /// Sets the property (the text is empty when the last watcher has gone).
    var onPublish: ((String) -> Void)?
    /// The node's input and output counts now.
    var shape: () -> (inputs: Int, outputs: Int) = { (0, 0) }

    init(loop: UnsafeMutablePointer<pw_loop>) {
        self.loop = loop
    }

    /// The data thread's half of the meter.
    var tap: LevelTap { meter.tap }

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

    /// Stops publishing and frees the timer; call before the filter goes.
    func destroy() {
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
                let (inputs, outputs) = shape()
                sequence += 1
                onPublish?(LevelsCodec.text(meter.reading(inputs: inputs, outputs: outputs, sequence: sequence, interval: interval)))
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
        onPublish?("")
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
