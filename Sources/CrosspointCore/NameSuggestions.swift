/// "Did you mean": the names closest to one typed, for the errors and warnings that name what
/// is there (sinks, nodes, setups, applications, channels). Pure and bounded: a name is compared
/// by its first `maximumLength` characters, case and separators aside.
public enum NameSuggestions {
    public static let maximumLength = 64

    /// The edit distance between `a` and `b` (insertions, deletions, substitutions, and
    /// transpositions of neighbours, each 1), ignoring case.
    public static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.lowercased().prefix(maximumLength)), y = Array(b.lowercased().prefix(maximumLength))
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var before = [Int](repeating: 0, count: y.count + 1)
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                var best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] { best = min(best, before[j - 2] + 1) }
                current[j] = best
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[y.count]
    }

    /// How far `typed` is from the closest of an item's names (a name that starts with or
    /// contains what was typed counts as close).
    static func score(_ typed: String, _ names: [String]) -> Int {
        let t = typed.lowercased()
        return names.map { name in
            let n = name.lowercased()
            if !t.isEmpty, n.hasPrefix(t) || (t.count >= 3 && n.containsBytes(t)) { return min(1, distance(t, n)) }
            return distance(t, n)
        }.min() ?? Int.max
    }

    /// Those of `items` close enough to `typed` to suggest (at most a third of the typed length
    /// away: at least 1, at most 3 edits), closest first; and all of them, the close ones first
    /// (closest first), the others in their own order.
    public static func rank<Item>(_ typed: String, _ items: [Item], names: (Item) -> [String]) -> (ordered: [Item], close: [Item]) {
        let limit = min(3, max(1, typed.count / 3))
        let scored = items.enumerated().map { (offset: $0.offset, item: $0.element, score: score(typed, names($0.element))) }
        let close = scored.filter { $0.score <= limit }.sorted { ($0.score, $0.offset) < ($1.score, $1.offset) }
        let rest = scored.filter { $0.score > limit }
        return ((close + rest).map(\.item), close.map(\.item))
    }

    /// `did you mean 'a'?`, `did you mean 'a' or 'b'?` (at most three), or nothing.
    public static func phrase(_ close: [String]) -> String {
        var seen = Set<String>()
        let quoted = close.filter { seen.insert($0).inserted }.prefix(3).map { "'\($0)'" }
        switch quoted.count {
        case 0: return ""
        case 1: return "did you mean \(quoted[0])?"
        default: return "did you mean " + quoted.dropLast().joinedBytes(separator: ", ") + " or \(quoted[quoted.count - 1])?"
        }
    }
}
