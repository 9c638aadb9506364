/// Open Sound Control 1.0 packets, read and written without Foundation: what `crosspoint serve
/// --osc` takes from TouchOSC, Open Stage Control or show software over UDP, and what it sends
/// to the clients that subscribed. Every read is bounds-checked and every count limited, so a
/// datagram from anyone is refused with a reason, never a trap (fuzzed: Tests/Fuzz/osc.swift).

/// One argument of a message, by its type tag.
public enum OSCArgument: Equatable, Sendable {
    case int(Int32)        // i
    case float(Float)      // f
    case string(String)    // s, S
    case blob([UInt8])     // b
    case int64(Int64)      // h
    case double(Double)    // d
    case bool(Bool)        // T, F
    case none              // N, I (nil, impulse)
}

/// A message: an address (`/crosspoint/NODE/KEY`) and its arguments.
public struct OSCMessage: Equatable, Sendable {
    public let address: String
    public let arguments: [OSCArgument]

    public init(address: String, arguments: [OSCArgument]) {
        self.address = address
        self.arguments = arguments
    }

    /// The address's parts: `/crosspoint/xp/gain.in.0` -> ["crosspoint", "xp", "gain.in.0"]. Split
    /// on the byte '/', not on characters (a combining mark after a '/' joins it into one).
    public var parts: [String] {
        address.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// The message as a datagram (types i, f, s, b, h, d, T, F, N).
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        OSC.appendString(address, to: &out)
        var tags = ","
        var body: [UInt8] = []
        for argument in arguments {
            switch argument {
            case let .int(v): tags += "i"; OSC.appendBigEndian(UInt64(UInt32(bitPattern: v)), bytes: 4, to: &body)
            case let .float(v): tags += "f"; OSC.appendBigEndian(UInt64(v.bitPattern), bytes: 4, to: &body)
            case let .string(s): tags += "s"; OSC.appendString(s, to: &body)
            case let .blob(b):
                tags += "b"
                OSC.appendBigEndian(UInt64(b.count), bytes: 4, to: &body)
                body += b
                while body.count % 4 != 0 { body.append(0) }
            case let .int64(v): tags += "h"; OSC.appendBigEndian(UInt64(bitPattern: v), bytes: 8, to: &body)
            case let .double(v): tags += "d"; OSC.appendBigEndian(v.bitPattern, bytes: 8, to: &body)
            case let .bool(v): tags += v ? "T" : "F"
            case .none: tags += "N"
            }
        }
        OSC.appendString(tags, to: &out)
        return out + body
    }
}

public enum OSC {
    /// The largest datagram read (UDP's own limit is 65507 bytes).
    public static let maximumPacket = 65536
    /// The most arguments a message may have, and messages a packet (bundles included).
    public static let maximumArguments = 1024
    public static let maximumMessages = 4096
    /// How deep bundles may nest.
    public static let maximumDepth = 8

    /// What was wrong with a packet.
    public struct Malformed: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// The messages of a packet, in order (a bundle's, flattened; time tags are ignored:
    /// everything applies at once).
    public static func messages(in packet: [UInt8]) throws(Malformed) -> [OSCMessage] {
        guard packet.count <= maximumPacket else { throw Malformed(reason: "a packet of \(packet.count) bytes; at most \(maximumPacket)") }
        var messages: [OSCMessage] = []
        try read(packet[...], depth: 0, into: &messages)
        return messages
    }

    /// A bundle holding `messages`, time tag "immediately".
    public static func bundle(_ messages: [OSCMessage]) -> [UInt8] {
        var out: [UInt8] = []
        appendString("#bundle", to: &out)
        appendBigEndian(1, bytes: 8, to: &out)
        for message in messages {
            let bytes = message.bytes
            appendBigEndian(UInt64(bytes.count), bytes: 4, to: &out)
            out += bytes
        }
        return out
    }

    private static let bundleTag: [UInt8] = Array("#bundle".utf8) + [0]

    private static func read(_ data: ArraySlice<UInt8>, depth: Int, into messages: inout [OSCMessage]) throws(Malformed) {
        guard data.count >= 4, data.count % 4 == 0 else {
            throw Malformed(reason: "a packet of \(data.count) bytes; OSC packets are a multiple of 4 bytes")
        }
        if data.starts(with: bundleTag) {
            guard depth < maximumDepth else { throw Malformed(reason: "bundles nested more than \(maximumDepth) deep") }
            guard data.count >= 16 else { throw Malformed(reason: "a bundle without its time tag") }
            var at = data.startIndex + 16
            while at < data.endIndex {
                guard data.endIndex - at >= 4 else { throw Malformed(reason: "a bundle element without its size") }
                let size = Int(bigEndian(data, at, 4))
                at += 4
                guard size > 0, size % 4 == 0, size <= data.endIndex - at else {
                    throw Malformed(reason: "a bundle element of \(size) bytes where \(data.endIndex - at) remain")
                }
                try read(data[at..<(at + size)], depth: depth + 1, into: &messages)
                at += size
            }
            return
        }
        guard data.first == UInt8(ascii: "/") else { throw Malformed(reason: "a message whose address does not start with '/'") }
        guard messages.count < maximumMessages else { throw Malformed(reason: "more than \(maximumMessages) messages") }
        var at = data.startIndex
        let address = try string(data, &at, what: "the address")
        guard at < data.endIndex, data[at] == UInt8(ascii: ",") else {
            // OSC 1.0 allows a message without type tags: no arguments.
            messages.append(OSCMessage(address: address, arguments: []))
            return
        }
        let tags = try string(data, &at, what: "the type tags")
        guard tags.utf8.count - 1 <= maximumArguments else { throw Malformed(reason: "more than \(maximumArguments) arguments") }
        var arguments: [OSCArgument] = []
        for tag in tags.utf8.dropFirst() {
            func need(_ n: Int) throws(Malformed) {
                guard data.endIndex - at >= n else { throw Malformed(reason: "argument '\(Character(UnicodeScalar(tag)))' of \(address) is cut short") }
            }
            switch tag {
            case UInt8(ascii: "i"): try need(4); arguments.append(.int(Int32(bitPattern: UInt32(bigEndian(data, at, 4))))); at += 4
            case UInt8(ascii: "f"): try need(4); arguments.append(.float(Float(bitPattern: UInt32(bigEndian(data, at, 4))))); at += 4
            case UInt8(ascii: "c"), UInt8(ascii: "r"), UInt8(ascii: "m"): try need(4); arguments.append(.int(Int32(bitPattern: UInt32(bigEndian(data, at, 4))))); at += 4
            case UInt8(ascii: "h"), UInt8(ascii: "t"): try need(8); arguments.append(.int64(Int64(bitPattern: bigEndian(data, at, 8)))); at += 8
            case UInt8(ascii: "d"): try need(8); arguments.append(.double(Double(bitPattern: bigEndian(data, at, 8)))); at += 8
            case UInt8(ascii: "s"), UInt8(ascii: "S"): arguments.append(.string(try string(data, &at, what: "a string argument of \(address)")))
            case UInt8(ascii: "b"):
                try need(4)
                let size = Int(bigEndian(data, at, 4))
                at += 4
                let padded = (size + 3) / 4 * 4
                guard padded <= data.endIndex - at else { throw Malformed(reason: "a blob of \(size) bytes where \(data.endIndex - at) remain") }
                arguments.append(.blob(Array(data[at..<(at + size)])))
                at += padded
            case UInt8(ascii: "T"): arguments.append(.bool(true))
            case UInt8(ascii: "F"): arguments.append(.bool(false))
            case UInt8(ascii: "N"), UInt8(ascii: "I"): arguments.append(.none)
            case UInt8(ascii: "["), UInt8(ascii: "]"): continue  // arrays: their elements are read as arguments
            default:
                throw Malformed(reason: "type tag '\(tag < 0x80 && tag >= 0x20 ? String(UnicodeScalar(tag)) : "\\x" + String(tag, radix: 16))' of \(address) is not one OSC 1.0 knows")
            }
        }
        messages.append(OSCMessage(address: address, arguments: arguments))
    }

    /// A NUL-terminated string padded to 4 bytes, at `at` (moved past it).
    private static func string(_ data: ArraySlice<UInt8>, _ at: inout Int, what: String) throws(Malformed) -> String {
        guard let end = data[at...].firstIndex(of: 0) else { throw Malformed(reason: "\(what) has no end (NUL)") }
        let text = String(decoding: data[at..<end], as: UTF8.self)
        // The padding: to the next multiple of 4 from the packet's start.
        let offset = end - data.startIndex + 1
        at = data.startIndex + (offset + 3) / 4 * 4
        guard at <= data.endIndex else { throw Malformed(reason: "\(what) is not padded to 4 bytes") }
        return text
    }

    private static func bigEndian(_ data: ArraySlice<UInt8>, _ at: Int, _ count: Int) -> UInt64 {
        var value: UInt64 = 0
        for k in 0..<count { value = value << 8 | UInt64(data[at + k]) }
        return value
    }

    static func appendBigEndian(_ value: UInt64, bytes count: Int, to out: inout [UInt8]) {
        for k in stride(from: count - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(k)))) }
    }

    static func appendString(_ text: String, to out: inout [UInt8]) {
        out += text.utf8.filter { $0 != 0 }
        out.append(0)
        while out.count % 4 != 0 { out.append(0) }
    }
}
