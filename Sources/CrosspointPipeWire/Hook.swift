import CCrosspointShim
import CPipeWire

/// A listener slot (`spa_hook`) PipeWire links into its lists; removed before it is freed.
package final class Hook {
    package let pointer: UnsafeMutablePointer<spa_hook>
    package var isLinked = false

    package init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: spa_hook())
    }

    package func remove() {
        if isLinked { spa_hook_remove(pointer) }
        isLinked = false
    }

    deinit {
        remove()
        pointer.deallocate()
    }
}

extension spa_dict {
    /// The dictionary's items as Swift strings.
    package var strings: [String: String] {
        var result: [String: String] = [:]
        for k in 0..<Int(n_items) {
            let item = items[k]
            guard let key = item.key else { continue }
            result[String(cBytes: key)] = item.value.map { String(cBytes: $0) } ?? ""
        }
        return result
    }
}
