import CCrosspointShim
import CPipeWire

extension PipeWireClient {
    /// Links an output port to an input port through the daemon's "link-factory", as pw-link
    /// does. The link has `object.linger = true`, so it stays after this client disconnects.
    /// Returns the new link's global id.
    @discardableResult
    public func createLink(from output: GraphPort, to input: GraphPort) throws(ClientError) -> UInt32? {
        let properties = cpshim_properties_new()!
        defer { pw_properties_free(properties) }
        for (key, value) in [
            ("link.output.node", "\(output.nodeID)"), ("link.output.port", "\(output.id)"),
            ("link.input.node", "\(input.nodeID)"), ("link.input.port", "\(input.id)"),
            ("object.linger", "true"),
        ] { pw_properties_set(properties, key, value) }

        guard let created = pw_core_create_object(
            core, "link-factory", "PipeWire:Interface:Link", UInt32(PW_VERSION_LINK), &properties.pointee.dict, 0)
        else { throw .refused(object: "a link from port \(output.id) to port \(input.id)", message: "cannot create it") }
        let proxy = OpaquePointer(created)
        defer { pw_proxy_destroy(proxy) }  // the link itself lingers
        let proxyID = pw_proxy_get_id(proxy)
        do {
            try roundtrip("the link from port \(output.id) to port \(input.id)")
        } catch .refused(_, let message) {
            throw .refused(object: "a link from \(output.name) to \(input.name)", message: message)
        }
        return boundIDs.removeValue(forKey: proxyID)
    }
}
