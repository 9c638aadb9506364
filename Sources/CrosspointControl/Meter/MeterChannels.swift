
/// The port and channel names of a node's inputs and outputs, in port order.
package struct MeterChannels {
    package var inputs: [(port: String, channel: String)]
    package var outputs: [(port: String, channel: String)]

    package init(_ session: Session, _ target: Target) throws {
        let mixer = try session.mixer(of: target)
        inputs = (0..<mixer.inputs).map { (target.inputName($0, mixer), mixer.inputChannels[$0]) }
        outputs = (0..<mixer.outputs).map { (target.outputName($0, mixer), mixer.outputChannels[$0]) }
    }
}
