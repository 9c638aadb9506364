import CPipeWire
import Glibc
import CrosspointPipeWire

extension PipeWireClient {
    /// Asks the daemon to destroy a global object (a link, as `pw-link -d` does), then waits
    /// for it to have done so. Throws what the daemon answers (no permission, no such object).
    public func destroy(global id: UInt32) throws(ClientError) {
        let registry = try Registry(self)
        guard registry.globals.contains(where: { $0.id == id }) else {
            throw .refused(object: "object \(id)", message: "it does not exist (any more)")
        }
        // pw_registry_destroy is a method macro over the registry's interface: call the
        // method through its table, as the macro does.
        let interface = UnsafeMutableRawPointer(registry.proxy).assumingMemoryBound(to: spa_interface.self)
        guard let funcs = interface.pointee.cb.funcs else {
            throw .refused(object: "object \(id)", message: "the registry has no methods")
        }
        let methods = funcs.assumingMemoryBound(to: pw_registry_methods.self)
        guard let destroy = methods.pointee.destroy else {
            throw .refused(object: "object \(id)", message: "the registry cannot destroy objects")
        }
        let result = destroy(interface.pointee.cb.data, id)
        guard result >= 0 else { throw .refused(object: "object \(id)", message: String(cString: strerror(-result))) }
        try roundtrip("the daemon to destroy object \(id)")
    }

    /// The libpipewire this command runs with (`0.3.65`).
    public static var libraryVersion: String { String(cString: pw_get_library_version()) }
}
