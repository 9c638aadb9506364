/// What `route` and `unroute` did, as `--json` prints it.
package struct RouteReport: Encodable {
    package struct Link: Encodable {
        /// `node:port` of each end.
        package let output: String
        package let input: String
        package let link: UInt32?

        package init(output: String, input: String, link: UInt32?) {
            (self.output, self.input, self.link) = (output, input, link)
        }
    }
    package let node: String
    package let id: UInt32
    package var sink: String?
    package var linked: [Link] = []
    package var alreadyLinked: [Link] = []
    package var unlinked: [Link] = []
    /// Node outputs left without a sink channel.
    package var notLinked: [String] = []

    package init(node: String, id: UInt32, sink: String?) {
        (self.node, self.id, self.sink) = (node, id, sink)
    }

    enum CodingKeys: String, CodingKey { case node, id, sink, linked, alreadyLinked = "already-linked", unlinked, notLinked = "not-linked" }
}
