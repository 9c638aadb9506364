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
}
