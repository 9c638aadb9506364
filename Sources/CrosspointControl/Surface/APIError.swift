import CrosspointClient
import CrosspointCore

/// What an API request gets instead of its answer: an HTTP status, a message, and the key,
/// path part or field it is about.
package struct APIError: Error {
    package let status: Int
    package let message: String
    package let key: String?

    package init(_ status: Int, _ message: String, key: String?) {
        self.status = status
        self.message = message
        self.key = key
    }

    /// Any error a job threw, as the API answers it: the command line's own errors are the
    /// client's fault (400, or 404 for an unknown node); the daemon's are 503.
    package static func from(_ error: any Error, key: String? = nil) -> APIError {
        switch error {
        case let error as APIError: error
        case let CommandError.unknownNode(token, _, _): APIError(404, "no Crosspoint node is called '\(token.printable)'", key: "node")
        case let CommandError.notFound(reason, argument): APIError(404, reason, key: argument)
        case let error as CommandError: APIError(400, error.description, key: key)
        case let error as CrosspointError: APIError(400, error.description.printable, key: key)
        case let error as ClientError: APIError(503, error.description, key: nil)
        default: APIError(400, String(describing: error).printable, key: key)
        }
    }

    package var json: String {
        JSONValue.object([("error", .string(message)), ("key", key.map(JSONValue.string) ?? .null)]).compactText
    }
}
