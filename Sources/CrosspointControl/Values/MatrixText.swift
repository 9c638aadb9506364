#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The matrix file formats `crosspoint matrix` reads.
package enum MatrixText {
    package static func parse(_ text: String, source: String, linear: Bool) throws -> [[Double]] {
        let trimmed = text.drop { $0.isWhitespace }
        if trimmed.first == "[" {
            do {
                return try JSONDecoder().decode([[Double]].self, from: Data(text.utf8))
            } catch {
                throw CommandError.file(source, "not a JSON list of rows of numbers like [[1, 0], [0, 1]]")
            }
        }
        var rows: [[Double]] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\r" })
            guard !fields.isEmpty else { continue }
            var row: [Double] = []
            for field in fields {
                let gain: GainInput
                do {
                    gain = try GainInput.parse(String(field), linear: linear)
                } catch let error as CommandError {
                    let reason = "\(error)".hasPrefix("gain: ") ? "'\(String(field).printable)' is not a gain; write 0.5, -6dB or -inf"
                        : "\(error)"
                    throw CommandError.file(source, "line \(n + 1): \(reason)")
                }
                guard case .absolute = gain else {
                    throw CommandError.file(source, "line \(n + 1): '\(String(field).printable)' is a step; a matrix holds levels")
                }
                do {
                    row.append(try gain.resolve(current: 0, key: "matrix.\(rows.count).\(row.count)").gain)
                } catch {
                    throw CommandError.file(source, "line \(n + 1): \(error)")
                }
            }
            rows.append(row)
        }
        guard !rows.isEmpty else {
            throw CommandError.file(source, text.isEmpty ? "is empty; give one row of gains per input" : "holds no matrix rows, only comments or blanks")
        }
        return rows
    }
}
