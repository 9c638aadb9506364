import CCrosspointShim
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
        let result = cpshim_registry_destroy(registry.proxy, id)
        guard result >= 0 else { throw .refused(object: "object \(id)", message: String(cString: strerror(-result))) }
        try roundtrip("the daemon to destroy object \(id)")
    }

    /// The libpipewire this command runs with (`0.3.65`).
    public static var libraryVersion: String { String(cString: pw_get_library_version()) }
}
