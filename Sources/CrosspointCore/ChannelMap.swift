/// A channel map in Core Audio's form: one entry per output, each the index of the input
/// that feeds it, or -1 for silence.
///
/// `[0, 0]` duplicates a mono input to both sides of a stereo output, `[1, 0]` swaps a
/// stereo pair, `[-1, -1, 0, 1]` sends a stereo pair to outputs 3 and 4 of four.
public struct ChannelMap: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// `sources[output]` is the input feeding that output, or -1.
    public var sources: [Int]

    public init(_ sources: [Int]) {
        self.sources = sources
    }

    /// Parses `0,0`, `[-1, -1, 0, 1]` or `1 0`: integers separated by commas or spaces,
    /// optionally in brackets.
    public init(parsing text: String) throws(CrosspointError) {
        var body = Substring(text).trimmingSpaces()
        if body.first == "[" && body.last == "]" { body = body.dropFirst().dropLast() }
        let fields = body.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
        guard !fields.isEmpty else {
            throw .invalidValue(key: "channel-map", reason: "is empty; give one input index (or -1) per output")
        }
        var sources: [Int] = []
        for field in fields {
            guard let value = Int(field) else {
                throw .invalidValue(key: "channel-map", reason: "'\(field)' is not an integer")
            }
            sources.append(value)
        }
        self.sources = sources
    }

    public var description: String { "[" + sources.map { $0.decimalText }.joinedBytes(separator: ",") + "]" }

    /// Checks the map against a mixer shape.
    public func validate(inputs: Int, outputs: Int) throws(CrosspointError) {
        guard sources.count == outputs else {
            throw .shapeMismatch(
                "channel-map has \(sources.count) entries but the node has \(outputs) outputs (one entry per output)")
        }
        for (output, source) in sources.enumerated() where source < -1 || source >= inputs {
            throw .invalidValue(
                key: "channel-map",
                reason: "entry \(output) is \(source); it must be -1 (silence) or an input index 0 to \(inputs - 1)")
        }
    }

    /// The cross-point matrix this map describes, row-major (`[input * outputs + output]`).
    public func matrix(inputs: Int) throws(CrosspointError) -> [Float] {
        try validate(inputs: inputs, outputs: sources.count)
        let outputs = sources.count
        var matrix = [Float](repeating: 0, count: inputs * outputs)
        for (output, source) in sources.enumerated() where source >= 0 {
            matrix[source * outputs + output] = 1
        }
        return matrix
    }

    /// The map a matrix is, if it is a pure routing: each output fed by at most one input,
    /// at exactly unity. Any other matrix has no channel map.
    public init?(matrix: [Float], inputs: Int, outputs: Int) {
        precondition(matrix.count == inputs * outputs)
        var sources = [Int](repeating: -1, count: outputs)
        for output in 0..<outputs {
            for input in 0..<inputs {
                let gain = matrix[input * outputs + output]
                if gain == 0 { continue }
                guard gain == 1, sources[output] == -1 else { return nil }
                sources[output] = input
            }
        }
        self.sources = sources
    }
}

extension Substring {
    /// Without leading and trailing white space.
    public func trimmingSpaces() -> Substring {
        var s = self
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return s
    }
}
