// "Did you mean": the names closest to one typed, for the command line's errors and warnings.

import CrosspointCore
import Testing

@Suite("Name suggestions")
struct NameSuggestionsTests {
    @Test("Edit distance: insertions, deletions, substitutions, neighbours swapped, case aside", arguments: [
        ("interface", "interface", 0), ("intrface", "interface", 1), ("interfcae", "interface", 1), ("Interface", "interface", 0),
        ("", "abc", 3), ("abc", "", 3), ("desk", "disk", 1), ("game", "music", 5),
    ])
    func distance(a: String, b: String, expected: Int) {
        #expect(NameSuggestions.distance(a, b) == expected)
    }

    @Test("The closest first, and only the close ones suggested")
    func ranking() {
        let sinks = ["game", "music", "interface", "chat", "alsa_output.usb-MOTU"]
        let (ordered, close) = NameSuggestions.rank("intrface", sinks) { [$0] }
        #expect(ordered.first == "interface")
        #expect(close == ["interface"])
        #expect(NameSuggestions.phrase(close) == "did you mean 'interface'?")
        // A prefix of a long name counts as close; nothing close, nothing suggested.
        #expect(NameSuggestions.rank("alsa_output", sinks) { [$0] }.close == ["alsa_output.usb-MOTU"])
        #expect(NameSuggestions.rank("zzzzzz", sinks) { [$0] }.close.isEmpty)
        // Nothing close: the list as it was.
        #expect(NameSuggestions.rank("zzzzzz", sinks) { [$0] }.ordered == sinks)
        #expect(NameSuggestions.rank("musik", sinks) { [$0] }.ordered == ["music", "game", "interface", "chat", "alsa_output.usb-MOTU"])
        #expect(NameSuggestions.phrase([]) == "")
        #expect(NameSuggestions.phrase(["a", "b", "a", "c", "d"]) == "did you mean 'a', 'b' or 'c'?")
        // An item is as close as the closest of its names (a description, for instance).
        let named = [("alsa_output.pci-0000", "Built-in Audio"), ("alsa_output.usb", "USB Interface")]
        #expect(NameSuggestions.rank("USB Interfce", named) { [$0.0, $0.1] }.close.map(\.0) == ["alsa_output.usb"])
    }

    @Test("Bounded: long names compare by their first characters")
    func bounded() {
        let long = String(repeating: "x", count: 100_000)
        #expect(NameSuggestions.distance(long, long + "y") == 0)
        #expect(NameSuggestions.distance(long, "") == NameSuggestions.maximumLength)
    }
}
