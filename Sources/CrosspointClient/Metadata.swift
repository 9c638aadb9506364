import CCrosspointShim
import CPipeWire
import CrosspointPipeWire

extension PipeWireClient {
    /// Sets `key` of `subject` in the metadata object named `name` (`default`: the default
    /// devices, `default.configured.audio.sink`, as `wpctl set-default` does; a stream's
    /// `target.object`, as pavucontrol does), then waits for the daemon to have it.
    public func setMetadata(_ name: String, subject: UInt32, key: String, type: String?, value: String?) throws(ClientError) {
        let registry = try Registry(self)
        guard let global = registry.globals.first(where: {
            $0.type == "PipeWire:Interface:Metadata" && $0.properties[PW_KEY_METADATA_NAME] == name
        }) else {
            throw .refused(object: "the \(name) metadata", message: "it does not exist (is a session manager running?)")
        }
        guard let proxy = pw_registry_bind(registry.proxy, global.id, "PipeWire:Interface:Metadata", UInt32(PW_VERSION_METADATA), 0)
        else { throw .refused(object: "the \(name) metadata", message: "it cannot be bound") }
        defer { pw_proxy_destroy(OpaquePointer(proxy)) }
        let result = cpshim_metadata_set_property(OpaquePointer(proxy), subject, key, type, value)
        guard result >= 0 else { throw .refused(object: "the \(name) metadata", message: "setting \(key) failed (\(result))") }
        try roundtrip("the daemon to set \(key)")
    }
}

/// What a metadata object says of one subject, gathered while it is bound.
private final class MetadataReading {
    let subject: UInt32
    var values: [String: String] = [:]
    init(subject: UInt32) { self.subject = subject }

    nonisolated(unsafe) static let events = eventTable(pw_metadata_events(), version: \.version, PW_VERSION_METADATA_EVENTS) { events in
        events.property = { data, subject, key, _, value in
            let reading = Unmanaged<MetadataReading>.fromOpaque(data!).takeUnretainedValue()
            if subject == reading.subject, let key {
                reading.values[String(cString: key)] = value.map { String(cString: $0) }
            }
            return 0
        }
    }
}

extension PipeWireClient {
    /// The keys and values of `subject` in the metadata object named `name` (`settings`:
    /// `clock.rate`, `clock.force-rate`), as the daemon has them now; nil when there is no such
    /// metadata.
    public func metadata(_ name: String, subject: UInt32 = 0) throws(ClientError) -> [String: String]? {
        let registry = try Registry(self)
        guard let global = registry.globals.first(where: {
            $0.type == "PipeWire:Interface:Metadata" && $0.properties[PW_KEY_METADATA_NAME] == name
        }) else { return nil }
        guard let proxy = pw_registry_bind(registry.proxy, global.id, "PipeWire:Interface:Metadata", UInt32(PW_VERSION_METADATA), 0)
        else { return nil }
        let reading = MetadataReading(subject: subject)
        let hook = Hook()
        defer {
            hook.remove()
            pw_proxy_destroy(OpaquePointer(proxy))
        }
        cpshim_metadata_add_listener(OpaquePointer(proxy), hook.pointer, MetadataReading.events, Unmanaged.passUnretained(reading).toOpaque())
        hook.isLinked = true
        try roundtrip("the \(name) metadata")
        return reading.values
    }

    /// The rate the graph runs at: `clock.force-rate` when set, else `clock.rate` (the
    /// `settings` metadata); nil when neither is known.
    public func graphRate() throws(ClientError) -> Double? {
        guard let settings = try metadata("settings") else { return nil }
        for key in ["clock.force-rate", "clock.rate"] {
            if let text = settings[key], let rate = Double(text), rate.isFinite, rate > 0 { return rate }
        }
        return nil
    }
}
