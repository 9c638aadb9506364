import CCrosspointShim
import CPipeWire

/// PipeWire's log, under the topic `mod.crosspoint` (`PIPEWIRE_DEBUG=mod.crosspoint:4`, on
/// 0.3.65 and, the topic registered, on 1.x), each
/// line marked with the Swift file, line and function that logged it. Never called on the
/// data thread.
public enum Log {
    /// Once per module instance, before logging (PipeWire 1.x: registers the topic, which
    /// gives it the level PIPEWIRE_DEBUG names for it); `tearDown()` balances it.
    public static func setUp() { cpshim_log_init() }
    public static func tearDown() { cpshim_log_deinit() }

    public static func error(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: Int = #line, function: StaticString = #function) {
        write(SPA_LOG_LEVEL_ERROR, message, file, line, function)
    }

    public static func warn(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: Int = #line, function: StaticString = #function) {
        write(SPA_LOG_LEVEL_WARN, message, file, line, function)
    }

    public static func info(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: Int = #line, function: StaticString = #function) {
        write(SPA_LOG_LEVEL_INFO, message, file, line, function)
    }

    public static func debug(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: Int = #line, function: StaticString = #function) {
        write(SPA_LOG_LEVEL_DEBUG, message, file, line, function)
    }

    /// Formats the message only when the level is enabled.
    private static func write(
        _ level: spa_log_level, _ message: () -> String, _ file: StaticString, _ line: Int, _ function: StaticString
    ) {
        guard cpshim_log_enabled(level) else { return }
        file.withUTF8Buffer { fileBytes in
            function.withUTF8Buffer { functionBytes in
                // StaticStrings are NUL-terminated in the binary.
                guard let file = fileBytes.baseAddress, let function = functionBytes.baseAddress else { return }
                file.withMemoryRebound(to: CChar.self, capacity: fileBytes.count + 1) { fileName in
                    function.withMemoryRebound(to: CChar.self, capacity: functionBytes.count + 1) { functionName in
                        cpshim_log(level, fileName, Int32(clamping: line), functionName, message())
                    }
                }
            }
        }
    }
}

/// A table of PipeWire event callbacks (`pw_filter_events`, `pw_registry_events` ...), made
/// once per process and never changed, like the `static const struct ..._events` tables of
/// PipeWire's own C: its version set, then the callbacks `fill` sets, the rest NULL. Lives as
/// long as the process, as those do (the module is never unloaded: `-z nodelete`). The version
/// is set by a closure, not a key path: a key path is made at run time by the standard
/// library's key path code, which sits on a block of its big code section of its own.
package func eventTable<Events>(
    _ empty: Events, version: (inout Events, UInt32) -> Void, _ number: Int32, _ fill: (inout Events) -> Void
) -> UnsafeMutablePointer<Events> {
    var events = empty
    version(&events, UInt32(number))
    fill(&events)
    let table = UnsafeMutablePointer<Events>.allocate(capacity: 1)
    table.initialize(to: events)
    return table
}
