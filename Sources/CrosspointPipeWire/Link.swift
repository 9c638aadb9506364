import CCrosspointShim
import CPipeWire

/// Links made through the daemon's "link-factory", as pw-link does: the one place both the
/// command line (`route`) and the node's memory (re-made links) create a link.
package enum Link {
    /// Asks `core` for a link from an output port to an input port, with `object.linger = true`
    /// so the link outlives the proxy and the client. Returns the new link's proxy (the caller
    /// destroys it once it has its answer), or nil if the request could not be sent.
    /// The corresponding C function is `pw_core_create_object`.
    /// `linkedBy`: the node whose part makes the link (`crosspoint.linked-by`), so that the part
    /// later tells its own links from those a person made. `passive`: `link.passive`, a link
    /// that does not keep its nodes running by itself (PipeWire 0.3 reads it; 1.x derives it
    /// from `node.passive` and drops a client's).
    package static func create(
        on core: OpaquePointer, outputNode: UInt32, outputPort: UInt32, inputNode: UInt32, inputPort: UInt32,
        linkedBy: String? = nil, passive: Bool = false
    ) -> OpaquePointer? {
        guard let properties = cpshim_properties_new() else { return nil }
        defer { pw_properties_free(properties) }
        for (key, value) in [
            (PW_KEY_LINK_OUTPUT_NODE, "\(outputNode)"), (PW_KEY_LINK_OUTPUT_PORT, "\(outputPort)"),
            (PW_KEY_LINK_INPUT_NODE, "\(inputNode)"), (PW_KEY_LINK_INPUT_PORT, "\(inputPort)"),
            (PW_KEY_OBJECT_LINGER, "true"),
        ] { pw_properties_set(properties, key, value) }
        if let linkedBy { pw_properties_set(properties, CrosspointProperty.linkedBy, linkedBy) }
        if passive { pw_properties_set(properties, PW_KEY_LINK_PASSIVE, "true") }
        return pw_core_create_object(
            core, "link-factory", "PipeWire:Interface:Link", UInt32(PW_VERSION_LINK), &properties.pointee.dict, 0
        ).map(OpaquePointer.init)
    }
}
