/// `crosspoint midi list --json`: the ports on or off, and the mappings.
package struct MIDIListing: Encodable {
    package let midi: Bool
    package let mappings: [String]

    package init(midi: Bool, mappings: [String]) {
        (self.midi, self.mappings) = (midi, mappings)
    }

    enum CodingKeys: String, CodingKey { case midi, mappings = "midi.map" }
}
