import CrosspointCore
import CrosspointPipeWire

/// What a changing command did, as `--json` prints it: the keys are the parameter table's
/// (`matrix.0.1`, `gain.out.1`), plus `mute.master` as presets name it; values as in presets
/// (linear gains, booleans, lists).
package struct ChangeReport: Encodable {
    package struct Change: Encodable {
        package let key: String
        /// The ports the key acts on (`in_FL -> out_FR`), when it acts on ports.
        package let what: String?
        /// Nil for a key the node did not have before (a new channel's gain).
        package let before: ReportValue?
        package let after: ReportValue
    }

    package let node: String
    package let id: UInt32
    package var changes: [Change]
}

/// A parameter value in a change report.
package enum ReportValue: Encodable, Equatable {
    case number(Double), bool(Bool), ints([Int]), names([String])

    package init(_ value: ParameterValue) {
        switch value {
        // A value that is a Float (gains in Props) as the shortest decimal of that Float
        // (0.5011872, not 0.50118720531463623); any other number as it is.
        case let .number(v): self = .number(Double(Float(v)) == v ? decimal(Float(v)) : v)
        case let .bool(b): self = .bool(b)
        case let .ints(v): self = .ints(v)
        case let .names(v): self = .names(v)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case let .number(v): try c.encode(v)
        case let .bool(b): try c.encode(b)
        case let .ints(v): try c.encode(v)
        case let .names(v): try c.encode(v)
        }
    }
}

extension PropsCodec.RawValue {
    /// The value as the parameter table types it; nil for values no key takes.
    package var parameterValue: ParameterValue? {
        switch self {
        case let .number(v): .number(v)
        case let .bool(b): .bool(b)
        case let .numbers(v):
            v.allSatisfy { Int(exactly: $0) != nil } ? .ints(v.map { Int(exactly: $0)! }) : nil
        case let .strings(v): .names(v)
        case .invalid: nil
        }
    }
}
