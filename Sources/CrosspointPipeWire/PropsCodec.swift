import CCrosspointShim
import CPipeWire
import CrosspointCore
import Glibc

/// Pods built into a buffer of our own; valid while the buffer lives.
package final class PodBuffer {
    private let storage: UnsafeMutableRawPointer
    private let size: Int
    package var builder = spa_pod_builder()

    package init(size: Int) {
        self.size = size
        storage = .allocate(byteCount: size, alignment: 8)
        spa_pod_builder_init(&builder, storage, UInt32(clamping: size))
    }

    /// Whether everything built so far fit (the builder stops writing, but counts, past the end).
    package var overflowed: Bool { builder.state.offset > builder.size }

    deinit { storage.deallocate() }
}

/// One key and value of a Props object's `params` struct, as both sides send it.
public struct PropsEntry: Sendable, Equatable {
    public let key: String
    public let value: ParameterValue
    public init(key: String, value: ParameterValue) {
        self.key = key
        self.value = value
    }
}

/// Crosspoint's node params in PipeWire's form, made from the one parameter table
/// (`Parameter`): PropInfo, Props (built here for the node's state and the command line's
/// changes alike), and the walk of an incoming Props pod.
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

    /// The keys Props lists for `mixer`: the readable ones (a write-only key such as
    /// `levels.watch` is in PropInfo only).
    static func listedParameters(for mixer: Mixer) -> [Parameter] {
        let full = mixer.inputs * mixer.outputs <= fullPropsLimit
        return Parameter.all(for: mixer).filter { p in
            guard p.kind.family.access == .readWrite else { return false }
            guard !full, p.kind == .crosspoint else { return true }
            return mixer.value(of: p) != .number(0)
        }
    }

    /// One PropInfo per key, then Props, as `pw_filter_connect` and `pw_filter_update_params` take them.
    package static func withParams<R>(
        for mixer: Mixer, includingInfo: Bool,
        _ body: (UnsafeMutableBufferPointer<UnsafePointer<spa_pod>?>) -> R
    ) -> R {
        let entries = listedParameters(for: mixer).map { PropsEntry(key: $0.key, value: mixer.value(of: $0)) }
        var infos: [(name: String, family: ParameterFamily, summary: String)] = []
        if includingInfo {
            let full = infoListsEveryKey(mixer)
            for p in Parameter.all(for: mixer) {
                if p.kind == .crosspoint, !full {
                    if p.input == 0 && p.output == 0 { infos.append((p.kind.family.pattern, p.kind.family, p.kind.family.summary)) }
                    continue
                }
                infos.append((p.key, p.kind.family, p.summary(in: mixer)))
            }
        }
        // Sized from the strings: a summary names two channels, each up to 63 bytes, so a fixed
        // 256 bytes per PropInfo overflowed (a 60x60 node with long channel names lost its Props).
        let infoBytes = infos.reduce(0) { $0 + infoPodBytes(name: $1.name, summary: $1.summary) }
        let buffer = PodBuffer(size: 16384 + infoBytes + entries.reduce(0) { $0 + podBytes($1) })
        var pods: [UnsafePointer<spa_pod>?] = infos.map { info(name: $0.name, family: $0.family, summary: $0.summary, buffer) }
        pods.append(build(entries, tail: .state(volume: mixer.masterGain, mute: mixer.masterMute, channelVolumes: mixer.outputGains), in: buffer))
        if buffer.overflowed {  // sized generously above; never expected
            Log.error("internal error: the params of a \(mixer.inputs)x\(mixer.outputs) node overflowed their buffer")
        }
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

    // MARK: Building Props

    /// What follows the `params` struct of a Props object.
    package enum Tail {
        /// The node's whole state: the standard `volume` (master gain), `mute` (master mute)
        /// and `channelVolumes` (output gains), as audio tools read them.
        case state(volume: Float, mute: Bool, channelVolumes: [Float])
        /// A change: only the master mute, when given (it has no params key). The standard
        /// volume and channelVolumes are left out, or they would overwrite the gains.
        case change(mute: Bool?)
    }

    /// An upper bound of the bytes one PropInfo object takes: its properties' headers, the type
    /// (a range or enum choice, and a container id), the flag, and the two strings, each padded.
    static func infoPodBytes(name: String, summary: String) -> Int {
        192 + name.utf8.count + summary.utf8.count
    }

    /// An upper bound of the bytes one key and value take in a Props pod.
    package static func podBytes(_ entry: PropsEntry) -> Int {
        let value = switch entry.value {
        case let .ints(v): 24 + 4 * v.count
        case let .names(v): 16 + v.reduce(0) { $0 + 16 + $1.utf8.count }
        default: 16
        }
        return 24 + entry.key.utf8.count + value
    }

    /// Builds a Props object: `params = [ key value ... ]`, then the tail. A number is written
    /// as an Int for the keys the table types Int (`inputs`), else as a Float.
    /// The builder calls are libspa's (spa/pod/builder.h), inline functions Swift calls directly.
    /// The keys the table types Int (keys without placeholders: `inputs`, `outputs`), looked up
    /// by hash: a key a cross-point of a big node's Props.
    private static let intKeys = Set(Parameter.families.filter { $0.type == .int }.map(\.pattern))

    package static func build(_ entries: [PropsEntry], tail: Tail, in b: PodBuffer) -> UnsafePointer<spa_pod>? {
        var object = spa_pod_frame(), params = spa_pod_frame()
        spa_pod_builder_push_object(&b.builder, &object, UInt32(SPA_TYPE_OBJECT_Props), SPA_PARAM_Props.rawValue)
        spa_pod_builder_prop(&b.builder, SPA_PROP_params.rawValue, 0)
        spa_pod_builder_push_struct(&b.builder, &params)
        for entry in entries {
            spa_pod_builder_string(&b.builder, entry.key)
            switch entry.value {
            case let .number(v) where intKeys.contains(entry.key):
                spa_pod_builder_int(&b.builder, Int32(clamping: Int(exactly: v.rounded()) ?? 0))
            case let .number(v): spa_pod_builder_float(&b.builder, Float(v))
            case let .bool(v): spa_pod_builder_bool(&b.builder, v)
            case let .ints(v):
                let values = v.map { Int32(clamping: $0) }
                spa_pod_builder_array(&b.builder, 4, UInt32(SPA_TYPE_Int), UInt32(values.count), values)
            case let .names(names):
                var list = spa_pod_frame()
                spa_pod_builder_push_struct(&b.builder, &list)
                for name in names { spa_pod_builder_string(&b.builder, name) }
                spa_pod_builder_pop(&b.builder, &list)
            }
        }
        spa_pod_builder_pop(&b.builder, &params)
        switch tail {
        case let .state(volume, mute, channelVolumes):
            spa_pod_builder_prop(&b.builder, SPA_PROP_volume.rawValue, 0)
            spa_pod_builder_float(&b.builder, volume)
            spa_pod_builder_prop(&b.builder, SPA_PROP_mute.rawValue, 0)
            spa_pod_builder_bool(&b.builder, mute)
            spa_pod_builder_prop(&b.builder, SPA_PROP_channelVolumes.rawValue, 0)
            spa_pod_builder_array(&b.builder, 4, UInt32(SPA_TYPE_Float), UInt32(channelVolumes.count), channelVolumes)
        case let .change(mute?):
            spa_pod_builder_prop(&b.builder, SPA_PROP_mute.rawValue, 0)
            spa_pod_builder_bool(&b.builder, mute)
        case .change(nil):
            break
        }
        guard let pod = spa_pod_builder_pop(&b.builder, &object), !b.overflowed else { return nil }
        return UnsafePointer(pod.assumingMemoryBound(to: spa_pod.self))
    }

    // MARK: Reading Props

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

        package init(key: String?, value: RawValue) {
            self.key = key
            self.value = value
        }
    }

    /// The most entries one list value may have: a node has at most 256 channels.
    static let listLimit = Mixer.channelLimit.upperBound

    /// Walks an incoming Props pod: each `params` pair, then `volume`, `mute` and
    /// `channelVolumes`. Nil if it is not a Props object. Every read is bounds-checked by
    /// libspa's own iterators (spa/pod/iter.h), so a malformed pod from any client yields
    /// `.invalid` entries, never a crash or a hang.
    package static func entries(of pod: UnsafePointer<spa_pod>) -> [Entry]? {
        guard spa_pod_is_object_type(pod, UInt32(SPA_TYPE_OBJECT_Props)) else { return nil }
        var result: [Entry] = []
        let body = UnsafeRawPointer(pod).advanced(by: MemoryLayout<spa_pod>.size)
            .assumingMemoryBound(to: spa_pod_object_body.self)
        let size = pod.pointee.size
        guard var prop = UnsafePointer(spa_pod_prop_first(body)) else { return result }
        while spa_pod_prop_is_inside(body, size, prop) {
            let value = UnsafeRawPointer(prop).advanced(by: MemoryLayout<spa_pod_prop>.offset(of: \spa_pod_prop.value)!)
                .assumingMemoryBound(to: spa_pod.self)
            switch prop.pointee.key {
            case SPA_PROP_params.rawValue: result += params(value)
            case SPA_PROP_volume.rawValue: result.append(Entry(key: "volume", value: decode(value)))
            case SPA_PROP_mute.rawValue: result.append(Entry(key: "mute", value: decode(value)))
            case SPA_PROP_channelVolumes.rawValue: result.append(Entry(key: "channelVolumes", value: decode(value)))
            default: break
            }
            guard let next = UnsafePointer(spa_pod_prop_next(prop)) else { break }
            prop = next
        }
        return result
    }

    /// Splits a set-param's entries into those whose key is in `claimed` (write-only requests to
    /// the running node, which its parts take: `NodePart.claimedKeys`) and the others, which go
    /// to the mixer; each side in the order they came.
    package static func split(_ entries: [Entry], claimed: Set<String>) -> (claimed: [Entry], others: [Entry]) {
        var taken: [Entry] = [], others: [Entry] = []
        for entry in entries {
            if let key = entry.key, claimed.contains(key) { taken.append(entry) } else { others.append(entry) }
        }
        return (taken, others)
    }

    /// Walks a pod held in `bytes` (a fuzz target's input); nil if it is not a whole Props object.
    package static func entries(bytes: UnsafeRawBufferPointer) -> [Entry]? {
        guard bytes.count >= MemoryLayout<spa_pod>.size, let base = bytes.baseAddress else { return nil }
        // Copy to 8-byte-aligned memory, as PipeWire hands pods over.
        let aligned = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { aligned.deallocate() }
        aligned.copyMemory(from: base, byteCount: bytes.count)
        let pod = aligned.assumingMemoryBound(to: spa_pod.self)
        guard UInt64(pod.pointee.size) + 8 <= UInt64(bytes.count) else { return nil }
        return entries(of: pod)
    }

    /// The `params` struct: key, value, key, value ...
    private static func params(_ pod: UnsafePointer<spa_pod>) -> [Entry] {
        guard spa_pod_is_struct(pod) != 0 else {
            return [Entry(key: nil, value: .invalid("params that are not a struct but \(typeName(pod.pointee.type))"))]
        }
        var result: [Entry] = []
        var key: UnsafePointer<spa_pod>?
        forEach(inStruct: pod) { item in
            guard let k = key else { key = item; return }
            result.append(Entry(key: string(k), value: decode(item)))
            key = nil
        }
        if let key { result.append(Entry(key: string(key), value: .invalid("a value of type nothing (the key has no value)"))) }
        return result
    }

    /// Calls `body` with each pod of a struct (SPA_POD_STRUCT_FOREACH, which is a macro).
    private static func forEach(inStruct pod: UnsafePointer<spa_pod>, _ body: (UnsafePointer<spa_pod>) -> Void) {
        let start = UnsafeRawPointer(pod).advanced(by: MemoryLayout<spa_pod>.size)
        let size = pod.pointee.size
        var item = start
        while spa_pod_is_inside(start, size, item) {
            body(item.assumingMemoryBound(to: spa_pod.self))
            item = UnsafeRawPointer(spa_pod_next(item))
        }
    }

    private static func string(_ pod: UnsafePointer<spa_pod>) -> String? {
        var text: UnsafePointer<CChar>?
        guard spa_pod_get_string(pod, &text) >= 0, let text else { return nil }
        return String(validatingCString: text) ?? String(decoding: UnsafeRawBufferPointer(start: text, count: strlen(text)), as: UTF8.self)
    }

    private static func number(_ pod: UnsafePointer<spa_pod>) -> Double? {
        var i: Int32 = 0, l: Int64 = 0, f: Float = 0, d: Double = 0
        if spa_pod_get_int(pod, &i) >= 0 { return Double(i) }
        if spa_pod_get_long(pod, &l) >= 0 { return Double(l) }
        if spa_pod_get_float(pod, &f) >= 0 { return Double(f) }
        if spa_pod_get_double(pod, &d) >= 0 { return d }
        return nil
    }

    static func decode(_ pod: UnsafePointer<spa_pod>) -> RawValue {
        if let n = number(pod) { return .number(n) }
        var flag = false
        if spa_pod_get_bool(pod, &flag) >= 0 { return .bool(flag) }
        if spa_pod_is_string(pod) != 0 {
            return .invalid("the string \"\(String((string(pod) ?? "").prefix(40)))\"")
        }
        if spa_pod_is_array(pod) != 0 { return array(pod) }
        if spa_pod_is_struct(pod) != 0 { return list(pod) }
        return .invalid("a value of type " + typeName(pod.pointee.type))
    }

    /// An Array pod of numbers (`channel-map`, `channelVolumes`).
    private static func array(_ pod: UnsafePointer<spa_pod>) -> RawValue {
        var count: UInt32 = 0
        guard let values = spa_pod_get_array(pod, &count) else { return .invalid("a malformed array") }
        let child = UnsafeRawPointer(pod).advanced(by: MemoryLayout<spa_pod>.size).assumingMemoryBound(to: spa_pod.self).pointee
        // An empty list is a value (no mappings, no devices, stop learning); the keys that need
        // entries refuse it themselves, by name.
        guard count > 0 else { return .numbers([]) }
        guard count <= UInt32(listLimit) else {
            return .invalid("a list of \(count) entries, more than the \(listLimit) channels a node can have")
        }
        let raw = UnsafeRawPointer(values)
        var numbers: [Double] = []
        for k in 0..<Int(count) {
            let at = raw.advanced(by: k * Int(child.size))
            switch (child.type, child.size) {
            case (UInt32(SPA_TYPE_Int), 4...): numbers.append(Double(at.loadUnaligned(as: Int32.self)))
            case (UInt32(SPA_TYPE_Long), 8...): numbers.append(Double(at.loadUnaligned(as: Int64.self)))
            case (UInt32(SPA_TYPE_Float), 4...): numbers.append(Double(at.loadUnaligned(as: Float.self)))
            case (UInt32(SPA_TYPE_Double), 8...): numbers.append(at.loadUnaligned(as: Double.self))
            default: return .invalid("an array of " + typeName(child.type))
            }
        }
        return .numbers(numbers)
    }

    /// A Struct pod: a list of numbers, or of strings (channel names).
    private static func list(_ pod: UnsafePointer<spa_pod>) -> RawValue {
        var numbers: [Double] = [], strings: [String] = [], other = false, count = 0
        forEach(inStruct: pod) { item in
            count += 1
            guard count <= listLimit else { return }
            if let n = number(item) { numbers.append(n) } else if let s = string(item) { strings.append(s) } else { other = true }
        }
        if count > listLimit {
            return .invalid("a list of \(count) entries, more than the \(listLimit) channels a node can have")
        }
        if other || (!numbers.isEmpty && !strings.isEmpty) {
            return .invalid("a list mixing numbers, strings or other values")
        }
        if !strings.isEmpty { return .strings(strings) }
        return numbers.isEmpty && count == 0 ? .strings([]) : .numbers(numbers)
    }

    private static func typeName(_ type: UInt32) -> String { String(cBytes: cpshim_type_name(type)) }
}
