import CrosspointCore

/// A key of the parameter table as a person gives it: on the command line (`param`, `delay`,
/// `midi learn`), in a change set of the control surface's API, over OSC.
extension Parameter {
    /// Key `key` of the parameter table on mixer `m`, its indices numbers or channel names; a
    /// channel that does not exist is refused naming the channels there are. (Also the control
    /// surface's change sets, MIDI learn, `delay`.)
    package static func typed(_ key: String, in m: Mixer) throws -> Parameter {
        do {
            return try Parameter(key: key, in: m)
        } catch {
            guard case let .invalidValue(_, reason) = error, reason.hasPrefix("no input") || reason.hasPrefix("no output") else { throw error }
            let names = reason.hasPrefix("no input") ? m.inputChannels : m.outputChannels
            // The channel typed: the name the reason quotes ("no input channel is named 'FLL'").
            let typed = reason.split(separator: "'", omittingEmptySubsequences: false).dropFirst().first.map(String.init) ?? ""
            let (ordered, close) = NameSuggestions.rank(typed, names) { [$0] }
            let suggestion = NameSuggestions.phrase(close.map(\.printable))
            throw CommandError.invalid("\(key.printable): \(reason.printable); " + (suggestion.isEmpty ? "" : suggestion + " ")
                + "the \(reason.hasPrefix("no input") ? "inputs" : "outputs") are " + ordered.joined(separator: ", "))
        }
    }

    /// The keys to send once `p` is set on `m`: `p`, but a channel map replaces the matrix, so
    /// its effect is sent as the cross-points it sets (the `channel-map` key reads back empty
    /// once a gain is not unity).
    package static func keysSent(for p: Parameter, _ m: Mixer) -> [Parameter] {
        p == .channelMap ? Parameter.all(for: m).filter { $0.kind == .crosspoint } : [p]
    }
}
