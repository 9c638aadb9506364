import Foundation
import Testing

/// A snapshot of the daemon's objects, read with pw-dump.
struct Graph {
    let objects: [[String: Any]]

    /// pw-dump prints one JSON list of objects, and sometimes (0.3.65, when a global goes
    /// while it starts) first or after it another list with the objects that went
    /// (`{ "id": 41, "info": null }`): the lists are read in order, a null info removing the
    /// object.
    init(_ sandbox: Sandbox) throws {
        let result = sandbox.run(["pw-dump"])
        guard result.succeeded else { throw SandboxError("pw-dump failed (\(result.status)): \(result.stderr)") }
        try self.init(dump: result.stdout)
    }

    /// Reads pw-dump's output.
    init(dump: String) throws {
        var documents: [String] = []
        for line in dump.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "[" || documents.isEmpty { documents.append("") }
            documents[documents.count - 1] += line + "\n"
        }
        var objects: [[String: Any]] = []
        for document in documents where !document.allSatisfy(\.isWhitespace) {
            guard let list = (try? JSONSerialization.jsonObject(with: Data(document.utf8))) as? [[String: Any]] else {
                throw SandboxError("pw-dump printed what is not JSON; its output began: \(dump.prefix(400))")
            }
            if objects.isEmpty && !list.contains(where: { $0["info"] is NSNull }) { objects = list; continue }
            let changed = Set(list.compactMap { $0["id"] as? Int })
            objects.removeAll { ($0["id"] as? Int).map(changed.contains) ?? false }
            objects += list.filter { !($0["info"] is NSNull) }
        }
        guard !objects.isEmpty else { throw SandboxError("pw-dump printed no objects: \(dump.prefix(400))") }
        self.objects = objects
    }

    static func props(_ object: [String: Any]) -> [String: Any] {
        ((object["info"] as? [String: Any])?["props"] as? [String: Any]) ?? [:]
    }

    func nodes(named name: String) -> [[String: Any]] {
        objects.filter { ($0["type"] as? String) == "PipeWire:Interface:Node" && Graph.props($0)["node.name"] as? String == name }
    }

    func nodeID(_ name: String) -> Int? { nodes(named: name).first?["id"] as? Int }

    /// Port names of a node, by direction ("input" or "output"), in id order.
    func ports(of name: String, direction: String) -> [[String: Any]] {
        guard let id = nodeID(name) else { return [] }
        return objects.filter { o in
            (o["type"] as? String) == "PipeWire:Interface:Port"
                && (Graph.props(o)["node.id"] as? Int) == id
                && ((o["info"] as? [String: Any])?["direction"] as? String) == direction
        }.map(Graph.props)
    }

    /// The links of the node named `name`: the peer node's name for each (its id if unnamed).
    func links(of name: String) -> [(peer: String, link: Int)] {
        guard let id = nodeID(name) else { return [] }
        var names: [Int: String] = [:]
        for o in objects where (o["type"] as? String) == "PipeWire:Interface:Node" {
            if let oid = o["id"] as? Int { names[oid] = Graph.props(o)["node.name"] as? String ?? "\(oid)" }
        }
        return objects.compactMap { o -> (peer: String, link: Int)? in
            guard (o["type"] as? String) == "PipeWire:Interface:Link", let info = o["info"] as? [String: Any],
                  let out = info["output-node-id"] as? Int, let inp = info["input-node-id"] as? Int,
                  out == id || inp == id else { return nil }
            let peer = out == id ? inp : out
            return (names[peer] ?? "\(peer)", o["id"] as? Int ?? 0)
        }
    }

    /// Every link, as "node:port -> node:port" (output first; names).
    func portLinks() -> Set<String> {
        var nodeNames: [Int: String] = [:], portNames: [Int: String] = [:]
        for o in objects where (o["type"] as? String) == "PipeWire:Interface:Node" {
            if let oid = o["id"] as? Int { nodeNames[oid] = Graph.props(o)["node.name"] as? String ?? "\(oid)" }
        }
        for o in objects where (o["type"] as? String) == "PipeWire:Interface:Port" {
            guard let oid = o["id"] as? Int else { continue }
            let p = Graph.props(o)
            let node = (p["node.id"] as? Int).flatMap { nodeNames[$0] } ?? "?"
            portNames[oid] = "\(node):\(p["port.name"] as? String ?? "\(oid)")"
        }
        var links: Set<String> = []
        for o in objects where (o["type"] as? String) == "PipeWire:Interface:Link" {
            guard let info = o["info"] as? [String: Any], let out = info["output-port-id"] as? Int,
                  let inp = info["input-port-id"] as? Int, let from = portNames[out], let to = portNames[inp] else { continue }
            links.insert("\(from) -> \(to)")
        }
        return links
    }

    /// The ports linked to port `id`, as `node:port`.
    func linkedPorts(of id: Int) -> [String] {
        var portNames: [Int: String] = [:], nodeNames: [Int: String] = [:]
        for o in objects {
            guard let oid = o["id"] as? Int else { continue }
            switch o["type"] as? String {
            case "PipeWire:Interface:Node": nodeNames[oid] = Graph.props(o)["node.name"] as? String ?? "\(oid)"
            case "PipeWire:Interface:Port":
                let p = Graph.props(o)
                portNames[oid] = "\(p["node.id"] as? Int ?? -1):\(p["port.name"] as? String ?? "\(oid)")"
            default: break
            }
        }
        return objects.compactMap { o -> String? in
            guard (o["type"] as? String) == "PipeWire:Interface:Link", let info = o["info"] as? [String: Any],
                  let out = info["output-port-id"] as? Int, let inp = info["input-port-id"] as? Int, out == id || inp == id,
                  let peer = portNames[out == id ? inp : out] else { return nil }
            let parts = peer.split(separator: ":", maxSplits: 1)
            return "\(Int(parts[0]).flatMap { nodeNames[$0] } ?? String(parts[0])):\(parts.count > 1 ? String(parts[1]) : "")"
        }
    }

    /// The node's current Props params, key to value (pw-dump shows the Struct as a list).
    func params(of name: String) -> [String: Any] {
        guard let node = nodes(named: name).first,
              let params = (node["info"] as? [String: Any])?["params"] as? [String: Any],
              let props = (params["Props"] as? [[String: Any]])?.first,
              let list = props["params"] as? [Any]
        else { return [:] }
        var result: [String: Any] = [:]
        var k = 0
        while k + 1 < list.count {
            if let key = list[k] as? String { result[key] = list[k + 1] }
            k += 2
        }
        for key in ["volume", "mute", "channelVolumes"] { result[key] = props[key] }
        return result
    }

    /// PropInfo names of a node.
    func propInfoNames(of name: String) -> [String] {
        guard let node = nodes(named: name).first,
              let params = (node["info"] as? [String: Any])?["params"] as? [String: Any],
              let infos = params["PropInfo"] as? [[String: Any]]
        else { return [] }
        return infos.compactMap { $0["name"] as? String }
    }
}

extension Sandbox {
    /// Waits until `condition` holds on a fresh pw-dump (one every 50 ms), or fails after
    /// `timeout` seconds (saying what `describe` finds in the last pw-dump).
    func waitFor(_ what: String, timeout: Double = 10, describe: ((Graph) -> String)? = nil,
                 _ condition: (Graph) -> Bool) throws -> Graph {
        var last: Graph?
        return try Wait.forValue(what, timeout: timeout, describe: describe.map { describe in { last.map(describe) ?? "no pw-dump" } }) {
            let graph = try Graph(self)
            last = graph
            return condition(graph) ? graph : nil
        }
    }

    func float(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }
}
