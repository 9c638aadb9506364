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
