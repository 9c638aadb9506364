import CCrosspointShim
import CPipeWire
import CrosspointCore
import CrosspointPipeWire
import Glibc

/// A Crosspoint node: a `pw_filter` with one DSP port per mixer input and output, its
/// cross-points published as node params. Lives on PipeWire's main loop; only `process`
/// runs on the data thread, and it touches nothing but `DSPContext`. Its owner (`NodeHost`)
/// makes it and its parts (NodePart) and hears, through `host`, what the parts are told.
///
/// `mixer` is the state users set and see (Props). What renders is usually the same; while
/// ports are being removed it is the mixer with the leaving channels muted, so they fade out
/// over the ramp before the ports go.
public final class FilterNode {
    public let configuration: NodeConfiguration
    public let engine: MatrixMixer
    /// The state as set by the user, published in Props.
    public private(set) var mixer: Mixer
    private var filter: OpaquePointer?
    /// The main loop (the parts arm their timers on it).
    let loop: UnsafeMutablePointer<pw_loop>
    private var destroyed = false
    /// The shape the pending removal was timed for.
    private var removalArmedFor: (Int, Int)?
    private let context: UnsafeMutablePointer<DSPContext>
    private let listener: UnsafeMutablePointer<spa_hook>
    /// The node's ports, a group per kind (PortGroup.Kind order): the inputs, the outputs.
    private var groups = PortGroup.Kind.allCases.map(PortGroup.init)
    private var removalTimer: UnsafeMutablePointer<spa_source>?
    private var publishedShape: (Int, Int)
    /// The ducking rules PropInfo lists keys of (`duck.depth.<rule>`, `duck.on.<rule>`).
    private var publishedRules: Int
    /// The level meter; its tap is the data thread's (LevelPublisher reads it, a part).
    let levelMeter = LevelMeter()
    /// MIDI control's crossing, once a part made it (MIDIPorts.swift): freed after the filter.
    private var midi: MIDIRealtime?
    /// While MIDI moves parameters, Props and the parts follow at most every
    /// `midiPublishInterval` ms (the audio follows at once); the last change always lands.
    private var publishTimer: UnsafeMutablePointer<spa_source>?
    private var publishPending = false
    static let midiPublishInterval: UInt64 = 30
    /// While a scene moves (SceneMotion), what it plays glides over its step, not `ramp.ms`.
    private var glideOverride: Double?
    /// The owner, told of everything its parts hear from the node (changes, requests, ports).
    weak var host: NodeHost?

    /// Creates the filter on `core` and connects it. `core` must outlive the node.
    public init(core: OpaquePointer, configuration: NodeConfiguration) throws(NodeError) {
        self.configuration = configuration
        let mixer = configuration.mixer
        self.mixer = mixer
        publishedShape = (mixer.inputs, mixer.outputs)
        publishedRules = mixer.ducking.count
        engine = MatrixMixer(mixer)
        context = .allocate(capacity: 1)
        listener = .allocate(capacity: 1)
        loop = pw_context_get_main_loop(pw_core_get_context(core))
        listener.initialize(to: spa_hook())

        let props = cpshim_properties_new()
        let nodeProperties: [(String, String)] = [
            (PW_KEY_MEDIA_TYPE, "Audio"), (PW_KEY_MEDIA_CATEGORY, "Filter"), (PW_KEY_MEDIA_ROLE, "DSP"),
            (PW_KEY_NODE_NAME, configuration.nodeName), (PW_KEY_NODE_DESCRIPTION, configuration.nodeDescription),
            (CrosspointProperty.inputs, "\(mixer.inputs)"), (CrosspointProperty.outputs, "\(mixer.outputs)"),
            // Its links to and from devices do not keep them running: with nothing playing, the
            // devices, the node and the interface sleep (PipeWire 1.x; on 0.3 the node's own
            // links say link.passive). A node.passive in the arguments wins.
            (PW_KEY_NODE_PASSIVE, "true"),
        ] + configuration.extraProperties
        for (key, value) in nodeProperties { pw_properties_set(props, key, value) }
        guard let filter = pw_filter_new(core, configuration.nodeName, props) else {
            context.deallocate()
            listener.deallocate()
            throw .cannotCreateFilter(name: configuration.nodeName, reason: String(cBytes: strerror(errno)))
        }
        self.filter = filter
        for k in groups.indices {
            for channel in wantedChannels(groups[k].kind) { groups[k].append(addPort(groups[k], channel, at: groups[k].count), channel: channel) }
        }
        context.initialize(to: DSPContext(
            renderer: engine.renderer, levels: levelMeter.tap, owner: nil, table: makePortTable()))
        context.pointee.owner = Unmanaged.passUnretained(self).toOpaque()

        pw_filter_add_listener(filter, listener, FilterNode.events, context)
        let result = PropsCodec.withParams(for: mixer, includingInfo: true) { params in
            pw_filter_connect(filter, PW_FILTER_FLAG_RT_PROCESS, params.baseAddress, UInt32(params.count))
        }
        if result < 0 {
            Log.error("cannot connect the filter: \(String(cBytes: strerror(-result)))")
        }
        Log.info("\(configuration.nodeName): \(mixer.inputs) inputs, \(mixer.outputs) outputs, mixing kernel \(engine.kernel)")
    }

    /// Disconnects and destroys the filter. After this returns the data thread no longer
    /// runs `process`, so the render state can go.
    public func destroy() {
        guard !destroyed else { return }
        destroyed = true
        if let removalTimer { cpshim_loop_destroy_source(loop, removalTimer) }
        removalTimer = nil
        if let publishTimer { cpshim_loop_destroy_source(loop, publishTimer) }
        publishTimer = nil
        if let filter {
            self.filter = nil
            spa_hook_remove(listener)
            pw_filter_destroy(filter)
        }
        midi?.free()
        midi = nil
        PortTable.destroy(context.pointee.table)
        context.deinitialize(count: 1)
        context.deallocate()
        listener.deallocate()
    }

    deinit { destroy() }

    /// The node's id in the graph, once PipeWire has assigned it.
    public var nodeID: UInt32? {
        guard let filter else { return nil }
        let id = pw_filter_get_node_id(filter)
        return id == UInt32.max ? nil : id
    }

    /// Applies a change made here (not through set-param): a restored state, a preset.
    public func update(_ change: (inout Mixer) throws(CrosspointError) -> Void) throws(CrosspointError) {
        var next = mixer
        try change(&next)
        commit(next)
    }

    /// A set-param arrived: apply what is valid, warn about the rest, republish.
    fileprivate func propsChanged(_ pod: UnsafePointer<spa_pod>) {
        guard let entries = PropsCodec.entries(of: pod) else {
            Log.warn("\(configuration.nodeName): ignored a Props param that is not a Props object")
            return
        }
        if entries.isEmpty {
            Log.warn("\(configuration.nodeName): set-param carried no keys (pw-cli drops a Props pod over 1024 bytes; use the crosspoint command for large changes)")
        }
        // Requests to the running node (level watches, MIDI learning) are its parts', not state:
        // they change no Props, so a set-param of requests alone republishes nothing.
        let others = host?.takeRequests(entries) ?? entries
        if others.isEmpty && !entries.isEmpty { return }
        var next = mixer
        let (changed, warnings) = next.apply(others)
        for warning in warnings { Log.warn("\(configuration.nodeName): set-param refused: \(warning)") }
        if changed {
            commit(next)
        } else {
            publish()
        }
    }

    /// Makes `next` the node's state: adds the ports it needs, fades out the ones it no
    /// longer has (removed when the timer fires), hands the mix to the renderer, republishes.
    private func commit(_ next: Mixer) {
        mixer = next
        syncPorts()
        publish()
        host?.mixerChanged(mixer)
    }

    /// Hands the data thread MIDI control's crossing (before the table that has the MIDI
    /// ports); freed with the node, after the filter.
    func attach(midi crossing: MIDIRealtime) {
        midi = crossing
        context.pointee.midi = crossing
    }

    /// Plays `next` at once with its changes gliding over `glide` ms instead of `ramp.ms`: one
    /// step of a scene moving by itself (SceneMotion), the audio following a line from each
    /// step to the next. Props and the parts follow within `publishInterval` ms; `final` (the
    /// move's last step) publishes at once.
    func move(to next: Mixer, glide: Double, final: Bool, publishInterval: UInt64) {
        glideOverride = glide
        defer { glideOverride = nil }
        if final { commit(next) } else { play(next, publishInterval: publishInterval) }
    }

    /// Plays `next` at once (ports, renderer): MIDI moving parameters. Props and the parts
    /// follow within `publishInterval` ms; the last change always lands.
    func play(_ next: Mixer, publishInterval: UInt64 = FilterNode.midiPublishInterval) {
        mixer = next
        syncPorts()
        guard !publishPending else { return }
        publishPending = true
        if publishTimer == nil {
            let data = Unmanaged.passUnretained(self).toOpaque()
            publishTimer = cpshim_loop_add_timer(loop, { data, _ in
                let node = Unmanaged<FilterNode>.fromOpaque(data!).takeUnretainedValue()
                node.publishPending = false
                node.publish()
                node.host?.mixerChanged(node.mixer)
            }, data)
        }
        if let publishTimer { _ = cpshim_loop_arm_timer(loop, publishTimer, publishInterval) }
    }

    /// Brings ports and renderer in line with `mixer`.
    private func syncPorts() {
        guard filter != nil else { return }
        // Surviving ports whose channel was renamed (input.position / output.position) get a
        // new port object under the new name: registry readers (pw-link, Helvum, qpwgraph) only
        // ever see a port's first name. The old port keeps playing until the new one is
        // linked to the same peers (`finishReplacements`), then goes.
        finishReplacements()
        for k in groups.indices {
            let wanted = wantedChannels(groups[k].kind)
            for i in 0..<min(groups[k].count, wanted.count) where groups[k].channels[i] != wanted[i] {
                replace(group: k, index: i, to: wanted[i])
            }
        }
        if !replacements.isEmpty, host?.portsReplacing(replacements.map { ($0.oldName, $0.newName) }) != true {
            finishReplacements()
        }
        host?.preparePorts(for: mixer)
        var added = false
        for k in groups.indices {
            let wanted = wantedChannels(groups[k].kind)
            while groups[k].count < wanted.count {
                let channel = wanted[groups[k].count]
                groups[k].append(addPort(groups[k], channel, at: groups[k].count), channel: channel)
                added = true
            }
        }
        if added { swapPortTable() }

        let leaving = groups.contains { $0.count > wantedChannels($0.kind).count }
        guard leaving else {
            engine.replace(with: gliding(mixer))
            return
        }
        // Render the ports that are leaving as muted channels: they fade out over the ramp.
        var fading = mixer
        do {
            let inputs = group(.audioInput).count, outputs = group(.audioOutput).count
            try fading.resize(inputs: inputs, outputs: outputs)
            for i in mixer.inputs..<inputs { try fading.setInputMute(i, true) }
            for j in mixer.outputs..<outputs { try fading.setOutputMute(j, true) }
        } catch {
            Log.error("\(configuration.nodeName): cannot fade out ports: \(error)")
        }
        engine.replace(with: gliding(fading))
        if removalTimer == nil {
            let data = Unmanaged.passUnretained(self).toOpaque()
            removalTimer = cpshim_loop_add_timer(loop, { data, _ in
                Unmanaged<FilterNode>.fromOpaque(data!).takeUnretainedValue().removeLeavingPorts()
            }, data)
        }
        // Remove them once the fade has certainly been played: the ramp, plus the longest
        // quantum (8192 frames, 171 ms at 48 kHz) before the renderer takes the plan, plus margin.
        // A further change that leaves the same ports going does not postpone it.
        if let removalTimer, removalArmedFor.map({ $0 != (mixer.inputs, mixer.outputs) }) ?? true {
            removalArmedFor = (mixer.inputs, mixer.outputs)
            _ = cpshim_loop_arm_timer(loop, removalTimer, UInt64(mixer.rampMilliseconds.rounded(.up)) + 250)
        }
    }

    /// What the renderer plays for `mixer`: its changes over the glide of a moving scene, if one
    /// is moving, else over its own `ramp.ms`.
    private func gliding(_ mixer: Mixer) -> Mixer {
        guard let glideOverride else { return mixer }
        var gliding = mixer
        try? gliding.setRamp(milliseconds: min(glideOverride, Mixer.rampRange.upperBound))
        return gliding
    }

    /// The leaving ports are silent now: take them out of the data thread's table, then
    /// remove them from the filter (which also destroys their links).
    private func removeLeavingPorts() {
        removalArmedFor = nil
        finishReplacements()
        var gone: [(handle: UnsafeMutableRawPointer?, name: String)] = []
        for k in groups.indices { gone += groups[k].removeAll(after: wantedChannels(groups[k].kind).count) }
        guard !gone.isEmpty else { return }
        swapPortTable()
        for port in gone { if let handle = port.handle { pw_filter_remove_port(handle) } }
        let goneNames = gone.map(\.name)
        host?.portsRemoved(goneNames)
        engine.replace(with: mixer)
        publish()
    }

    /// The channels the mixer wants ports of `kind` for, in order.
    private func wantedChannels(_ kind: PortGroup.Kind) -> [String] {
        switch kind {
        case .audioInput: mixer.inputChannels
        case .audioOutput: mixer.outputChannels
        case .midiInput: mixer.midi.ports ? ["in"] : []
        case .midiOutput: mixer.midi.ports ? ["out"] : []
        }
    }

    /// The group of `kind` (every kind has one, made in `groups`' initial value).
    private func group(_ kind: PortGroup.Kind) -> PortGroup {
        groups.first { $0.kind == kind } ?? PortGroup(kind)
    }

    /// A new port of `group` carrying `channel`, the group's port `index`. Its `object.path`
    /// is what an adapter's port gets (`Crosspoint desk:input_0`, by position: JACK's first alias) and
    /// its `port.alias` the description and the name (`Crosspoint desk:in_mic`, the second).
    private func addPort(_ group: PortGroup, _ channel: String, at index: Int) -> UnsafeMutableRawPointer? {
        let p = cpshim_properties_new()
        let name = group.portName(channel)
        pw_properties_set(p, PW_KEY_PORT_NAME, name)
        if !group.kind.isMIDI { pw_properties_set(p, PW_KEY_AUDIO_CHANNEL, channel) }
        pw_properties_set(p, PW_KEY_OBJECT_PATH, "\(configuration.nodeDescription):\(group.pathPrefix)_\(index)")
        pw_properties_set(p, PW_KEY_PORT_ALIAS, "\(configuration.nodeDescription):\(name)")
        pw_properties_set(p, PW_KEY_FORMAT_DSP, group.format)
        return pw_filter_add_port(filter, group.direction, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 8, p, nil, 0)
    }

    /// A port being replaced by one under a new name.
    private struct Replacement {
        /// The index of its group in `groups`.
        let group: Int
        let index: Int
        let old: UnsafeMutableRawPointer?
        let new: UnsafeMutableRawPointer?
        let oldName: String
        let newName: String
    }

    /// Ports whose replacements exist but do not play yet.
    private var replacements: [Replacement] = []

    /// Makes the replacement of port `index` of `groups[k]`, under the name of `channel`.
    private func replace(group k: Int, index: Int, to channel: String) {
        let new = addPort(groups[k], channel, at: index)
        replacements.append(Replacement(group: k, index: index, old: groups[k].handles[index], new: new,
                                        oldName: groups[k].portName(groups[k].channels[index]),
                                        newName: groups[k].portName(channel)))
        groups[k].rename(index, to: channel)
    }

    /// The new ports take over (the data thread swaps to them) and the old ones go, with their
    /// links. Called once the new ports are linked like the old ones, or at once.
    public func finishReplacements() {
        guard !replacements.isEmpty else { return }
        let done = replacements
        replacements = []
        for r in done { groups[r.group].replace(r.index, with: r.new) }
        swapPortTable()
        for r in done { if let old = r.old { pw_filter_remove_port(old) } }
    }

    /// Gives the data thread a new port table, synchronously on the data loop (so that the
    /// old one, and any port not in the new one, is no longer touched once this returns).
    private func swapPortTable() {
        guard let filter else { return }
        let loop = pw_data_loop_get_loop(pw_context_get_data_loop(pw_core_get_context(pw_filter_get_core(filter))))
        PortTable.swap(in: context, makePortTable(), on: loop)
    }

    /// Publishes a node property of another part of the node (the virtual devices' state).
    public func publishProperty(_ key: String, _ value: String) { setProperty(key, value) }

    /// The data thread's table of the ports that play now.
    private func makePortTable() -> UnsafeMutablePointer<PortTable> {
        PortTable.make(inputs: group(.audioInput).handles, outputs: group(.audioOutput).handles,
                       midiInput: group(.midiInput).handles.first ?? nil, midiOutput: group(.midiOutput).handles.first ?? nil)
    }

    /// Republishes Props (and PropInfo when the shape changed) so enum-params and pw-dump show the state.
    func publish() {
        guard let filter else { return }
        engine.collectRetired()
        let shapeChanged = publishedShape != (mixer.inputs, mixer.outputs)
        publishedShape = (mixer.inputs, mixer.outputs)
        if shapeChanged {
            publishFormat()
            let props = cpshim_properties_new()
            pw_properties_set(props, CrosspointProperty.inputs, "\(mixer.inputs)")
            pw_properties_set(props, CrosspointProperty.outputs, "\(mixer.outputs)")
            pw_filter_update_properties(filter, nil, &props!.pointee.dict)
            pw_properties_free(props)
        }
        let rulesChanged = publishedRules != mixer.ducking.count
        publishedRules = mixer.ducking.count
        _ = PropsCodec.withParams(for: mixer, includingInfo: shapeChanged || rulesChanged) { params in
            pw_filter_update_params(filter, nil, params.baseAddress, UInt32(params.count))
        }
    }

    /// The node's Format param: F32P at the rate it runs at, one channel per input (pw-top's
    /// FORMAT column; PipeWire 1.x's pw_filter publishes a node's Format, 0.3.65's keeps it
    /// unlisted: `pw-cli enum-params ID Format` reads it there). Once the rate is known and on
    /// every change of it or of the inputs.
    func publishFormat() {
        let rate = engine.renderRate
        guard let filter, rate > 0 else { return }
        let buffer = PodBuffer(size: 512)
        var pod: UnsafePointer<spa_pod>? = UnsafePointer(cpshim_dsp_format(&buffer.builder, UInt32(clamping: rate), UInt32(clamping: mixer.inputs)))
        guard pod != nil, !buffer.overflowed else { return }
        pw_filter_update_params(filter, nil, &pod, 1)
    }

    /// Sets one node property (`pw_filter_update_properties`: every client bound to the node
    /// hears of it in the node's info).
    private func setProperty(_ key: String, _ value: String) {
        guard let filter, let props = cpshim_properties_new() else { return }
        pw_properties_set(props, key, value)
        pw_filter_update_properties(filter, nil, &props.pointee.dict)
        pw_properties_free(props)
    }

    // MARK: Events

    fileprivate static func node(_ data: UnsafeMutableRawPointer?) -> FilterNode? {
        guard let owner = data?.assumingMemoryBound(to: DSPContext.self).pointee.owner else { return nil }
        return Unmanaged<FilterNode>.fromOpaque(owner).takeUnretainedValue()
    }

    nonisolated(unsafe) private static let events = eventTable(pw_filter_events(), version: { $0.version = $1 }, PW_VERSION_FILTER_EVENTS) { events in
        events.process = dspProcess
        events.param_changed = { data, portData, id, param in
            guard portData == nil, id == SPA_PARAM_Props.rawValue, let param,
                  let node = FilterNode.node(data) else { return }
            node.propsChanged(param)
        }
        events.add_buffer = { data, portData, _ in
            // midi_out was linked (its buffers arrive): send the linked surface every control,
            // once the link runs.
            guard let node = FilterNode.node(data), let portData,
                  portData == node.group(.midiOutput).handles.first ?? nil else { return }
            node.host?.portGotBuffers(.midiOutput)
        }
        events.destroy = { data in
            // The core destroyed the filter (it is going away): forget it, free the rest later.
            FilterNode.node(data)?.filter = nil
        }
        events.state_changed = { data, old, state, error in
            guard let node = FilterNode.node(data) else { return }
            let name = String(cBytes: pw_filter_state_as_string(state))
            Log.debug("\(node.configuration.nodeName): state \(name)")
            if state == PW_FILTER_STATE_ERROR {
                let message = error.map { String(cBytes: $0) } ?? "unknown error"
                Log.error("\(node.configuration.nodeName): \(message)")
                node.host?.filterFailed(message)
            }
        }
    }
}

/// What can keep a node from running, apart from its arguments.
public enum NodeError: Error, CustomStringConvertible {
    /// The module could not reach the daemon's core.
    case cannotConnect(reason: String)
    /// `pw_filter_new` failed.
    case cannotCreateFilter(name: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotConnect(reason): "cannot connect to PipeWire: \(reason)"
        case let .cannotCreateFilter(name, reason): "PipeWire could not create the filter of node '\(name)': \(reason)"
        }
    }
}
