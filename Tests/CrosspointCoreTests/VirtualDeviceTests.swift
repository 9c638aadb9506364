// Virtual devices as node state (`devices`): their text, their checks, the channels they add to
// the mixer and how those are fed, presets and state files.

import CrosspointCore
import Testing

@Suite("Virtual devices")
struct VirtualDeviceTests {
    @Test("A device is one line of text, read and written back with every field")
    func text() throws {
        let game = try VirtualDevice(text: "sink game description=Game")
        #expect(game.kind == .sink && game.name == "game" && game.description == "Game")
        #expect(game.positions == ["FL", "FR"] && game.channels == ["game_FL", "game_FR"] && !game.isDefault)
        #expect(game.text == "sink game position=FL,FR channels=game_FL,game_FR description=Game")
        #expect(try VirtualDevice(text: game.text) == game)

        let mix = try VirtualDevice(text: "  SOURCE stream-mix  default position=FL,FR description=Stream mix  ")
        #expect(mix.kind == .source && mix.isDefault && mix.description == "Stream mix")
        #expect(mix.channels == ["stream_mix_FL", "stream_mix_FR"])
        #expect(try VirtualDevice(text: mix.text) == mix)

        let mono = try VirtualDevice(text: "sink one-ear position=MONO channels=0")
        #expect(mono.channels == ["0"] && mono.description == "one-ear")
    }

    @Test("A bad device is refused, naming what is wrong", arguments: [
        ("", "an empty device"), ("speaker game", "is not sink, source, send or receive"), ("sink", "names no device"),
        ("sink -game", "is not a device name"), ("sink gäme", "is not a device name"),
        ("sink game position=FL,XX", "'XX' is not a channel position"), ("sink game position=FL,FL", "appears twice"),
        ("sink game position=", "is not a channel position"), ("sink game loud", "is not an option"),
        ("sink game volume=1", "is not an option"), ("sink game channels=a", "2 positions but 1 channels"),
        ("sink game description=a\tb", "printable text"),
        ("sink " + String(repeating: "a", count: 49), "is not a device name"),
    ])
    func badDevices(text: String, reason: String) {
        #expect {
            _ = try VirtualDevice(text: text)
        } throws: { error in
            "\(error)".contains(reason) && "\(error)".contains("devices")
        }
    }

    @Test("devices is a key of the table: new channels are added and fed like their position")
    func keyOfTheTable() throws {
        var m = try Mixer(inputs: 2, outputs: 2)
        #expect(m.value(of: Parameter(.devices)) == .names([]))
        try m.set(Parameter(.devices), to: .names(["sink game", "sink chat position=MONO", "source stream position=FL,FR"]))
        #expect(m.inputChannels == ["FL", "FR", "game_FL", "game_FR", "chat_MONO"])
        #expect(m.outputChannels == ["FL", "FR", "stream_FL", "stream_FR"])
        // A new input plays on the outputs of its position; MONO on every output.
        #expect(m.crosspoint(input: 2, output: 0) == 1 && m.crosspoint(input: 2, output: 1) == 0)
        #expect(m.crosspoint(input: 3, output: 0) == 0 && m.crosspoint(input: 3, output: 1) == 1)
        #expect(m.crosspoint(input: 4, output: 0) == 1 && m.crosspoint(input: 4, output: 1) == 1)
        // A new output takes the inputs of its position: the stream mix takes everything.
        for i in 0..<5 {
            let position = ["FL", "FR", "FL", "FR", "MONO"][i]
            #expect(m.crosspoint(input: i, output: 2) == (position == "FR" ? 0 : 1))
            #expect(m.crosspoint(input: i, output: 3) == (position == "FL" ? 0 : 1))
        }
        // What was there before is untouched.
        #expect(m.crosspoint(input: 0, output: 0) == 1 && m.crosspoint(input: 0, output: 1) == 0)
        guard case let .names(texts) = m.value(of: Parameter(.devices)) else { Issue.record("not names"); return }
        #expect(texts.count == 3 && texts[1] == "sink chat position=MONO channels=chat_MONO description=chat")

        // Setting the same devices again adds nothing; removing one keeps its channels.
        let before = m
        try m.setDevices(texts)
        #expect(m == before)
        try m.setDevices([texts[0]])
        #expect(m.devices.count == 1 && m.inputs == 5)

        // Existing channels by index or name; an index is stored as its name.
        try m.setDevices(["sink desk channels=0,FR"])
        #expect(m.devices[0].channels == ["FL", "FR"] && m.inputs == 5)
    }

    @Test("Bad device lists change nothing and name the device", arguments: [
        (["sink a", "source a"], "given twice"), (["sink a channels=0,9"], "input index 9"),
        (["sink a channels=FL,FL"], "a channel is given twice"), (["sink a channels=FL,bad-name"], "not a channel name"),
    ])
    func badLists(texts: [String], reason: String) throws {
        var m = try Mixer(inputs: 2, outputs: 2)
        let before = m
        #expect {
            try m.setDevices(texts)
        } throws: { error in
            "\(error)".contains(reason)
        }
        #expect(m == before)
        #expect(throws: CrosspointError.self) {
            try m.setDevices(Array(repeating: "sink a", count: VirtualDevice.limit + 1))
        }
    }

    @Test("Presets and state files carry devices only when there are some; a preset without them leaves them")
    func presets() throws {
        var m = try Mixer(inputs: 2, outputs: 2)
        #expect(Preset(m).values[.devices] == nil)
        try m.setDevices(["sink game default description=Game"])
        let preset = Preset(m)
        #expect(preset.values[.devices] == .value(.names(["sink game position=FL,FR channels=game_FL,game_FR default description=Game"])))
        let read = try Preset(json: preset.json)
        #expect(read == preset)
        #expect(try Mixer(preset: read) == m)
        // A preset without devices keeps the node's.
        var other = Preset(m)
        other.values[.devices] = nil
        try m.setDevices([])
        try m.setDevices(["sink chat position=MONO channels=0"])
        try m.apply(other)
        #expect(m.devices.map(\.name) == ["chat"])
    }

    @Test("Output groups are one line each: a device, outputs kept by name, an offset; checked against the mixer")
    func targets() throws {
        var m = try Mixer(inputs: 2, outputs: 4, outputChannels: ["FL", "FR", "mon_FL", "mon_FR"])
        try m.set(Parameter(.targets), to: .names(["default outputs=2,mon_FR", "alsa_output.usb-MOTU outputs=FL,1 offset=2"]))
        #expect(m.value(of: Parameter(.targets)) == .names(["default outputs=mon_FL,mon_FR", "alsa_output.usb-MOTU outputs=FL,FR offset=2"]))
        #expect(m.targets[0].followsDefault && m.targets[0].outputIndices(in: m) == [2, 3])
        #expect(m.targets[1].offset == 2 && !m.targets[1].followsDefault)
        #expect(Mixer.channelPosition("mon_FL") == "FL" && Mixer.channelPosition("mic") == "mic")
        #expect(Preset(m).values[.targets] == .value(.names(["default outputs=mon_FL,mon_FR", "alsa_output.usb-MOTU outputs=FL,FR offset=2"])))
        #expect(try Mixer(preset: try Preset(json: Preset(m).json)) == m)
        let before = m
        for (bad, reason) in [(["default outputs=FL", "x outputs=FL"], "in another group"), (["default offset=64"], "outside 0...63"),
                              (["default outputs=9"], "output index 9"), (["default loud"], "is not an option"), ([""], "an empty target")] {
            #expect {
                try m.setTargets(bad)
            } throws: { error in
                "\(error)".contains(reason) && "\(error)".contains("targets")
            }
        }
        #expect(m == before)
        try m.setTargets([])
        #expect(m.targets.isEmpty && Preset(m).values[.targets] == nil)
    }
}
