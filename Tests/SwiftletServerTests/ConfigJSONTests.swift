import Testing

@testable import SwiftletServer

@Suite struct ConfigJSONTests {
    private func error(_ text: String) -> ConfigJSON.SyntaxError? {
        do {
            _ = try ConfigJSON.parse(Array(text.utf8))
            return nil
        } catch { return error }
    }

    @Test func readsStringsNumbersAndNestingWithKeyPositions() throws {
        let value = try ConfigJSON.parse(
            Array("{\n \"a\": \"x\\u00e9\\ud83d\\ude00\\n\",\n \"b\": [-1.5e3, true, null, {}]}".utf8))
        guard case .object(let members) = value, members.count == 2 else {
            Issue.record("not an object of two: \(value)")
            return
        }
        #expect(members[0].key == "a" && members[0].position == .init(line: 2, column: 2))
        guard case .string(let s) = members[0].value else { return }
        #expect(s == "xé😀\n")
        #expect(members[1].position == .init(line: 3, column: 2))
        guard case .array(let items) = members[1].value, case .number(let n) = items[0] else { return }
        #expect(n == "-1.5e3" && items.count == 4)
    }

    @Test func refusesWhatRFC8259RefusesWithLineAndColumn() {
        let table: [(String, Int, Int, String)] = [
            ("{\"a\": 01}", 1, 8, "leading zero"), ("{\"a\": 1,}", 1, 9, "expected a key"),
            ("{\"a\": \"x\ny\"}", 1, 9, "control character"), ("{\"a\" 1}", 1, 6, "expected ':'"),
            ("{'a': 1}", 1, 2, "double quotes"), ("{\"a\": tru}", 1, 7, "expected a value"),
            ("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key 'a'"), ("{\"a\": \"\\ud800\"}", 1, 14, "surrogate"),
            ("{\"a\": \"\\q\"}", 1, 10, "unknown escape"), ("{}\n x", 2, 2, "after the JSON value"),
            ("", 1, 1, "expected a value"),
            ("{\"a\": 1.}", 1, 9, "after '.'"), ("{\"a\": -}", 1, 8, "expected a digit"), ("{\"a\": \"x", 1, 9, "unterminated"),
        ]
        for (text, line, column, fragment) in table {
            let e = error(text)
            #expect(e?.position == .init(line: line, column: column), "\(text): \(String(describing: e))")
            #expect(e?.message.contains(fragment) == true, "\(text): \(String(describing: e))")
        }
    }

    @Test func boundsSizeAndDepth() {
        #expect(error(String(repeating: "[", count: 40) + String(repeating: "]", count: 40))?.message.contains("nested") == true)
        #expect(error(String(repeating: "[", count: 20) + String(repeating: "]", count: 20)) == nil)
        let big = "{\"a\": \"" + String(repeating: "x", count: ConfigJSON.maxBytes) + "\"}"
        #expect(error(big)?.message.contains("larger than") == true)
        #expect(error(String(repeating: "[", count: 100_000)) != nil)
    }
}
