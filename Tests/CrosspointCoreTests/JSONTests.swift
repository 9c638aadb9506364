import CrosspointCore
import Testing

@Suite("JSON writer")
struct JSONTests {
    @Test("Numbers at the edges of Int print without trapping (abs(Int.min) would)")
    func extremeNumbersPrint() {
        #expect(JSONValue.number(-9_223_372_036_854_775_808).compactText == "-9.223372036854776e+18")
        #expect(JSONValue.number(9_007_199_254_740_991).compactText == "9007199254740991")
        #expect(JSONValue.number(.nan).compactText == "null")
        #expect(JSONValue.array([.number(-0.5), .number(3)]).compactText == "[-0.5,3]")
    }

    @Test("Strings escape quotes, backslashes and control characters")
    func stringsAreEscaped() {
        #expect(JSONValue.string("a\"b\\c\u{1b}[2J\n").compactText == #""a\"b\\c\u001b[2J\n""#)
    }

    @Test("Lists and records of plain values stay on one line; nested ones open up")
    func layout() {
        let value = JSONValue.object([("matrix", .array([.array([.number(1), .number(0)])])), ("link", .object([("port", .string("out_FL"))]))])
        #expect(value.text == "{\n  \"matrix\": [\n    [1, 0]\n  ],\n  \"link\": {\"port\": \"out_FL\"}\n}\n")
    }
}
