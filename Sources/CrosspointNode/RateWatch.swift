import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// Watches the rate the node's data thread runs at (it learns it from the driver each cycle:
/// a graph may run at another rate than `clock.rate`, with `clock.allowed-rates`), once a
/// second on the main loop. On a change: the node property `crosspoint.rate` (what `crosspoint
/// delay` converts samples at), and delay lines big enough for a second at the new rate.
final class RateWatch {
    static let intervalMilliseconds: UInt64 = 1000
    private let loop: UnsafeMutablePointer<pw_loop>
    private let engine: MatrixMixer
    private var timer: UnsafeMutablePointer<spa_source>?
    private var seen = 0
    /// Called on the main loop with the new rate.
    var onChange: ((Int) -> Void)?

    init(loop: UnsafeMutablePointer<pw_loop>, engine: MatrixMixer) {
        self.loop = loop
        self.engine = engine
        let data = Unmanaged.passUnretained(self).toOpaque()
        timer = cpshim_loop_add_timer(loop, { data, _ in
            Unmanaged<RateWatch>.fromOpaque(data!).takeUnretainedValue().check()
        }, data)
        if let timer { _ = cpshim_loop_arm_timer(loop, timer, 50) }
    }

    private func check() {
        let rate = engine.renderRate
        if rate != seen && rate > 0 {
            seen = rate
            engine.refreshDelayLines()
            onChange?(rate)
        }
        if let timer { _ = cpshim_loop_arm_timer(loop, timer, Self.intervalMilliseconds) }
    }

    /// Stops watching (before the node goes).
    func destroy() {
        if let timer { cpshim_loop_destroy_source(loop, timer) }
        timer = nil
        onChange = nil
    }
}
