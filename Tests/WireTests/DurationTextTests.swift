import Testing
import Wire

@Suite struct DurationTextTests {
    @Test func parsesNumbersWithUnitsAndBareSeconds() {
        let table: [(String, Duration)] = [
            ("15s", .seconds(15)), ("1m", .seconds(60)), ("1h", .seconds(3600)), ("2d", .seconds(172_800)),
            ("500ms", .milliseconds(500)), ("1.5s", .milliseconds(1500)), ("90", .seconds(90)), ("0", .zero),
            ("0.25", .milliseconds(250)), ("1.5m", .seconds(90)),
        ]
        for (text, expected) in table { #expect(Duration(parsing: text) == expected, "\(text)") }
    }

    @Test func refusesAnythingElse() {
        for text in [
            "", "s", "ms", "-1s", "+1s", "1e3", "nan", "inf", "1.2.3s", ".", ".s", "1 s", "1sec", "1S", "5y",
            "9223372036854775807d", String(repeating: "1", count: 40), "1h30m",
        ] {
            #expect(Duration(parsing: text) == nil, "\(text)")
        }
    }

    @Test func compactDescriptionParsesBackToItself() {
        for d: Duration in [.seconds(30), .seconds(90), .seconds(3600), .milliseconds(250), .milliseconds(1500), .zero] {
            #expect(Duration(parsing: d.compactDescription) == d, "\(d.compactDescription)")
        }
        #expect(Duration.seconds(60).compactDescription == "1m")
        #expect(Duration.seconds(30).inSeconds == 30)
    }
}
