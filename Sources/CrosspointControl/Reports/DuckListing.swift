import CrosspointCore

/// `crosspoint duck list --json`: a node's ducking rules, each as its line of text and its
/// parts (the `duck` key; DuckingRule).
package struct DuckListing: Encodable {
    package struct Rule: Encodable {
        let index: Int
        let text: String
        let triggers: [String]
        let inputs: [String]
        let outputs: [String]
        /// Cross-points lowered, by their keys (`matrix.music_FL.FL`).
        let crosspoints: [String]
        let depth: Double, threshold: Double, knee: Double
        let attack: Double, hold: Double, release: Double
        let detect: String
        let enabled: Bool
    }
    package let node: String
    package let rules: [Rule]

    package init(node: String, rules: [DuckingRule]) {
        self.node = node
        self.rules = rules.enumerated().map { n, r in
            Rule(index: n, text: r.text, triggers: r.triggers, inputs: r.inputs, outputs: r.outputs, crosspoints: r.crosspoints.map(\.text),
                 depth: r.depth, threshold: r.threshold, knee: r.knee, attack: r.attack, hold: r.hold, release: r.release,
                 detect: r.detect.rawValue, enabled: r.enabled)
        }
    }
}
