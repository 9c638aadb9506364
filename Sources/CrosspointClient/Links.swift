import CPipeWire
import CrosspointPipeWire

extension PipeWireClient {
    /// Links an output port to an input port, as pw-link does; the link lingers after this
    /// client disconnects. Returns the new link's global id.
    @discardableResult
    public func createLink(from output: GraphPort, to input: GraphPort) throws(ClientError) -> UInt32? {
        guard let proxy = Link.create(
            on: core, outputNode: output.nodeID, outputPort: output.id, inputNode: input.nodeID, inputPort: input.id)
        else { throw .refused(object: "a link from port \(output.id) to port \(input.id)", message: "cannot create it") }
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
