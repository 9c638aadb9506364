/// The names in the graph, written once: Crosspoint's own node properties and ports' names, and
/// the names of PipeWire's and the session manager's that its headers do not define (media
/// classes, metadata keys). PipeWire's own property keys are PipeWire's `PW_KEY_*` (imported from
/// its headers through CPipeWire), never string literals.

import CrosspointCore

/// Node properties of Crosspoint's own, read by the command line and the surface.
public enum CrosspointProperty {
    /// The number of mixer inputs, refreshed as ports come and go.
    public static let inputs = "crosspoint.inputs"
    /// The number of mixer outputs.
    public static let outputs = "crosspoint.outputs"
    /// The latest levels, while someone watches them (`LevelsCodec`).
    public static let levels = "crosspoint.levels"
    /// The node's virtual devices and their state (`game: ready (node 42); ...`).
    public static let devices = "crosspoint.devices"
    /// The node's output groups and the device each is linked to (`default: linked to ...`).
    public static let targets = "crosspoint.targets"
    /// The sample rate the node runs at, in Hz, once it has run (`RateWatch`): what `crosspoint
    /// delay` converts samples at.
    public static let rate = "crosspoint.rate"
    /// On a virtual device: the name of the Crosspoint node that made it (VirtualDeviceHost);
    /// `crosspoint apps`, the surface and a restarted node find their devices by it.
    public static let deviceOf = "crosspoint.device.of"
    /// On a link: the Crosspoint node whose output following made it (OutputFollower), which
    /// removes only its own links; a link a person made is theirs.
    public static let linkedBy = "crosspoint.linked-by"
}

/// Media classes (`media.class`) Crosspoint makes, looks for or lists.
public enum MediaClass {
    /// A sink: a device applications play to (a null sink, an interface's playback).
    public static let sink = "Audio/Sink"
    /// A device that is a sink and a source at once.
    public static let duplex = "Audio/Duplex"
    /// A virtual source: recording applications may choose it, the session manager does not
    /// link it by itself (a null sink's kind for a source).
    public static let virtualSource = "Audio/Source/Virtual"

    /// An application's playback stream (pavucontrol's Playback, pactl's sink-inputs).
    public static let playbackStream = "Stream/Output/Audio"
    /// An application's recording stream (pavucontrol's Recording, pactl's source-outputs).
    public static let recordingStream = "Stream/Input/Audio"

    /// A source: a device applications record from (a microphone, an interface's capture).
    public static let source = "Audio/Source"

    /// True for a node applications can record from (a source, a virtual source, a duplex device).
    public static func isSource(_ mediaClass: String?) -> Bool { mediaClass == source || mediaClass == virtualSource || mediaClass == duplex }

    /// True for a node applications can play to.
    public static func isSink(_ mediaClass: String?) -> Bool { mediaClass == sink || mediaClass == duplex }

    /// True for an application's stream, playback or recording.
    public static func isStream(_ mediaClass: String?) -> Bool { mediaClass == playbackStream || mediaClass == recordingStream }

    /// True for any kind of device, as PipeWire 1.x reads `media.class` to make a passive
    /// node's links passive: one that names a sink or a source (`Audio/Sink`,
    /// `Audio/Source/Virtual`, `Audio/Duplex` does not: it is neither word).
    public static func isDevice(_ mediaClass: String?) -> Bool {
        mediaClass.map { $0.containsBytes("Sink") || $0.containsBytes("Source") } ?? false
    }
}

/// The `settings` metadata (the graph's clock, as `pw-metadata -n settings` shows it).
public enum SettingsMetadataKey {
    public static let metadataName = "settings"
    /// The rate the graph's clock runs at unless a device asks another (`clock.rate`).
    public static let clockRate = "clock.rate"
}

/// Keys of the `default` metadata, which the session manager keeps (WirePlumber's policy,
/// `wpctl set-default`, pipewire-pulse's `set-default-sink` and `move-sink-input`).
public enum DefaultMetadataKey {
    /// The metadata object's name.
    public static let metadataName = "default"
    /// The sink the session manager chose (`{ "name": ... }`).
    public static let sink = "default.audio.sink"
    /// The source the session manager chose.
    public static let source = "default.audio.source"
    /// The sink a person asked for, which the session manager follows while it exists.
    public static let configuredSink = "default.configured.audio.sink"
    /// The source a person asked for.
    public static let configuredSource = "default.configured.audio.source"
    /// On a stream: the device it is to play to, by id (PipeWire 0.3.x's session managers).
    public static let targetNode = "target.node"
    /// On a stream: the device it is to play to, by serial (PipeWire 1.x; `PW_KEY_TARGET_OBJECT`).
    public static let targetObject = "target.object"
    /// A stream's target that is none: the default device, followed (pipewire-pulse's and
    /// WirePlumber's own value).
    public static let noTarget = "-1"

    /// The `name` of a default device's value, `{ "name": "alsa_output..." }`, read with
    /// libspa's SPA-JSON parser.
    public static func deviceName(inJSON text: String) -> String? {
        guard case let .object(members)? = SPAJSONValue(parsing: text) else { return nil }
        for (key, value) in members where key == "name" {
            if case let .string(name) = value { return name }
        }
        return nil
    }
}

/// Stream properties that pipewire-pulse and the session manager read, not in 0.3.65's headers.
public enum StreamProperty {
    /// `true`: the stream asks never to be moved (the session manager ignores its target).
    public static let dontMove = "node.dont-move"
    /// `true`: the stream would rather end than play anywhere but its target.
    public static let dontFallback = "node.dont-fallback"
}

/// A Crosspoint node's port names: `in_<channel>` for a mixer input, `out_<channel>` for a mixer
/// output, `midi_in` and `midi_out` for MIDI control.
public enum PortName {
    public static let inputPrefix = "in"
    public static let outputPrefix = "out"
    public static let midiPrefix = "midi"

    /// The name of the port of mixer input `channel`.
    public static func input(_ channel: String) -> String { "\(inputPrefix)_\(channel)" }
    /// The name of the port of mixer output `channel`.
    public static func output(_ channel: String) -> String { "\(outputPrefix)_\(channel)" }
    /// The channel of a mixer input's port name (`in_FL` -> `FL`), nil for another port.
    public static func inputChannel(_ name: String) -> String? {
        name.startsWithBytes(inputPrefix + "_") ? String(name.dropFirst(inputPrefix.count + 1)) : nil
    }
    /// The channel of a mixer output's port name (`out_FL` -> `FL`), nil for another port.
    public static func outputChannel(_ name: String) -> String? {
        name.startsWithBytes(outputPrefix + "_") ? String(name.dropFirst(outputPrefix.count + 1)) : nil
    }
    /// True if `name` is one of a node's input ports (a mixer input or `midi_in`).
    public static func isInput(_ name: String) -> Bool {
        name.startsWithBytes(inputPrefix + "_") || name == "\(midiPrefix)_in"
    }
}
