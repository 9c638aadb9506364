import Foundation

/// Machines on a network of the test's own, for tests that send audio between daemons: each a
/// network namespace held by a process (`unshare --net`, entered with `nsenter`: no /run/netns
/// mount, so it works in the PipeWire 1.4 root's chroot too), joined through a bridge in one
/// more namespace (the switch) by a veth pair each. Addresses are only inside those
/// namespaces (10.x.y.k/24, random x and y); multicast is routed to each machine's link. Gone
/// with `close()` (the holders end, and their namespaces with every link in them).
final class NetworkLab {
    /// A machine: its address, its link's name, and the command prefix that runs in it.
    struct Machine {
        let address: String
        let link: String
        let prefix: [String]
    }

    private(set) var machines: [Machine] = []
    private var holders: [Background] = []
    private let environment = ProcessInfo.processInfo.environment

    /// `count` machines.
    init(machines count: Int) throws {
        let tag = String(UInt32.random(in: 0..<0xFFFF), radix: 16)
        let subnet = "10.\(Int.random(in: 100...199)).\(Int.random(in: 1...254))"
        do {
            let hub = try hold()
            var script = """
            set -e
            \(hub.joined(separator: " ")) sh -ec 'ip link add br\(tag) type bridge mcast_snooping 0; ip link set br\(tag) up; ip link set lo up'

            """
            for k in 0..<count {
                let machine = try hold()
                let (link, port) = ("xn\(tag)m\(k)", "xn\(tag)p\(k)")
                script += """
                ip link add \(link) type veth peer name \(port)
                ip link set \(link) netns \(holders[k + 1].pid); ip link set \(port) netns \(holders[0].pid)
                \(hub.joined(separator: " ")) sh -ec 'ip link set \(port) master br\(tag); ip link set \(port) up'
                \(machine.joined(separator: " ")) sh -ec 'ip addr add \(subnet).\(k + 1)/24 dev \(link); ip link set \(link) up; ip link set lo up; ip route add 224.0.0.0/4 dev \(link)'

                """
                machines.append(Machine(address: "\(subnet).\(k + 1)", link: link, prefix: machine))
            }
            let made = Sandbox.run(["bash", "-c", script], environment: environment)
            guard made.succeeded else { throw SandboxError("making the network: \(made.stderr)") }
        } catch {
            close()
            throw error
        }
    }

    /// A new namespace, held by a process until `close()`: the prefix that runs a command in it.
    private func hold() throws -> [String] {
        let holder = try Background(["unshare", "--net", "sleep", "600"], environment: environment)
        holders.append(holder)
        let ours = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")) ?? ""
        try Wait.until("a network namespace of its own", timeout: 5) {
            let theirs = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(holder.pid)/ns/net")) ?? ours
            return theirs != ours
        }
        return ["nsenter", "-t", "\(holder.pid)", "-n"]
    }

    /// Runs `script` (bash) in machine `k`.
    @discardableResult
    func run(on k: Int, _ script: String) -> CommandResult {
        Sandbox.run(machines[k].prefix + ["bash", "-c", script], environment: environment)
    }

    func close() {
        for holder in holders { holder.stop() }
        holders = []
    }

    deinit { close() }
}
