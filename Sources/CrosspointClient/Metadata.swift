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

    /// The keys of `subject` in the metadata object named `name`, as the daemon has them now
    /// (key: value); empty when there is no such metadata.
    public func metadataProperties(_ name: String, subject: UInt32) throws(ClientError) -> [String: String] {
        try readMetadata(name, subject: subject)[subject] ?? [:]
    }

    /// Every subject's keys in the metadata object named `name` (subject: key: value); empty
    /// when there is no such metadata. One read for all the streams' targets.
    public func metadataBySubject(_ name: String) throws(ClientError) -> [UInt32: [String: String]] {
        try readMetadata(name, subject: nil)
    }

    /// The keys of one subject (or of all, for nil) of the metadata object named `name`.
    private func readMetadata(_ name: String, subject: UInt32?) throws(ClientError) -> [UInt32: [String: String]] {
        let registry = try Registry(self)
        guard let global = registry.globals.first(where: {
            $0.type == "PipeWire:Interface:Metadata" && $0.properties[PW_KEY_METADATA_NAME] == name
        }) else { return [:] }
        guard let proxy = pw_registry_bind(registry.proxy, global.id, "PipeWire:Interface:Metadata", UInt32(PW_VERSION_METADATA), 0)
        else { throw .refused(object: "the \(name) metadata", message: "it cannot be bound") }
        let collected = MetadataReading(subject: subject)
        let hook = Hook()
        defer {
            hook.remove()
            pw_proxy_destroy(OpaquePointer(proxy))
        }
        cpshim_metadata_add_listener(OpaquePointer(proxy), hook.pointer, MetadataReading.events, Unmanaged.passUnretained(collected).toOpaque())
        hook.isLinked = true
        try roundtrip("the \(name) metadata")
        return collected.bySubject
    }

    /// The source the session manager records from by default now (`default.audio.source`'s name), if any.
    public func defaultSourceName() throws(ClientError) -> String? {
        try metadataProperties(DefaultMetadataKey.metadataName, subject: 0)[DefaultMetadataKey.source].flatMap(DefaultMetadataKey.deviceName(inJSON:))
    }

    /// The sink the session manager plays to by default now (`default.audio.sink`'s name), if any.
    public func defaultSinkName() throws(ClientError) -> String? {
        try metadataProperties(DefaultMetadataKey.metadataName, subject: 0)[DefaultMetadataKey.sink].flatMap(DefaultMetadataKey.deviceName(inJSON:))
    }
}

/// What `readMetadata` collects: the keys of one subject or of all, as the daemon sends them.
private final class MetadataReading {
    /// The one subject read, or nil for all of them.
    let subject: UInt32?
    var bySubject: [UInt32: [String: String]] = [:]
    init(subject: UInt32?) { self.subject = subject }

    func received(subject: UInt32, key: String?, value: String?) {
        guard self.subject == nil || subject == self.subject else { return }
        if let key { bySubject[subject, default: [:]][key] = value } else { bySubject[subject] = nil }
    }

    /// Its callbacks.
    nonisolated(unsafe) static let events: UnsafeMutablePointer<pw_metadata_events> = {
        var table = pw_metadata_events()
        table.version = UInt32(PW_VERSION_METADATA_EVENTS)
        table.property = { data, subject, key, _, value in
            guard let data else { return 0 }
            let reading = Unmanaged<MetadataReading>.fromOpaque(data).takeUnretainedValue()
            reading.received(subject: subject, key: key.map { String(cString: $0) }, value: value.map { String(cString: $0) })
            return 0
        }
        let pointer = UnsafeMutablePointer<pw_metadata_events>.allocate(capacity: 1)
        pointer.initialize(to: table)
        return pointer
    }()
}
