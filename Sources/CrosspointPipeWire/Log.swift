import CCrosspointShim
import CPipeWire

/// PipeWire's log, under the topic `mod.crosspoint` (`PIPEWIRE_DEBUG=mod.crosspoint:4`).
/// Never called on the data thread.
public enum Log {
    public static func setUp() { cpshim_log_init() }
    public static func error(_ message: String) { cpshim_log(SPA_LOG_LEVEL_ERROR, message) }
    public static func warn(_ message: String) { cpshim_log(SPA_LOG_LEVEL_WARN, message) }
    public static func info(_ message: String) { cpshim_log(SPA_LOG_LEVEL_INFO, message) }
    public static func debug(_ message: @autoclosure () -> String) {
        if cpshim_log_enabled(SPA_LOG_LEVEL_DEBUG) { cpshim_log(SPA_LOG_LEVEL_DEBUG, message()) }
    }
}
