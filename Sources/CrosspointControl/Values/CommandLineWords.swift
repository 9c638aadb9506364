/// Words of the command line that start with a dash but are values: `-6dB`, `-inf`, `-0.5`,
/// `-1,-1,0,1`. The argument parser would read them as options; before it runs, each one's
/// dash becomes a stand-in that no option starts with, and every value read from the command
/// line gets its dash back (`CommandLineWords.restore`). Real options are still options: an
/// unknown one (`--remtoe`) is an error, and `--` ends the options as usual.
package enum CommandLineWords {
    /// A private-use character nobody types, standing for a value's leading `-`.
    package static let standIn: Character = "\u{10FFFD}"

    /// A word that is a negative number, gain or map rather than an option: a dash followed
    /// by a digit, by `.` and a digit, or by `inf`.
    package static func isNegativeValue(_ word: String) -> Bool {
        guard word.first == "-" else { return false }
        let rest = word.dropFirst()
        guard let first = rest.first else { return false }
        if first.isASCII && first.isNumber { return true }
        if first == ".", let next = rest.dropFirst().first, next.isASCII, next.isNumber { return true }
        return rest.lowercased().hasPrefix("inf")
    }

    /// The arguments as the parser should see them (without the program's name).
    package static func prepare(_ arguments: [String]) -> [String] {
        // Requests of the parser's own machinery (shell completion, help dumps) go as they are.
        if let first = arguments.first, first.hasPrefix("---") || first.hasPrefix("--generate-completion-script")
            || first == "--experimental-dump-help" {
            return arguments
        }
        var result: [String] = []
        var afterTerminator = false
        for word in arguments {
            if afterTerminator || !isNegativeValue(word) {
                if word == "--" { afterTerminator = true }
                result.append(word)
            } else {
                result.append(String(standIn) + word.dropFirst())
            }
        }
        return result
    }

    /// A value as the person typed it.
    package static func restore(_ word: String) -> String {
        word.first == standIn ? "-" + word.dropFirst() : word
    }

    /// A message of the parser's that may quote a value.
    package static func restoreAll(_ message: String) -> String {
        String(message.map { $0 == standIn ? "-" : $0 })
    }
}
