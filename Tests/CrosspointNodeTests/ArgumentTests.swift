// Module arguments PipeWire 1.x's own config parser never lets through to a module (it
// refuses the whole file), but `pw-cli load-module` and 0.3.65 do: refused by name here.

import CrosspointNode
import Testing

@Suite("Module arguments")
struct ArgumentTests {
    func error(_ text: String) -> String? {
        do { _ = try NodeConfiguration(arguments: text); return nil } catch { return error.description }
    }

    @Test("A key with no value, a key given twice, deep nesting and garbage are refused by name")
    func malformedArgumentsAreRefused() {
        #expect(error("{ node.name = x inputs = }")?.contains("argument 'inputs': has no value") == true)
        #expect(error("{ inputs = 2 inputs = 3 }")?.contains("argument 'inputs': is given twice") == true)
        #expect(error("{ matrix = " + String(repeating: "[ ", count: 100) + String(repeating: "] ", count: 100) + "}") != nil)
        #expect(error("}}}") != nil)
        #expect(error("{ inputs = 2 outputs = 1 }") == nil)
    }

    @Test("delay.out sets the outputs' delays by name, index or as a list; a bad one is refused naming it")
    func outputDelays() throws {
        let byName = try NodeConfiguration(arguments: "{ output.position = [ FL FR RL RR ] delay.out = { RL = 180 3 = 12.5 } }")
        #expect(byName.mixer.outputDelays == [0, 0, 180, 12.5])
        let list = try NodeConfiguration(arguments: "{ outputs = 2 delay.out = [ 0 1000 ] }")
        #expect(list.mixer.outputDelays == [0, 1000])
        #expect(error("{ outputs = 2 delay.out = [ 0 ] }")?.contains("argument 'delay.out': lists 1 delays but the node has 2 outputs") == true)
        #expect(error("{ outputs = 2 delay.out = { XX = 1 } }")?.contains("no output channel is named 'XX'; the outputs are FL, FR") == true)
        #expect(error("{ outputs = 2 delay.out = { FL = 1001 } }")?.contains("output FL: 1001.0 ms is outside 0 to 1000 ms") == true)
        #expect(error("{ outputs = 2 delay.out = { FL = soon } }")?.contains("output FL: \"soon\" is not a number") == true
                || error("{ outputs = 2 delay.out = { FL = soon } }")?.contains("is not a number of milliseconds") == true)
        #expect(error("{ outputs = 2 delay.out = { FL = 1 0 = 2 } }")?.contains("given twice") == true)
        #expect(error("{ outputs = 2 delay.out = 5 }")?.contains("must be an object") == true)
    }

    @Test("A network stream in devices takes its options as keys; a bad one is refused naming the device")
    func networkStreams() throws {
        let configuration = try NodeConfiguration(arguments: """
            { output.position = [ FL FR ] devices = [
                { type = send name = wire to = "239.69.1.10:5004" session = desk format = S24BE }
                { type = receive name = lan from = "[ff15::1]:5004" latency = 40 position = [ MONO ] } ] }
            """)
        let devices = configuration.mixer.devices
        #expect(devices.map(\.kind) == [.send, .receive])
        #expect(devices[0].network?.address == "239.69.1.10" && devices[0].network?.format == "S24BE" && devices[0].channels == ["wire_FL", "wire_FR"])
        #expect(devices[1].network?.latencyMilliseconds == 40 && devices[1].channels == ["lan_MONO"])
        #expect(error("{ devices = [ { type = send name = wire to = \"nowhere\" } ] }")?.contains("has no port") == true)
        #expect(error("{ devices = [ { type = receive name = lan latency = 2.5 } ] }")?.contains("latency must be whole milliseconds") == true)
        #expect(error("{ devices = [ { type = sink name = game to = \"1.2.3.4:5\" } ] }")?.contains("is not an option") == true)
    }
}
