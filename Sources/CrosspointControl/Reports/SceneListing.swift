import CrosspointCore

/// `crosspoint scene list --json`: a node's scenes (the `scenes` key; Scene), its recall safes
/// and its morph fader.
package struct SceneListing: Encodable {
    package struct Entry: Encodable {
        let name: String
        let inputs: [String]
        let outputs: [String]
        /// The scene's channels the node has no channel of that name for (a recall leaves them be).
        let unmatchedInputs: [String]
        let unmatchedOutputs: [String]
        let text: String
    }
    package struct Morph: Encodable {
        let between: [String]
        let position: Double
    }
    package let node: String
    package let scenes: [Entry]
    package let safes: [String]
    package let morph: Morph

    package init(node: String, mixer: Mixer) {
        self.node = node
        scenes = mixer.scenes.map { s in
            let unmatched = s.unmatched(on: mixer)
            return Entry(name: s.name, inputs: s.inputs, outputs: s.outputs,
                         unmatchedInputs: unmatched.inputs, unmatchedOutputs: unmatched.outputs, text: s.text)
        }
        safes = mixer.sceneSafes
        morph = Morph(between: mixer.morphScenes, position: mixer.morphPosition)
    }
}
