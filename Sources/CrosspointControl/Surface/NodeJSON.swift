#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CrosspointCore

/// The JSON the API and the WebSocket send, made the command line's way.
package enum NodeJSON {
    /// `crosspoint list --json`, on one line.
    package static func list(_ session: Session) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(NodeList.entries(session))).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// A value as compact JSON, keys sorted.
    package static func compact(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// `crosspoint show --json` of node `token` (an id or a name).
    package static func document(_ session: Session, _ token: String) throws -> String {
        let target = try session.target(token)
        let mixer = try session.mixer(of: target)
        var view = NodeView(target: target, mixer: mixer, graph: session.graph)
        view.deviceStatus = NodeView.deviceStatus(session, target, mixer)
        return try JSONText.encode(view.document)
    }

    package static func document(_ session: Session, _ id: UInt32) throws -> String { try document(session, String(id)) }

    /// Levels as `[[peak_db, rms_db], ...]`, null for silence.
    package static func levels(_ levels: [Level]) -> String {
        "[" + levels.map { "[\(Level.json($0.peak)),\(Level.json($0.rms))]" }.joined(separator: ",") + "]"
    }
}
