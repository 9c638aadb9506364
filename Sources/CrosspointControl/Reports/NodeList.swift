/// The Crosspoint nodes of the daemon: `crosspoint list` and the control surface's node list.
package enum NodeList {
    package struct Entry: Encodable {
        package let id: UInt32
        package let name: String
        package let description: String
        package let inputs: Int
        package let outputs: Int
    }

    /// The Crosspoint nodes, as `list --json` prints them (and the control surface sends them).
    package static func entries(_ session: Session) -> [Entry] {
        session.crosspointNodes.map { node in
            let shape = session.shape(of: node)
            return Entry(id: node.id, name: node.name, description: node.description, inputs: shape.inputs, outputs: shape.outputs)
        }
    }
}
