// Who hears a node's changes over OSC: each subscriber's address and the nodes it follows,
// bounded. At most `capacity` subscribers: a new one takes the place of the one that
// subscribed longest ago (the order is by first subscription; a subscriber that renews keeps
// its place). At most `nodesEach` nodes a subscriber: one more is refused, the others kept.

import NIOCore

package struct OSCSubscribers {
    package let capacity: Int
    package let nodesEach: Int
    package private(set) var nodes: [SocketAddress: Set<String>] = [:]
    /// Subscribers, the one that came first first.
    private var order: [SocketAddress] = []

    package init(capacity: Int, nodesEach: Int) {
        self.capacity = capacity
        self.nodesEach = nodesEach
    }

    package enum Added: Equatable {
        case added
        /// The subscriber that lost its place to make room.
        case replaced(SocketAddress)
        case tooManyNodes
    }

    package mutating func add(_ node: String, for address: SocketAddress) -> Added {
        if let mine = nodes[address] {
            guard mine.contains(node) || mine.count < nodesEach else { return .tooManyNodes }
            nodes[address]?.insert(node)
            return .added
        }
        var result = Added.added
        if nodes.count >= capacity, !order.isEmpty {
            let oldest = order.removeFirst()
            nodes[oldest] = nil
            result = .replaced(oldest)
        }
        nodes[address] = [node]
        order.append(address)
        return result
    }

    /// Stops `address` following `node`, or everything when `node` is nil.
    package mutating func remove(_ node: String?, for address: SocketAddress) {
        if let node { nodes[address]?.remove(node) } else { nodes[address] = nil }
        if nodes[address]?.isEmpty == true { nodes[address] = nil }
        if nodes[address] == nil { order.removeAll { $0 == address } }
    }

    /// The addresses following `node`.
    package func following(_ node: String) -> [SocketAddress] { nodes.compactMap { $0.value.contains(node) ? $0.key : nil } }

    package var followed: Set<String> { nodes.values.reduce(into: Set<String>()) { $0.formUnion($1) } }
}
