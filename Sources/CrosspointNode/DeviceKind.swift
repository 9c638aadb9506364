import CPipeWire
import CrosspointCore
import CrosspointPipeWire

/// A kind of device the node makes in the graph: the one seam between `VirtualDeviceHost`'s
/// bookkeeping (status, a name taken, `default`, the memory given back, reconciling links) and
/// what a device is. Given a device's description (a `devices` entry), a kind says what to ask
/// the daemon for, which of its ports link to which of the node's, and under which `default`
/// metadata key it is made the default. The host asks the first kind in its list that makes
/// the entry; a new kind (a network sender over `module-rtp-sink`, say) is one more type here
/// and one more entry in that list, with nothing of the host copied.
protocol DeviceKind {
    /// True if this kind makes `device`.
    func makes(_ device: VirtualDevice) -> Bool
    /// What the daemon is asked for to make `device` (`node` is the owning Crosspoint node's
    /// name). A device whose request changes is made again; one whose
    /// request stays is only linked anew.
    func request(for device: VirtualDevice, node: String) -> DeviceRequest
    /// The links between the device and the node, by port name, in the direction audio flows.
    func links(of device: VirtualDevice) -> [DeviceLink]
    /// The `default` metadata key (`default.configured.audio.sink`...) that makes `device` the
    /// default, or nil if it cannot be one.
    func defaultKey(for device: VirtualDevice) -> String?
    /// Why this kind cannot make `device` on the running PipeWire, if it cannot (said in the
    /// device's status; nothing is asked of the daemon).
    func refusal(for device: VirtualDevice) -> String?
    /// What keeps `device` from being made now, if anything (a sender with no route to its
    /// address: the network down): the host says so and asks again every few seconds, also
    /// while the device is made.
    func problem(for device: VirtualDevice) -> String?
    /// What a person should know of `device` once it is made (a risk of the running PipeWire's
    /// module it is made of): logged once, as a warning.
    func caution(for device: VirtualDevice) -> String?
}

extension DeviceKind {
    func refusal(for device: VirtualDevice) -> String? { nil }
    func problem(for device: VirtualDevice) -> String? { nil }
    func caution(for device: VirtualDevice) -> String? { nil }
}

/// How a device is made: an object a factory creates on the node's connection (a null sink),
/// or a module loaded into the node's context that makes the device's node itself, with the
/// `node.name` of the device (PipeWire's RTP sender and receiver: NetworkDevice.swift).
enum DeviceRequest: Equatable {
    /// `pw_core_create_object(factory, type, version, properties)`.
    case object(factory: String, type: String, version: UInt32, properties: [Property])
    /// `pw_context_load_module(name, arguments)`: `arguments` in SPA-JSON; with a companion
    /// loaded after it and unloaded with it (a 1.x sender's announcer, `module-rtp-sap`), whose
    /// failure leaves the device as it is (said in the log).
    case module(name: String, arguments: String, companion: Companion? = nil)

    struct Companion: Equatable {
        let name: String
        let arguments: String
    }

    struct Property: Equatable {
        let key: String
        let value: String
    }
}

/// One link between a device's port and the node's, by name.
struct DeviceLink: Equatable {
    /// The output port: the device's (`fromDevice`) or the node's.
    let output: String
    /// The input port: the node's (`fromDevice`) or the device's.
    let input: String
    /// True when audio flows from the device into the node.
    let fromDevice: Bool
}

/// PipeWire's stock virtual device: an `adapter` around `support.null-audio-sink` (what
/// `pactl load-module module-null-sink` makes), a sink or a source (why: VirtualDeviceHost).
/// - a sink (`Audio/Sink`): applications play into it; its monitor ports (`monitor_FL`...)
///   are linked into the mixer inputs the device names. `monitor.channel-volumes` puts the
///   sink's own volume and mute (wpctl, pactl, pavucontrol) on those ports (without it, their
///   volume changed nothing the node reads: measured on both versions);
/// - a source (`Audio/Source/Virtual`): the mixer outputs are linked into its input ports
///   (`input_FL`...); applications record from it.
/// `priority.session` is set low, under any real device's, so that WirePlumber never makes a
/// virtual device the default by itself; `object.linger = false`: it goes with the connection.
struct NullSinkDevice: DeviceKind {
    /// A session manager makes the highest `priority.session` the default; ALSA devices have
    /// 1000 and more, a virtual device from pactl none. Under all of them, not 0 (WirePlumber
    /// 0.4 treats a missing priority as 0 and the newest of equals wins).
    static let sessionPriority = "1"

    func makes(_ device: VirtualDevice) -> Bool { !device.kind.isNetwork }

    func request(for device: VirtualDevice, node: String) -> DeviceRequest {
        let values: [(String, String)] = [
            (PW_KEY_FACTORY_NAME, "support.null-audio-sink"),
            (PW_KEY_NODE_NAME, device.name),
            (PW_KEY_NODE_DESCRIPTION, device.description),
            (PW_KEY_MEDIA_CLASS, device.kind == .sink ? MediaClass.sink : MediaClass.virtualSource),
            (SPA_KEY_AUDIO_POSITION, device.positions.joinedBytes(separator: ",")),
            ("monitor.channel-volumes", "true"),
            (PW_KEY_PRIORITY_SESSION, Self.sessionPriority),
            (PW_KEY_NODE_VIRTUAL, "true"),
            (PW_KEY_OBJECT_LINGER, "false"),
            (CrosspointProperty.deviceOf, node),
        ]
        return .object(factory: "adapter", type: "PipeWire:Interface:Node", version: UInt32(PW_VERSION_NODE),
                       properties: values.map { DeviceRequest.Property(key: $0.0, value: $0.1) })
    }

    func links(of device: VirtualDevice) -> [DeviceLink] {
        zip(device.positions, device.channels).map { position, channel in
            device.kind == .sink
                ? DeviceLink(output: "monitor_\(position)", input: PortName.input(channel), fromDevice: true)
                : DeviceLink(output: PortName.output(channel), input: "input_\(position)", fromDevice: false)
        }
    }

    func defaultKey(for device: VirtualDevice) -> String? {
        device.kind == .sink ? DefaultMetadataKey.configuredSink : DefaultMetadataKey.configuredSource
    }
}
