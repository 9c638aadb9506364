// Fuzz target (b): the module's arguments, fed SPA-JSON text, as `pipewire__module_init`
// receives them from a drop-in's `args = { ... }` or `pw-cli load-module`. For each input:
// `NodeConfiguration(arguments:)`; when it is accepted, what the module does next without a
// daemon: the node's properties, the mixer's render plan and a few blocks, PropInfo and Props,
// the state folder's name, the state's fingerprint and the preset it would save.
//
// Build and run: scripts/fuzz. Seeds: Tests/Fuzz/corpus/arguments (the args of the drop-ins
// in conf/ and the tests, and hostile ones).
import CrosspointCore
import CrosspointNode
import CrosspointPipeWire
import FoundationEssentials
import Glibc

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    // The module gets a C string: the text up to the first NUL.
    let bytes = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    let configuration: NodeConfiguration
    do {
        configuration = try NodeConfiguration(arguments: text)
    } catch {
        if error.description.isEmpty { fatalError("an empty argument error") }
        return 0
    }
    let mixer = configuration.mixer
    var properties = [("node.name", configuration.nodeName), ("node.description", configuration.nodeDescription)]
    properties += configuration.extraProperties
    for (key, value) in properties where key.isEmpty && value.isEmpty { fatalError("an empty property") }
    let engine = MatrixMixer(mixer)
    renderBlocks(engine, inputs: mixer.inputs, outputs: mixer.outputs)
    PropsCodec.withParams(for: mixer, includingInfo: true) { params in
        if params.contains(where: { $0 == nil }) { fatalError("a param pod was not built") }
    }
    _ = try? StateStore.folderName(for: configuration.nodeName)
    _ = NodeState.fingerprint(mixer)
    guard let saved = try? JSONEncoder().encode(NodeState(configured: NodeState.fingerprint(mixer), mixer: mixer.preset, links: [])),
          case .success = StateStore.decode(Array(saved), configured: mixer) else {
        fatalError("the state of a node made from these arguments does not load back")
    }
    return 0
}
