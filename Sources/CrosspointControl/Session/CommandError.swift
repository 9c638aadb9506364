import CrosspointCore

/// What the command line itself finds wrong; `ClientError` (the daemon) passes through as it
/// is. Every name that came from the daemon or the person is printed escaped (`printable`).
package enum CommandError: Error, CustomStringConvertible {
    /// The nodes closest to the token first, and "did you mean ..." (or nothing).
    case unknownNode(String, crosspointNodes: [String], suggestion: String = "")
    case notCrosspoint(String, id: UInt32)
    case whichNode([String])
    case unknownSink(String, sinks: [String], suggestion: String = "")
    case file(String, String)
    case invalid(String)
    /// Something the person named that is not there (an application, a device to move it to):
    /// said as `reason`; `argument` is what named it (`app`, `to`: the API answers 404, naming it).
    case notFound(String, argument: String)
    case notApplied(node: String, detail: String)

    package var description: String {
        switch self {
        case let .unknownNode(token, nodes, suggestion):
            "unknown node '\(token.printable)'; " + (suggestion.isEmpty ? "" : suggestion + " ") + (nodes.isEmpty
                ? "there is no Crosspoint node on this daemon"
                : "the Crosspoint nodes are: " + nodes.joined(separator: ", "))
        case let .notCrosspoint(token, id):
            "node '\(token.printable)' (id \(id)) is not a Crosspoint node (it has no crosspoint.inputs property)"
        case let .whichNode(nodes):
            nodes.isEmpty ? "there is no Crosspoint node on this daemon"
                : "there are several Crosspoint nodes; name one: " + nodes.joined(separator: ", ")
        case let .unknownSink(token, sinks, suggestion):
            "unknown sink '\(token.printable)'; " + (suggestion.isEmpty ? "" : suggestion + " ")
                + (sinks.isEmpty ? "this daemon has no Audio/Sink" : "the sinks are: " + sinks.joined(separator: ", "))
        case let .file(path, reason):
            "\(path.printable): \(reason)"
        case let .invalid(reason):
            reason
        case let .notFound(reason, _):
            reason
        case let .notApplied(node, detail):
            "\(node.printable) did not take the change (\(detail)); the daemon's log says why"
        }
    }

    /// A core error said the command line's way: counts with their nouns, the valid channel
    /// names beside an unknown one, ranges in the key's unit.
    package static func from(_ error: CrosspointError, _ mixer: Mixer?) -> CommandError {
        switch error {
        case let .indexOutOfRange(what, index, count) where count == 1:
            return .invalid("\(what) index \(index) is out of range (the node has 1 \(what), numbered 0)")
        case let .unknownChannel(what, name):
            guard let mixer else { return .invalid(error.description) }
            let names = what == "input" ? mixer.inputChannels : mixer.outputChannels
            let suggestion = NameSuggestions.phrase(NameSuggestions.rank(name, names) { [$0] }.close.map(\.printable))
            return .invalid("no \(what) channel is named '\(name.printable)'; " + (suggestion.isEmpty ? "" : suggestion + " ")
                + "the \(what)s are " + names.joined(separator: ", ") + " (or their indices, 0 to \(names.count - 1))")
        case let .outOfRange(key, value, range) where ParameterKind(key: key)?.family.unit == .milliseconds:
            return .invalid("\(key): \(Gain.format(value)) ms is \(value < range.lowerBound ? "below the minimum" : "above the maximum") "
                + "\(Gain.format(value < range.lowerBound ? range.lowerBound : range.upperBound)) ms")
        case let .outOfRange(key, value, range) where ParameterKind(key: key)?.family.unit == .decibels:
            return .invalid("\(key): \(Gain.format(value)) dB is outside \(Gain.format(range.lowerBound)) to \(Gain.format(range.upperBound)) dB")
        case let .outOfRange(key, value, range) where ParameterKind(key: key)?.family.unit == .fraction:
            return .invalid("\(key): \(Gain.format(value)) is outside \(Gain.format(range.lowerBound)) to \(Gain.format(range.upperBound))")
        case let .outOfRange(key, value, range):
            return .invalid("\(key): \(Gain.format(value)) is outside the linear range \(Gain.format(range.lowerBound)) to "
                + "\(Gain.format(range.upperBound)) (+\(Gain.format(GainInput.maximumDecibels)) dB, either polarity)")
        case let .unknownKey(key):
            return .invalid("unknown parameter '\(key.printable)'; `crosspoint params` lists the keys")
        default:
            return .invalid(error.description.printable)
        }
    }
}
