import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// A node as the registry lists it, with all its properties (read from its info).
public struct GraphNode: Sendable, Equatable {
    public let id: UInt32
    public let properties: [String: String]

    public var name: String { properties[PW_KEY_NODE_NAME] ?? "node \(id)" }
    public var description: String { properties[PW_KEY_NODE_DESCRIPTION] ?? properties[PW_KEY_NODE_NICK] ?? name }
    public var mediaClass: String? { properties[PW_KEY_MEDIA_CLASS] }

    /// The mixer shape of a Crosspoint node (`crosspoint.inputs`, `crosspoint.outputs`); nil for other nodes.
    public var crosspointShape: (inputs: Int, outputs: Int)? {
        guard let inputs = properties[CrosspointProperty.inputs].flatMap({ Int($0) }),
              let outputs = properties[CrosspointProperty.outputs].flatMap({ Int($0) }) else { return nil }
        return (inputs, outputs)
    }

    /// An audio device or node that plays what is linked to it (`Audio/Sink`, or `Audio/Duplex`
    /// as a pro-audio interface shows itself).
    public var isSink: Bool { MediaClass.isSink(mediaClass) }
    /// A node applications can record from.
    public var isSource: Bool { MediaClass.isSource(mediaClass) }
    /// An application's stream, playback or recording: not a Crosspoint node's own network
    /// stream (a sender or receiver, which carries `crosspoint.device.of`).
    public var isApplicationStream: Bool { MediaClass.isStream(mediaClass) && properties[CrosspointProperty.deviceOf] == nil }
}

public struct GraphPort: Sendable, Equatable {
    public enum Direction: String, Sendable { case input = "in", output = "out" }
    public let id: UInt32
    public let nodeID: UInt32
    public let direction: Direction
    /// The port's index among its node's ports of the same direction (`port.id`).
    public let index: Int
    public let name: String
    /// `audio.channel`: FL, AUX3, MONO.
    public let channel: String?
    public let isMonitor: Bool
}

public struct GraphLink: Sendable, Equatable {
    public let id: UInt32
    public let outputNode: UInt32
    public let outputPort: UInt32
    public let inputNode: UInt32
    public let inputPort: UInt32
}

/// The daemon's nodes, ports and links at one moment.
public struct GraphSnapshot: Sendable {
    public let nodes: [GraphNode]
    public let ports: [GraphPort]
    public let links: [GraphLink]

    public func node(_ id: UInt32) -> GraphNode? { nodes.first { $0.id == id } }
    public func port(_ id: UInt32) -> GraphPort? { ports.first { $0.id == id } }

    /// A node's ports of one direction, in port order (monitor ports left out).
    public func ports(of node: UInt32, _ direction: GraphPort.Direction) -> [GraphPort] {
        ports.filter { $0.nodeID == node && $0.direction == direction && !$0.isMonitor }.sorted { $0.index < $1.index }
    }

    /// The ports linked to `port`, as `node:port` labels.
    public func peers(of port: GraphPort) -> [String] {
        links.compactMap { link -> UInt32? in
            if link.outputPort == port.id { return link.inputPort }
            if link.inputPort == port.id { return link.outputPort }
            return nil
        }.map(label)
    }

    /// `node.name:port.name` of a port.
    public func label(_ portID: UInt32) -> String {
        guard let port = port(portID) else { return "port \(portID)" }
        return "\(node(port.nodeID)?.name ?? "node \(port.nodeID)"):\(port.name)"
    }

    public func isLinked(output: UInt32, input: UInt32) -> Bool {
        links.contains { $0.outputPort == output && $0.inputPort == input }
    }
}

extension PipeWireClient {
    /// Lists every node, port and link; binds each node to read all its properties.
    public func snapshot() throws(ClientError) -> GraphSnapshot {
        let registry = try Registry(self)
        var nodes: [NodeProxy] = []
        for global in registry.globals where global.type == "PipeWire:Interface:Node" {
            nodes.append(try NodeProxy(self, registry: registry, id: global.id))
        }
        try roundtrip("node information")
        var ports: [GraphPort] = []
        var links: [GraphLink] = []
        for global in registry.globals {
            let p = global.properties
            func id(_ key: String) -> UInt32? { p[key].flatMap { UInt32($0) } }
            switch global.type {
            case "PipeWire:Interface:Port":
                guard let node = id(PW_KEY_NODE_ID), let direction = p[PW_KEY_PORT_DIRECTION].flatMap(GraphPort.Direction.init) else { continue }
                ports.append(GraphPort(
                    id: global.id, nodeID: node, direction: direction, index: p[PW_KEY_PORT_ID].flatMap { Int($0) } ?? Int(global.id),
                    name: p[PW_KEY_PORT_NAME] ?? "port \(global.id)", channel: p[PW_KEY_AUDIO_CHANNEL], isMonitor: p[PW_KEY_PORT_MONITOR] == "true"))
            case "PipeWire:Interface:Link":
                guard let outNode = id(PW_KEY_LINK_OUTPUT_NODE), let outPort = id(PW_KEY_LINK_OUTPUT_PORT),
                      let inNode = id(PW_KEY_LINK_INPUT_NODE), let inPort = id(PW_KEY_LINK_INPUT_PORT) else { continue }
                links.append(GraphLink(id: global.id, outputNode: outNode, outputPort: outPort, inputNode: inNode, inputPort: inPort))
            default:
                continue
            }
        }
        let graphNodes = nodes.map { node in
            GraphNode(id: node.globalID, properties: node.properties
                ?? registry.globals.first { $0.id == node.globalID }?.properties ?? [:])
        }
        return GraphSnapshot(nodes: graphNodes.sorted { $0.id < $1.id }, ports: ports, links: links)
    }
}

extension Registry {
    convenience init(_ client: PipeWireClient) throws(ClientError) {
        self.init(core: client.core)
        try client.roundtrip("the list of objects")
    }
}
