// Network streams as devices (`send`, `receive` lines of `devices`): their options read and
// written back, the channels they take, and bad addresses, ports, names and formats refused.

import CrosspointCore
import Testing

@Suite("Network streams")
struct NetworkStreamTests {
    @Test("A sender and a receiver are lines of devices, read and written back with every field")
    func text() throws {
        let wire = try VirtualDevice(text: "send wire to=239.69.1.10:5004 session=desk-stream format=L24")
        #expect(wire.kind == .send && !wire.kind.feedsInputs && wire.channels == ["wire_FL", "wire_FR"])
        #expect(wire.network == NetworkStream(address: "239.69.1.10", port: 5004, session: "desk-stream", format: "S24BE"))
        #expect(wire.text == "send wire position=FL,FR channels=wire_FL,wire_FR protocol=rtp to=239.69.1.10:5004 session=desk-stream format=S24BE description=wire")
        #expect(try VirtualDevice(text: wire.text) == wire)

        let guest = try VirtualDevice(text: "receive guest from=[ff15::1]:5006 latency=20ms position=MONO description=Guest mic")
        #expect(guest.kind.feedsInputs && guest.channels == ["guest_MONO"] && guest.description == "Guest mic")
        #expect(guest.network?.address == "ff15::1" && guest.network?.port == 5006 && guest.network?.latencyMilliseconds == 20)
        #expect(try VirtualDevice(text: guest.text) == guest)
        #expect(guest.network?.summary(sending: false) == "rtp from [ff15::1]:5006, S16BE, latency 20 ms")

        let byName = try VirtualDevice(text: "receive lan session=desk-stream")
        #expect(byName.network?.address == nil && byName.network?.session == "desk-stream")
        #expect(try VirtualDevice(text: byName.text) == byName)
        // VBAN: little-endian samples by default, the stream's name its session; a receiver
        // takes its stream by name, on VBAN's port when from= is not given.
        let vban = try VirtualDevice(text: "send mix to=192.168.1.20:6980 protocol=vban session=Stream1")
        #expect(vban.network == NetworkStream(wire: .vban, address: "192.168.1.20", port: 6980, session: "Stream1"))
        #expect(vban.network?.format == "S16LE" && vban.text.contains("protocol=vban to=192.168.1.20:6980 session=Stream1 format=S16LE"))
        #expect(try VirtualDevice(text: vban.text) == vban)
        let voicemeeter = try VirtualDevice(text: "receive vm protocol=vban session=Stream1 format=F32LE latency=30")
        #expect(voicemeeter.network?.address == nil && voicemeeter.network?.format == "F32LE")
        #expect(try VirtualDevice(text: voicemeeter.text) == voicemeeter)
        #expect(voicemeeter.network?.summary(sending: false) == "vban, session Stream1, F32LE, latency 30 ms")
        // AES67: L24 by default, in the PTP clock's driver group unless told another; the
        // sender's PTP socket written back only when given.
        let stage = try VirtualDevice(text: "send stage to=239.69.150.10:5004 protocol=aes67")
        #expect(stage.network?.format == "S24BE" && stage.network?.group == "pipewire.ptp0" && stage.network?.ptpSocket == "/var/run/ptp4lro")
        #expect(stage.text.contains("protocol=aes67 to=239.69.150.10:5004 format=S24BE description="))
        #expect(try VirtualDevice(text: stage.text) == stage)
        #expect(stage.network?.summary(sending: true) == "aes67 to 239.69.150.10:5004, S24BE, group pipewire.ptp0")
        let box = try VirtualDevice(text: "receive box from=239.69.2.1:5004 protocol=aes67 format=L16 latency=3 group=studio.clock")
        #expect(box.network?.format == "S16BE" && box.network?.group == "studio.clock" && box.text.contains("latency=3 group=studio.clock"))
        #expect(try VirtualDevice(text: box.text) == box)
        let mine = try VirtualDevice(text: "send s to=239.69.150.10:5004 protocol=aes67 ptp=/run/ptp/master-ro")
        #expect(mine.network?.ptpSocket == "/run/ptp/master-ro")
        #expect(try VirtualDevice(text: mine.text) == mine)
        // RTP joins no group unless given one.
        #expect(wire.network?.group == nil)
        #expect(try VirtualDevice(text: "send w to=1.2.3.4:5004 group=g").network?.group == "g")
        // A sink or a source has no network options.
        #expect(try VirtualDevice(text: "sink game").network == nil)
    }

    @Test("A bad network stream is refused, naming what is wrong", arguments: [
        ("send wire", "says not where to send"), ("receive lan", "says not what to receive"),
        ("send wire to=239.1.1.1", "has no port"), ("send wire to=239.1.1.1:0", "is not a port"),
        ("send wire to=239.1.1.1:70000", "is not a port"), ("send wire to=239.1.1.1:x", "is not a port"),
        ("send wire to=239.1.1:5004", "is not an IP address"), ("send wire to=host.example:5004", "is not an IP address"),
        ("send wire to=[ff15::1:5004", "is not an address and port"), ("send wire to=ff15::1:5004", "is not an IP address"),
        ("send wire from=0.0.0.0:5004", "takes to=, not from="), ("receive lan to=1.2.3.4:5004", "takes from=, not to="),
        ("send wire to=1.2.3.4:5004 latency=20", "the receiver's"), ("receive lan session=a latency=0", "is not 1 to 5000 ms"),
        ("receive lan session=a latency=9999999999999999999999", "is not 1 to 5000 ms"),
        ("send wire to=1.2.3.4:5004 format=F32LE", "is not one RTP carries"), ("send wire to=1.2.3.4:5004 protocol=sonobus", "is not one Crosspoint sends (rtp, vban or aes67)"),
        ("send wire to=1.2.3.4:5004 protocol=aes67 format=U8", "is not one AES67 carries"),
        ("send wire to=1.2.3.4:5004 group=a,b", "is not a driver group's name"), ("send wire to=1.2.3.4:5004 group=", "is not a driver group's name"),
        ("send wire to=1.2.3.4:5004 protocol=aes67 ptp=relative", "is not a socket's path"),
        ("send wire to=1.2.3.4:5004 protocol=aes67 ptp=/a\"b", "is not a socket's path"),
        ("send wire to=1.2.3.4:5004 protocol=aes67 ptp=/" + String(repeating: "p", count: 107), "is not a socket's path"),
        ("send wire to=1.2.3.4:5004 ptp=/run/ptp", "is an AES67 sender's"), ("receive lan session=a protocol=aes67 ptp=/run/ptp", "is an AES67 sender's"),
        ("send wire to=1.2.3.4:5004 format=F99", "is not one RTP or VBAN carries"),
        ("send wire to=1.2.3.4:6980 protocol=vban format=S16BE", "is not one VBAN carries"),
        ("send wire to=1.2.3.4:6980 format=S16LE", "is not one RTP carries"),
        ("receive v protocol=vban from=0.0.0.0:6980", "takes its stream by name"),
        ("send a-sixteen-chars-x to=1.2.3.4:6980 protocol=vban", "too long for a VBAN stream name"),
        ("send v to=1.2.3.4:6980 protocol=vban session=sixteen-chars-xx", "too long for a VBAN stream name"),
        ("send wire to=1.2.3.4:5004 session=a\"b", "is not a session name"), ("send wire to=1.2.3.4:5004 default", "cannot be the default"),
        ("send wire to=1.2.3.4:5004 session=" + String(repeating: "s", count: 64), "is not a session name"),
        ("sink game to=1.2.3.4:5004", "is not an option"),
    ])
    func badStreams(text: String, reason: String) {
        #expect {
            _ = try VirtualDevice(text: text)
        } throws: { error in
            "\(error)".contains(reason) && "\(error)".contains("devices")
        }
    }

    @Test("A sender takes outputs, a receiver feeds inputs: new channels fed like their position")
    func channels() throws {
        var m = try Mixer(inputs: 2, outputs: 2)
        try m.set(Parameter(.devices), to: .names(["send wire to=239.69.1.10:5004", "receive lan session=s"]))
        #expect(m.outputChannels == ["FL", "FR", "wire_FL", "wire_FR"])
        #expect(m.inputChannels == ["FL", "FR", "lan_FL", "lan_FR"])
        #expect(m.crosspoint(input: 0, output: 2) == 1 && m.crosspoint(input: 1, output: 2) == 0)
        #expect(m.crosspoint(input: 2, output: 0) == 1 && m.crosspoint(input: 3, output: 1) == 1)
        // A bad one changes nothing.
        let before = m
        #expect(throws: CrosspointError.self) { try m.set(Parameter(.devices), to: .names(["send wire to=nowhere"])) }
        #expect(m == before)
    }
}
