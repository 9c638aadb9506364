import CrosspointCore

/// `crosspoint load` and the control surface's `POST /api/nodes/NODE/load`: a preset applied
/// to a node through `change`, so that it is checked, sent, confirmed and reported as any change.
extension Session {
    /// Checks `preset` (read from `source`) and applies it to `target`: all of it, or nothing.
    package func load(_ preset: Preset, source: String, into target: Target, report: Reporter) throws {
        try PresetFile.check(preset, source: source)
        let mixer = try change(target, report: report) { m in
            guard preset.inputs == m.inputs, preset.outputs == m.outputs else {
                throw CommandError.invalid("the preset is for \(counted(preset.inputs, "input")) x \(counted(preset.outputs, "output")) "
                    + "but the node has \(m.inputs) x \(m.outputs)")
            }
            try m.apply(preset)
        }
        if let differences = preset.channelNameDifferences(from: mixer) {
            report.warn("channel names differ: \(differences.printable)")
        }
    }
}
