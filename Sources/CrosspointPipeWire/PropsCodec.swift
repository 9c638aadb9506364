import CCrosspointShim
import CPipeWire
import CrosspointCore
import Glibc

/// Pods built into a buffer of our own; valid while the buffer lives.
final class PodBuffer {
    private let storage: UnsafeMutableRawPointer
    private let size: Int
    var builder = spa_pod_builder()

    init(size: Int) {
        self.size = size
        storage = .allocate(byteCount: size, alignment: 8)
        spa_pod_builder_init(&builder, storage, UInt32(size))
    }

    deinit { storage.deallocate() }
}

/// Crosspoint's node params in PipeWire's form, made from the one parameter table
/// (`Parameter`): PropInfo, Props, and the walk of an incoming Props pod.
public enum PropsCodec {
    /// PipeWire 0.3.65 takes at most 4096 params in one node update (MAX_PARAMS in
    /// module-client-node): when one PropInfo per key would come near that, PropInfo
    /// describes the matrix by its pattern (`matrix.<in>.<out>`) instead.
    static func infoListsEveryKey(_ mixer: Mixer) -> Bool {
        mixer.inputs * mixer.outputs + 2 * (mixer.inputs + mixer.outputs) + 16 <= 4000
    }

    /// Props is one param, but it is rebuilt on every change: above this many cross-points
    /// it lists only the non-zero ones.
    public static let fullPropsLimit = 16384

        static func bufferSize(for mixer: Mixer) -> Int {
        let keys = mixer.inputs * mixer.outputs + 4 * (mixer.inputs + mixer.outputs) + 16
        return 16384 + keys * 192 + (mixer.inputs + mixer.outputs) * 64
    }

    /// The keys Props and PropInfo list for `mixer`.
    static func listedParameters(for mixer: Mixer) -> [Parameter] {
        let full = mixer.inputs * mixer.outputs <= fullPropsLimit
        return Parameter.all(for: mixer).filter { p in
            guard !full, case .crosspoint = p else { return true }
            return mixer.value(of: p) != .number(0)
        }
    }

    /// One PropInfo per key, then Props, as `pw_filter_connect` and `pw_filter_update_params` take them.
    static func withParams<R>(
        for mixer: Mixer, includingInfo: Bool,
        _ body: (UnsafeMutableBufferPointer<UnsafePointer<spa_pod>?>) -> R
    ) -> R {
        let buffer = PodBuffer(size: bufferSize(for: mixer))
        var pods: [UnsafePointer<spa_pod>?] = []
        if includingInfo {
            let full = infoListsEveryKey(mixer)
            for p in Parameter.all(for: mixer) {
                if case .crosspoint(let i, let j) = p, !full {
                    if i == 0 && j == 0 { pods.append(info(name: p.family.pattern, family: p.family, summary: p.family.summary, buffer)) }
                    continue
                }
                pods.append(info(name: p.key, family: p.family, summary: p.summary(in: mixer), buffer))
            }
        }
        pods.append(props(for: mixer, buffer))
        return pods.withUnsafeMutableBufferPointer { body($0) }
    }

    private static func info(name: String, family: ParameterFamily, summary: String, _ b: PodBuffer) -> UnsafePointer<spa_pod>? {
        let pod: UnsafeMutablePointer<spa_pod>? = switch family.type {
        case .float:
            cpshim_prop_info_float(&b.builder, name, summary, Float(family.defaultValue),
                                   Float(family.range.lowerBound), Float(family.range.upperBound))
        case .int:
            cpshim_prop_info_int(&b.builder, name, summary, Int32(family.defaultValue),
                                 Int32(family.range.lowerBound), Int32(family.range.upperBound))
        case .bool:
            cpshim_prop_info_bool(&b.builder, name, summary, family.defaultValue != 0)
        case .names:
            cpshim_prop_info_strings(&b.builder, name, summary)
        case .intArray:
            cpshim_prop_info_int_array(&b.builder, name, summary,
                                       Int32(family.range.lowerBound), Int32(family.range.upperBound))
        }
        return UnsafePointer(pod)
    }

    private static func props(for mixer: Mixer, _ b: PodBuffer) -> UnsafePointer<spa_pod>? {
        var frames = cpshim_props_frames()
        cpshim_props_begin(&b.builder, &frames)
        for p in listedParameters(for: mixer) {
            switch mixer.value(of: p) {
            case let .number(v) where p.family.type == .int: cpshim_props_add_int(&b.builder, p.key, Int32(v))
            case let .number(v): cpshim_props_add_float(&b.builder, p.key, Float(v))
            case let .bool(v): cpshim_props_add_bool(&b.builder, p.key, v)
            case let .ints(v):
                let values = v.map(Int32.init)
                cpshim_props_add_int_array(&b.builder, p.key, values, UInt32(values.count))
            case let .names(names):
                withCStrings(names) { cpshim_props_add_strings(&b.builder, p.key, $0, UInt32(names.count)) }
            }
        }
        let volumes = mixer.outputGains
        return UnsafePointer(cpshim_props_end(&b.builder, &frames, mixer.masterGain, mixer.masterMute,
                                              volumes, UInt32(volumes.count)))
    }

    /// One value of an incoming Props pod, before it is checked against its key.
    public enum RawValue: Sendable, Equatable {
        case number(Double)
        case bool(Bool)
        case numbers([Double])
        case strings([String])
        /// Not a value any key takes; the reason names what it was.
        case invalid(String)
    }

    /// One entry of an incoming Props pod: its key (nil if it was not a string) and value.
    public struct Entry: Sendable {
        public let key: String?
        public let value: RawValue
    }

    /// Walks an incoming Props pod; nil if it is not a Props object.
    static func entries(of pod: UnsafePointer<spa_pod>) -> [Entry]? {
        final class Sink { var entries: [Entry] = [] }
        let sink = Sink()
        let result = cpshim_props_parse(pod, { user, key, value in
            let sink = Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue()
            sink.entries.append(Entry(key: key.map { String(cString: $0) }, value: PropsCodec.decode(value!.pointee)))
        }, Unmanaged.passUnretained(sink).toOpaque())
        return result < 0 ? nil : sink.entries
    }

    static func decode(_ v: cpshim_value) -> RawValue {
        switch v.kind {
        case CPSHIM_NUMBER: return .number(v.number)
        case CPSHIM_BOOL: return .bool(v.flag)
        case CPSHIM_NUMBERS:
            guard v.count > 0 else { return .invalid("an empty list") }
            guard v.count <= UInt32(Mixer.channelLimit.upperBound) else {
                return .invalid("a list of \(v.count) entries, more than the 256 channels a node can have")
            }
            return .numbers(withUnsafeBytes(of: v.numbers) { raw in
                Array(raw.bindMemory(to: Double.self).prefix(Int(v.count)))
            })
        case CPSHIM_STRINGS:
            guard v.count <= UInt32(Mixer.channelLimit.upperBound) else {
                return .invalid("a list of \(v.count) names, more than the 256 channels a node can have")
            }
            return .strings(withUnsafeBytes(of: v.strings) { raw in
                raw.bindMemory(to: UnsafePointer<CChar>?.self).prefix(Int(v.count)).map { $0.map { String(cString: $0) } ?? "" }
            })
        case CPSHIM_STRING:
            let text = v.string.map { String(cString: $0) } ?? ""
            return .invalid("the string \"\(text.prefix(40))\"")
        default:
            return .invalid("a value of type " + (v.type_name.map { String(cString: $0) } ?? "unknown"))
        }
    }
}

/// Lends C strings for `strings` to `body` (for the pod builder, which copies them).
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { body($0.baseAddress!) }
}
