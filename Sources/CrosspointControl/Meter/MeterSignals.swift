import Glibc
import Synchronization

/// Ctrl-C, SIGTERM and SIGHUP end the meter cleanly (the terminal restored, the lease
/// released); a closed pipe (`| head`) ends it too, instead of killing it.
package enum MeterSignals {
    private static let flag = Atomic<Int32>(0)

    package static var stopped: Bool { flag.load(ordering: .relaxed) != 0 }

    package typealias Handlers = [(Int32, __sighandler_t?)]

    package static func install() -> Handlers {
        var previous: Handlers = []
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            previous.append((sig, signal(sig) { _ in MeterSignals.flag.store(1, ordering: .relaxed) }))
        }
        previous.append((SIGPIPE, signal(SIGPIPE, SIG_IGN)))
        return previous
    }

    package static func restore(_ handlers: Handlers) {
        for (sig, handler) in handlers { signal(sig, handler) }
    }
}
