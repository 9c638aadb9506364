import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// Watches the rate the node's data thread runs at (it learns it from the driver each cycle:
/// a graph may run at another rate than `clock.rate`, with `clock.allowed-rates`), once a
/// second on the main loop. On a change: the node property `crosspoint.rate` (what `crosspoint
/// delay` converts samples at), the node's Format at that rate, and delay lines big enough for
/// a second at the new rate. A node part (NodePart).
final class RateWatch: NodePart {
    static let intervalMilliseconds: UInt64 = 1000
    private let loop: UnsafeMutablePointer<pw_loop>
    private let node: FilterNode
    private var timer: UnsafeMutablePointer<spa_source>?
    private var seen = 0

    init(node: FilterNode, loop: UnsafeMutablePointer<pw_loop>) {
        self.loop = loop
        self.node = node
        let data = Unmanaged.passUnretained(self).toOpaque()
        timer = cpshim_loop_add_timer(loop, { data, _ in
            Unmanaged<RateWatch>.fromOpaque(data!).takeUnretainedValue().check()
        }, data)
        if let timer { _ = cpshim_loop_arm_timer(loop, timer, 50) }
    }

    private func check() {
        let rate = node.engine.renderRate
        if rate != seen && rate > 0 {
            seen = rate
            node.engine.refreshDelayLines()
            node.publishProperty(CrosspointProperty.rate, "\(rate)")
            node.publishFormat()
        }
        if let timer { _ = cpshim_loop_arm_timer(loop, timer, Self.intervalMilliseconds) }
    }

    /// Stops watching (before the node goes).
    func destroy(connectionGone: Bool) {
        if let timer { cpshim_loop_destroy_source(loop, timer) }
        timer = nil
    }
}
