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

/// `JSONCheck`: the strict check a state file passes before libspa's relaxed parser reads it.
@Suite("Strict JSON check")
struct StrictJSONTests {
    func problem(_ text: String) -> String? { JSONCheck.problem(Array(text.utf8)) }

    @Test("Complete JSON texts pass, whitespace around them too")
    func validTextsPass() {
        let texts = [
            "{}", "[]", "0", "-0", "1.5", "-12.25e+3", "1E-2", "2e9", "true", "false", "null", #""""#,
            " \t\r\n{ \"a\" : [1, 2.5, -3e2, true, false, null, \"x\", {}, []], \"b\": {\"c\": {}} } \n",
            #"["\"\\\/\b\f\n\r\t\u00e9\uD83C\uDFA7 gäme ✓ 🎧"]"#,
            #"["\uD800", "\uDC00x"]"#,  // lone surrogates: the grammar takes any four hex digits
            String(repeating: "[", count: JSONCheck.maximumDepth) + String(repeating: "]", count: JSONCheck.maximumDepth),
        ]
        for text in texts { #expect(problem(text) == nil, "\(text)") }
    }

    @Test("Every prefix of a document is refused, and says where it ends")
    func everyTruncationIsRefused() {
        let text = #"{"a": [1, -2.5e3, "x\u0041\n", true, false, null, {"b": {}}], "c": "gäme"}"#
        let bytes = Array(text.utf8)
        #expect(JSONCheck.problem(bytes) == nil)
        for cut in 0..<bytes.count {
            let reason = JSONCheck.problem(Array(bytes[..<cut]))
            #expect(reason != nil, "cut at \(cut) is accepted")
            if cut == 0 {
                #expect(reason?.hasPrefix("there is no value") == true)
            } else if let reason {  // the end is named, inside a number, a word, an escape or a UTF-8 sequence too
                #expect(reason.contains("at byte \(cut)"), "cut at \(cut): \(reason)")
            }
        }
    }

    @Test("Each kind of truncation is named")
    func truncationsAreNamed() {
        let cases: [(String, String)] = [
            ("", "there is no value (the text is empty or only whitespace)"),
            ("  \n", "there is no value (the text is empty or only whitespace)"),
            (#"{"a": "abc"#, "the text ends inside a string (opened at byte 6) at byte 10"),
            (#"{"a"#, "the text ends inside a string (opened at byte 1) at byte 3"),
            (#"["a\"#, "the text ends inside a string (opened at byte 1) at byte 4"),
            (#"["\u00"#, "the text ends inside a string (opened at byte 1) at byte 6"),
            (#"{"a": [1, 2"#, "the text ends inside an array (opened at byte 6) at byte 11"),
            (#"{"a": 1,"#, "the text ends inside an object (opened at byte 0) at byte 8"),
            (#"{"a""#, "the text ends inside an object (opened at byte 0) at byte 4"),
            (#"{"a":"#, "the text ends inside an object (opened at byte 0) at byte 5"),
            (#"{"ramp.ms": 1"#, "the text ends inside an object (opened at byte 0) at byte 13"),
            ("[tr", "the text ends inside 'true' (begun at byte 1) at byte 3"),
            ("-", "the text ends inside a number (begun at byte 0) at byte 1"),
            ("1.", "the text ends inside a number (begun at byte 0) at byte 2"),
            ("1e", "the text ends inside a number (begun at byte 0) at byte 2"),
            ("1e+", "the text ends inside a number (begun at byte 0) at byte 3"),
        ]
        for (text, reason) in cases { #expect(problem(text) == reason, "\(text.debugDescription)") }
    }

    @Test("What is not JSON is refused by place")
    func malformedTextsAreRefused() {
        let cases: [(String, String)] = [
            (#"{"a": 1}}"#, "text after the JSON value at byte 8"),
            ("{} x", "text after the JSON value at byte 3"),
            ("1 2", "text after the JSON value at byte 2"),
            (#"{"a": 1}"# + "\0", "text after the JSON value at byte 8"),
            (#"{"a": 1, }"#, "unexpected '}' at byte 9, where a key belongs"),
            ("[1, ]", "unexpected ']' at byte 4, where a value belongs"),
            ("[1 2]", "unexpected '2' at byte 3, where ',' or ']' belongs"),
            (#"{"a" 1}"#, "unexpected '1' at byte 5, where ':' belongs after a key"),
            ("{a: 1}", "unexpected 'a' at byte 1, where a key or '}' belongs"),
            ("[1}", "unexpected '}' at byte 2, where ',' or ']' belongs"),
            (#"{"a": 1]"#, "unexpected ']' at byte 7, where ',' or '}' belongs"),
            ("}", "unexpected '}' at byte 0, where a value belongs"),
            ("[01]", "a number with a leading zero at byte 1"),
            ("[-01]", "a number with a leading zero at byte 1"),
            ("[1.]", "a number with no digit after '.' at byte 1"),
            ("[.5]", "unexpected '.' at byte 1"),
            ("[-]", "a number with no digit after '-' at byte 1"),
            ("[1e]", "a number with no digit in its exponent at byte 1"),
            ("[1e+]", "a number with no digit in its exponent at byte 1"),
            ("[+1]", "unexpected '+' at byte 1"),
            ("[1x]", "unexpected 'x' at byte 2"),
            ("[nan]", "a word that is not JSON at byte 1"),
            ("[truex]", "unexpected 'x' at byte 5"),
            ("[True]", "unexpected 'T' at byte 1"),
            (#"["\x"]"#, "an escape that is not JSON at byte 2 (a backslash before 'x')"),
            (#"["\u12G4"]"#, "a \\u escape without four hex digits at byte 2 ('G' at byte 6)"),
            ("[\"a\tb\"]", "a control character (0x9) inside a string at byte 3"),
            ("[\"a\nb\"]", "a control character (0xa) inside a string at byte 3"),
            ("['a']", "unexpected ''' at byte 1"),
            ("[1,,2]", "unexpected ',' at byte 3"),
            ("\u{FEFF}{}", "unexpected byte 0xef at byte 0"),  // a byte order mark is not JSON text
        ]
        for (text, reason) in cases {
            let found = problem(text)
            #expect(found?.hasPrefix(reason) == true, "\(text.debugDescription): \(found ?? "accepted")")
        }
        // Not UTF-8 inside a string; a sequence cut by the end is a string cut short.
        #expect(JSONCheck.problem([0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D]) == "bytes that are not UTF-8 at byte 2")
        #expect(JSONCheck.problem([0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D]) == "bytes that are not UTF-8 at byte 2")
        #expect(JSONCheck.problem([0x5B, 0x22, 0xF0, 0x9F]) == "the text ends inside a string (opened at byte 1) at byte 4")
    }

    @Test("Deep nesting is refused at the limit, in one pass, whatever the depth")
    func deepNestingIsBounded() {
        let limit = JSONCheck.maximumDepth
        #expect(problem(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
            == "it nests deeper than \(limit) at byte \(limit)")
        #expect(problem(String(repeating: #"{"a":"#, count: limit + 1)) == "it nests deeper than \(limit) at byte \(5 * limit)")
        // A million deep: refused at the limit, no recursion.
        #expect(JSONCheck.problem([UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)) == "it nests deeper than \(limit) at byte \(limit)")
        #expect(JSONCheck.problem(Array("[[1]]".utf8), maximumDepth: 1) == "it nests deeper than 1 at byte 1")
        #expect(JSONCheck.problem(Array("[[1]]".utf8), maximumDepth: 0) == "it nests deeper than 0 at byte 0")
        #expect(JSONCheck.problem(Array("[[1]]".utf8), maximumDepth: -5) != nil)
        #expect(JSONCheck.problem(Array("1".utf8), maximumDepth: 0) == nil)
    }
}
