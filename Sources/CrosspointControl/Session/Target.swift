import CrosspointClient
import CrosspointCore
import CrosspointPipeWire

/// A Crosspoint node found in the graph, with its ports in order.
package struct Target {
    package let node: GraphNode
    package let inputs: [GraphPort]
    package let outputs: [GraphPort]

    /// Port names: the node names its ports `in_<channel>` and `out_<channel>`. Made from the
    /// mixer's channel names, not from the registry, which keeps announcing the name a port
    /// was created with after a rename (see README, "Channel names").
    package func inputName(_ i: Int, _ mixer: Mixer) -> String { PortName.input(mixer.inputChannels[i]) }
    package func outputName(_ j: Int, _ mixer: Mixer) -> String { PortName.output(mixer.outputChannels[j]) }

    /// `ports` in channel order: each channel's port by its name (`names`: `out_FL`...; a
    /// renamed channel's port is a new object, listed after the others), then the rest (ports
    /// leaving after a resize); as they are if a name has no port.
    package func ordered(_ ports: [GraphPort], _ names: [String]) -> [GraphPort] {
        let named = names.compactMap { name in ports.first { $0.name == name } }
        guard named.count == names.count else { return ports }
        return named + ports.filter { port in !named.contains { $0.id == port.id } }
    }

    /// The node's name, safe to print.
    package var name: String { node.name.printable }
}
