import ArgumentParser
import CrosspointControl
import CrosspointCore
import Glibc

/// `crosspoint scene`: a node's scenes, over the `scenes`, `scene.safe`, `scene.morph.between`
/// and `scene.morph` keys and the `scene.recall` request (README: Scenes).
struct SceneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scene",
        abstract: "Store whole mixes as scenes; recall one over seconds, or fade between two.",
        discussion: """
        A scene holds the gains, mutes, matrix, master and delays of the node (not its ports, \
        devices, MIDI or ducking rules). A recall moves every changed value by itself over \
        --time (0 to 60 s; gains in dB, equal power where a cross-point fades in or out); keys \
        in the recall safes stay as they are. The morph fader (scene.morph, 0 to 1, which MIDI \
        and OSC can move) sets the mix between two scenes of the same channels.

        Examples:
          crosspoint scene store band soundcheck
          crosspoint scene recall band show --time 10s
          crosspoint scene safe band gain.in.vocal,gain.master
          crosspoint scene morph band 0.5 --between soundcheck,show
          crosspoint scene list band
          crosspoint scene rename band show encore
          crosspoint scene remove band soundcheck
        """,
        subcommands: [SceneListCommand.self, SceneStoreCommand.self, SceneRecallCommand.self, SceneRenameCommand.self,
                      SceneRemoveCommand.self, SceneSafeCommand.self, SceneMorphCommand.self])
}

private let sceneHelp = ArgumentHelp("The scene's name: ASCII letters, digits, _, - or . (up to 63).", valueName: "name")

struct SceneListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The node's scenes, its recall safes and its morph fader.")
    @OptionGroup var connection: Connection
    @Flag(help: "Print as JSON: { node, scenes: [ { name, inputs, outputs, unmatchedInputs, unmatchedOutputs, text } ], safes, morph: { between, position } }.")
    var json = false
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String?

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let mixer = try session.mixer(of: target)
        if json {
            print(try JSONText.encode(SceneListing(node: target.name, mixer: mixer)), terminator: "")
            return
        }
        if mixer.scenes.isEmpty { print("\(target.name): no scenes (crosspoint scene store \(target.name.printable) NAME)") }
        for scene in mixer.scenes {
            let unmatched = scene.unmatched(on: mixer)
            let note = unmatched.inputs.isEmpty && unmatched.outputs.isEmpty ? "" : "; not on this node: \(Scene.describe(unmatched: unmatched))"
            print("  \(scene.name): \(scene.inputs.count) in, \(scene.outputs.count) out\(note)")
        }
        if !mixer.sceneSafes.isEmpty { print("recall safes: \(mixer.sceneSafes.joined(separator: ", "))") }
        if mixer.morphScenes.count == 2 {
            print("morph: \(Gain.format(mixer.morphPosition)) between \(mixer.morphScenes[0]) (0) and \(mixer.morphScenes[1]) (1)")
        }
    }
}

struct SceneStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store", abstract: "Store the node's mix as a scene (replacing one of that name).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: sceneHelp) var name: String

    func run() throws {
        try connection.connect().change(node: node, keys: [Parameter(.scenes)], report: output.reporter) { m in
            try m.storeScene(named: name)
        }
    }
}

struct SceneRecallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recall", abstract: "Move the node to a scene, at once or over --time; the node does the moving.")
    @OptionGroup var connection: Connection
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: sceneHelp) var name: String
    @Option(help: ArgumentHelp("How long the move takes: 0 (at the ramp) to 60 s, as 10s or 2500ms.", valueName: "time"))
    var time: String = "0"
    @Flag(help: "Wait until the node has arrived (up to the time and 2 s more).") var wait = false

    func run() throws {
        let session = try connection.connect()
        let target = try session.target(node)
        let before = try session.mixer(of: target)
        let recall: SceneRecall
        do throws(CrosspointError) {
            recall = try SceneRecall(name: name, milliseconds: try SceneRecall.time(CommandLineWords.restore(time)))
        } catch {
            throw CommandError.from(error, before)
        }
        try session.request(target, Parameter(.sceneRecall), recall.value, against: before)
        if let scene = before.scene(named: name) {
            let unmatched = scene.unmatched(on: before)
            if !unmatched.inputs.isEmpty || !unmatched.outputs.isEmpty {
                printError("\(target.name): scene \(name.printable) has channels this node has not (\(Scene.describe(unmatched: unmatched))): recalled where the names match")
            }
        }
        print("\(target.name): recalling scene \(name.printable)" + (recall.milliseconds > 0 ? " over \(Gain.formatMilliseconds(recall.milliseconds)) ms" : ""))
        guard wait, var expected = Optional(before) else { return }
        try expected.recall(name)
        // Arrived when every key the scene moves reads as the scene has it (keys moved by hand
        // meanwhile would keep it waiting until the deadline: then it says so).
        let deadline = ContinuousClock.now + .milliseconds(Int(recall.milliseconds) + 2000)
        var differing: [String] = []
        while ContinuousClock.now < deadline {
            let now = try session.mixer(of: target)
            guard now.inputChannels == expected.inputChannels && now.outputChannels == expected.outputChannels else { break }
            differing = Scene.kinds.flatMap { Parameter.all(of: $0, for: now) }
                .filter { now.value(of: $0) != expected.value(of: $0) }
                .map { "\($0.name(in: now)) is \(now.value(of: $0)), not \(expected.value(of: $0))" }
            if now.masterMute != expected.masterMute { differing.append("the master mute is \(now.masterMute ? "on" : "off")") }
            if differing.isEmpty { return }
            usleep(50_000)
        }
        throw CommandError.invalid("\(target.name): scene \(name.printable) not reached within \(Gain.formatMilliseconds(recall.milliseconds + 2000)) ms: "
            + (differing.isEmpty ? "the node's channels changed" : differing.prefix(3).joined(separator: "; "))
            + " (a key moved by hand meanwhile stays where it was put)")
    }
}

struct SceneRenameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename a scene (the morph fader's ends follow).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The scene's name now.", valueName: "name")) var name: String
    @Argument(help: ArgumentHelp("Its new name.", valueName: "new-name")) var newName: String

    func run() throws {
        try connection.connect().change(node: node, keys: [Parameter(.scenes), Parameter(.morphScenes)], report: output.reporter) { m in
            guard let at = m.scenes.firstIndex(where: { $0.name == name }) else { throw noScene(name, m) }
            try Scene.checkName(newName)
            guard m.scene(named: newName) == nil else { throw CommandError.invalid("there is a scene \(newName.printable) already") }
            var scenes = m.scenes
            scenes[at] = scenes[at].renamed(newName)
            let between = m.morphScenes.map { $0 == name ? newName : $0 }
            try m.setScenes(scenes.map(\.text))
            if between != m.morphScenes { try m.setMorphScenes(between) }
        }
    }
}

struct SceneRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a scene, or all (the mix stays as it is).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("A scene's name, or all.", valueName: "name")) var name: String

    func run() throws {
        try connection.connect().change(node: node, keys: [Parameter(.morphScenes), Parameter(.scenes)], report: output.reporter) { m in
            guard name == "all" || m.scene(named: name) != nil else { throw noScene(name, m) }
            // The fader loses an end that goes.
            if name == "all" || m.morphScenes.contains(name) { try m.setMorphScenes([]) }
            try m.setScenes(m.scenes.filter { name != "all" && $0.name != name }.map(\.text))
        }
    }
}

struct SceneSafeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "safe", abstract: "Set the recall safes: keys a recall or the morph fader leaves alone (none for none).")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("Keys, comma-separated (gain.in.mic,gain.master), or none.", valueName: "keys")) var keys: String

    func run() throws {
        let list = keys == "none" ? [] : keys.split(separator: ",").map { String($0.trimmingSpaces()) }
        try connection.connect().change(node: node, keys: [Parameter(.sceneSafe)], report: output.reporter) { m in
            try m.setSceneSafes(list)
        }
    }
}

struct SceneMorphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "morph", abstract: "Set the morph fader: 0 is the first scene of --between, 1 the second.")
    @OptionGroup var connection: Connection
    @OptionGroup var output: ReportOptions
    @Argument(help: nodeHelp, completion: nodeCompletion) var node: String
    @Argument(help: ArgumentHelp("The position, 0 to 1.", valueName: "position")) var position: Double
    @Option(help: ArgumentHelp("The two scenes, comma-separated (kept: later moves need not repeat it).", valueName: "a,b"))
    var between: String?

    func run() throws {
        // Every key that differs is sent (the ends, the position, and the mix it makes: a fader
        // put back where it was by new ends still sets the mix).
        try connection.connect().change(node: node, report: output.reporter) { m in
            if let between {
                let names = between.split(separator: ",").map(String.init)
                if names != m.morphScenes { try m.setMorphScenes(names) }
            }
            // Moved there even if the fader is there already (new ends, or keys changed by hand).
            try m.morph(to: position)
        }
    }
}

private func noScene(_ name: String, _ m: Mixer) -> CommandError {
    CommandError.invalid("there is no scene '\(name)'" + (m.scenes.isEmpty ? " (the node has none)" : "; the node has \(m.scenes.map(\.name).joined(separator: ", "))"))
}
