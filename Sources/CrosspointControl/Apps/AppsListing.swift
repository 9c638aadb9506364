import CrosspointClient

/// `crosspoint apps --json` (and `GET /api/apps`).
package struct AppsListing: Encodable {
    package struct Place: Encodable {
        package struct Mixer: Encodable { let node: String, inputs: [String] }
        package let id: UInt32, name: String, description: String
        /// The Crosspoint node and channels the audio reaches (or comes from) through this
        /// device (nil for a device of its own): a playback stream's inputs, a recording's outputs.
        package let mixer: Mixer?
        /// "inputs" or "outputs": what `mixer.inputs` are (not encoded: JSON keeps `inputs`).
        private let word: String

        package init(_ place: StreamPlace, kind: AppStream.Kind) {
            (id, name, description) = (place.node.id, place.node.name, place.node.description)
            mixer = place.mixer.map { Mixer(node: $0.name, inputs: $0.inputs) }
            word = kind == .playback ? "inputs" : "outputs"
        }

        enum CodingKeys: String, CodingKey { case id, name, description, mixer }

        /// `interface`, `game (desk inputs game_FL, game_FR)`, `desk (inputs FL)`.
        package var text: String {
            guard let mixer else { return name.printable }
            let channels = mixer.inputs.isEmpty ? "" : " \(word) " + mixer.inputs.joined(separator: ", ")
            return mixer.node == name ? "\(name)\(channels.isEmpty ? "" : " (\(channels.dropFirst()))")".printable
                : "\(name) (\(mixer.node)\(channels))".printable
        }
    }

    package struct App: Encodable {
        package let id: UInt32, app: String, node: String, pid: Int?, role: String?, media: String?
        package let kind: AppStream.Kind
        /// The device the stream is pinned to; nil: it follows the default device.
        package let pinnedTo: String?
        /// Where it plays (or, recording, where it records from).
        package let plays: [Place]

        package init(_ stream: AppStream, places: [StreamPlace], target: StreamTarget) {
            (id, app, node, pid, role, media) = (stream.id, stream.application, stream.node.name, stream.pid, stream.role, stream.media)
            kind = stream.kind
            if case let .pinned(device) = target { pinnedTo = device } else { pinnedTo = nil }
            plays = places.map { Place($0, kind: stream.kind) }
        }

        package func encode(to encoder: any Encoder) throws {
            // Absent values are null, not left out: a script reads every key of every app.
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(app, forKey: .app)
            try c.encode(node, forKey: .node)
            try c.encode(pid, forKey: .pid)
            try c.encode(role, forKey: .role)
            try c.encode(media, forKey: .media)
            try c.encode(kind.rawValue, forKey: .kind)
            try c.encode(pinnedTo == nil, forKey: .followsDefault)
            try c.encode(pinnedTo, forKey: .pinnedTo)
            try c.encode(plays, forKey: .plays)
        }

        enum CodingKeys: String, CodingKey { case id, app, node, pid, role, media, kind, followsDefault, pinnedTo, plays }
    }

    package let apps: [App]
}
