import CrosspointCore
import CrosspointPipeWire

/// The `delay.out` module argument: the outputs' delays in milliseconds, as an object by output
/// (name or index) or a list of one delay per output:
///
///     delay.out = { FL = 180 FR = 180 }         the wired pair waits for a Bluetooth speaker
///     delay.out = [ 0 0 12.5 12.5 ]
extension NodeConfiguration {
    /// The delays as (output, milliseconds), checked against `mixer`'s outputs and the range.
    static func outputDelays(_ value: SPAJSONValue, in mixer: Mixer) throws(ArgumentError) -> [(Int, Double)] {
        let argument = "delay.out"
        func milliseconds(_ value: SPAJSONValue, _ what: String) throws(ArgumentError) -> Double {
            guard case let .number(ms) = value else {
                throw ArgumentError(argument: argument, reason: "\(what): \(value) is not a number of milliseconds")
            }
            guard ms.isFinite, Mixer.delayRange.contains(ms) else {
                throw ArgumentError(argument: argument, reason: "\(what): \(ms) ms is outside 0 to 1000 ms")
            }
            return ms
        }
        switch value {
        case let .array(items):
            guard items.count == mixer.outputs else {
                throw ArgumentError(argument: argument, reason: "lists \(items.count) delays but the node has \(mixer.outputs) outputs "
                    + "(one per output, or an object such as { FL = 12.5 })")
            }
            var delays: [(Int, Double)] = []
            for (j, item) in items.enumerated() { delays.append((j, try milliseconds(item, "output \(j)"))) }
            return delays
        case let .object(members):
            var delays: [(Int, Double)] = [], seen = Set<Int>()
            for (name, item) in members {
                let j: Int
                do { j = try mixer.outputIndex(name) } catch {
                    throw ArgumentError(argument: argument, reason: "\(error.description); the outputs are "
                        + mixer.outputChannels.joinedBytes(separator: ", "))
                }
                guard seen.insert(j).inserted else { throw ArgumentError(argument: argument, reason: "output \(name) is given twice") }
                delays.append((j, try milliseconds(item, "output \(name)")))
            }
            return delays
        default:
            throw ArgumentError(argument: argument, reason: "must be an object such as { FL = 12.5 } or a list of one delay per output, got \(value)")
        }
    }
}
