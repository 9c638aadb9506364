import CCrosspointShim
import CPipeWire
import CrosspointCore
import Glibc

/// A Crosspoint node: a `pw_filter` with one DSP port per mixer input and output, its
/// cross-points published as node params. Lives on PipeWire's main loop; only `process`
/// runs on the data thread, and it touches nothing but `DSPContext`.
public final class FilterNode {
    public let configuration: NodeConfiguration
    public let engine: MatrixMixer
    private var filter: OpaquePointer?
    private let context: UnsafeMutablePointer<DSPContext>
    private let listener: UnsafeMutablePointer<spa_hook>
    /// Called on the main loop when the filter fails (e.g. its connection breaks).
    public var onError: ((String) -> Void)?
    /// Called on the main loop after every accepted change of the mixer.
    public var onChange: ((Mixer) -> Void)?

    /// Creates the filter on `core` and connects it. `core` must outlive the node.
    public init(core: OpaquePointer, configuration: NodeConfiguration) throws(ArgumentError) {
        self.configuration = configuration
        let mixer = configuration.mixer
        engine = MatrixMixer(mixer)
        context = .allocate(capacity: 1)
        listener = .allocate(capacity: 1)
        listener.initialize(to: spa_hook())

        let props = cpshim_properties_new()
        let nodeProperties: [(String, String)] = [
            ("media.type", "Audio"), ("media.category", "Filter"), ("media.role", "DSP"),
            ("node.name", configuration.nodeName), ("node.description", configuration.nodeDescription),
            ("crosspoint.inputs", "\(mixer.inputs)"), ("crosspoint.outputs", "\(mixer.outputs)"),
        ] + configuration.extraProperties
        for (key, value) in nodeProperties { pw_properties_set(props, key, value) }
        guard let filter = pw_filter_new(core, configuration.nodeName, props) else {
            context.deallocate()
            listener.deallocate()
            throw ArgumentError(argument: "node.name", reason: "PipeWire could not create the filter")
        }
        self.filter = filter

        func addPort(_ direction: spa_direction, _ prefix: String, _ channel: String) -> UnsafeMutableRawPointer? {
            let p = cpshim_properties_new()
            let name = "\(prefix)_\(channel)"
            pw_properties_set(p, "format.dsp", "32 bit float mono audio")
            pw_properties_set(p, "port.name", name)
            pw_properties_set(p, "audio.channel", channel)
            pw_properties_set(p, "port.alias", "\(configuration.nodeDescription):\(name)")
            return pw_filter_add_port(filter, direction, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 8, p, nil, 0)
        }
        let inputs = mixer.inputChannels.map { addPort(SPA_DIRECTION_INPUT, "in", $0) }
        let outputs = mixer.outputChannels.map { addPort(SPA_DIRECTION_OUTPUT, "out", $0) }
        context.initialize(to: DSPContext(
            renderer: engine.renderer, owner: nil, table: PortTable.make(inputs: inputs, outputs: outputs)))
        context.pointee.owner = Unmanaged.passUnretained(self).toOpaque()

        pw_filter_add_listener(filter, listener, FilterNode.events, context)
        let result = PropsCodec.withParams(for: mixer, includingInfo: true) { params in
            pw_filter_connect(filter, PW_FILTER_FLAG_RT_PROCESS, params.baseAddress, UInt32(params.count))
        }
        if result < 0 {
            Log.error("cannot connect the filter: \(String(cString: strerror(-result)))")
        }
        Log.info("\(configuration.nodeName): \(mixer.inputs) inputs, \(mixer.outputs) outputs")
    }

    /// Disconnects and destroys the filter. After this returns the data thread no longer
    /// runs `process`, so the render state can go.
    public func destroy() {
        guard let filter else { return }
        self.filter = nil
        spa_hook_remove(listener)
        pw_filter_destroy(filter)
        context.pointee.table.pointee.free()
        context.pointee.table.deallocate()
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

    /// Applies a change made here (not through set-param), republishing Props.
    public func update(_ change: (inout Mixer) throws(CrosspointError) -> Void) throws(CrosspointError) {
        try engine.update(change)
        publish(includingInfo: false)
        onChange?(engine.mixer)
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
        var mixer = engine.mixer
        let (changed, warnings) = mixer.apply(entries)
        for warning in warnings { Log.warn("\(configuration.nodeName): set-param refused: \(warning)") }
        if changed {
            engine.replace(with: mixer)
            onChange?(mixer)
        }
        publish(includingInfo: false)
    }

    /// Republishes Props (and PropInfo when asked) so enum-params and pw-dump show the state.
    func publish(includingInfo: Bool) {
        guard let filter else { return }
        engine.collectRetired()
        _ = PropsCodec.withParams(for: engine.mixer, includingInfo: includingInfo) { params in
            pw_filter_update_params(filter, nil, params.baseAddress, UInt32(params.count))
        }
    }

    // MARK: Events

    fileprivate static func node(_ data: UnsafeMutableRawPointer?) -> FilterNode? {
        guard let owner = data?.assumingMemoryBound(to: DSPContext.self).pointee.owner else { return nil }
        return Unmanaged<FilterNode>.fromOpaque(owner).takeUnretainedValue()
    }

    nonisolated(unsafe) private static let events: UnsafeMutablePointer<pw_filter_events> = {
        let events = UnsafeMutablePointer<pw_filter_events>.allocate(capacity: 1)
        events.initialize(to: pw_filter_events())
        events.pointee.version = UInt32(PW_VERSION_FILTER_EVENTS)
        events.pointee.process = dspProcess
        events.pointee.param_changed = { data, portData, id, param in
            guard portData == nil, id == SPA_PARAM_Props.rawValue, let param,
                  let node = FilterNode.node(data) else { return }
            node.propsChanged(param)
        }
        events.pointee.state_changed = { data, old, state, error in
            guard let node = FilterNode.node(data) else { return }
            let name = String(cString: pw_filter_state_as_string(state))
            Log.debug("\(node.configuration.nodeName): state \(name)")
            if state == PW_FILTER_STATE_ERROR {
                let message = error.map { String(cString: $0) } ?? "unknown error"
                Log.error("\(node.configuration.nodeName): \(message)")
                node.onError?(message)
            }
        }
        return events
    }()
}

/// What the data thread reads: the renderer and its own table of ports.
struct DSPContext {
    var renderer: MatrixRenderer
    /// The `FilterNode`, unretained; read only by main-loop callbacks.
    var owner: UnsafeMutableRawPointer?
    var table: UnsafeMutablePointer<PortTable>
}

/// The data thread's port table and the buffer pointers it fills each cycle, allocated on the
/// main loop.
struct PortTable {
    let inputs: UnsafeMutableBufferPointer<UnsafeMutableRawPointer?>
    let outputs: UnsafeMutableBufferPointer<UnsafeMutableRawPointer?>
    let inputBuffers: UnsafeMutableBufferPointer<UnsafePointer<Float>?>
    let outputBuffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>

    static func make(inputs: [UnsafeMutableRawPointer?], outputs: [UnsafeMutableRawPointer?]) -> UnsafeMutablePointer<PortTable> {
        let table = UnsafeMutablePointer<PortTable>.allocate(capacity: 1)
        let ins = UnsafeMutableBufferPointer<UnsafeMutableRawPointer?>.allocate(capacity: inputs.count)
        _ = ins.initialize(from: inputs)
        let outs = UnsafeMutableBufferPointer<UnsafeMutableRawPointer?>.allocate(capacity: outputs.count)
        _ = outs.initialize(from: outputs)
        let inBuffers = UnsafeMutableBufferPointer<UnsafePointer<Float>?>.allocate(capacity: inputs.count)
        inBuffers.initialize(repeating: nil)
        let outBuffers = UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>.allocate(capacity: outputs.count)
        outBuffers.initialize(repeating: nil)
        table.initialize(to: PortTable(inputs: ins, outputs: outs, inputBuffers: inBuffers, outputBuffers: outBuffers))
        return table
    }

    func free() {
        inputs.deallocate()
        outputs.deallocate()
        inputBuffers.deallocate()
        outputBuffers.deallocate()
    }
}

/// The process callback, on the data thread: fetch each port's buffer (NULL = unlinked:
/// silence in, skipped out), then render. No allocation, lock, log or retain.
private func dspProcess(_ data: UnsafeMutableRawPointer?, _ position: UnsafeMutablePointer<spa_io_position>?) {
    guard let data, let position else { return }
    let context = data.assumingMemoryBound(to: DSPContext.self)
    let frames = Int(min(position.pointee.clock.duration, UInt64(maximumFrameCount)))
    guard frames > 0 else { return }
    let table = context.pointee.table.pointee
    for k in 0..<table.inputs.count {
        let buffer = pw_filter_get_dsp_buffer(table.inputs[k], UInt32(frames))
        table.inputBuffers[k] = buffer.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) }
    }
    for k in 0..<table.outputs.count {
        table.outputBuffers[k] = pw_filter_get_dsp_buffer(table.outputs[k], UInt32(frames))?
            .assumingMemoryBound(to: Float.self)
    }
    let rate = position.pointee.clock.rate.denom
    if rate > 0 { context.pointee.renderer.sampleRate = Double(rate) }
    context.pointee.renderer.render(
        frameCount: frames, inputs: UnsafeBufferPointer(table.inputBuffers),
        outputs: UnsafeBufferPointer(table.outputBuffers))
}
