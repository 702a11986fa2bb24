import Testing
import Wire

@testable import RoomBot

@Suite struct RoomBotOptionsTests {
    private func parse(_ line: String) throws(BotOptions.Invalid) -> BotOptions {
        try BotOptions.parse(line.split(separator: " ").map(String.init))
    }

    private func invalid(_ line: String) -> String? {
        do {
            _ = try parse(line)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func defaultsAndURLParts() throws {
        let o = try parse("--url ws://localhost:7880/rtc --room demo --dev")
        #expect(o.servers[0].host == "localhost" && o.servers[0].port == 7880 && o.servers[0].path == "/rtc" && !o.secure)
        #expect(o.rooms == ["demo"])
        #expect(o.publishers == 1 && o.subscribers == 1)
        #expect(o.simulcast && !o.audioOnly)
        #expect(o.duration == 30 && o.ramp == 10)
        #expect(o.key == "devkey" && o.secret == "devsecret")
        let v6 = try parse("--url ws://[::1]:9000 --room r --key k --secret s")
        #expect(v6.servers[0].host == "::1" && v6.servers[0].port == 9000 && v6.servers[0].path == "/rtc")
    }

    @Test func secureSchemesAndHostNamesAreAccepted() throws {
        let wss = try parse("--url wss://sfu.example.org/rtc --room r --dev --ca-file ca.pem")
        #expect(wss.secure && wss.servers[0].host == "sfu.example.org" && wss.servers[0].port == 443 && wss.caFile == "ca.pem")
        let https = try parse("--url HTTPS://[::1]:8443 --room r --dev --whip --insecure")
        #expect(https.secure && https.servers[0].host == "::1" && https.servers[0].port == 8443 && https.insecure)
        let plain = try parse("--url http://media-1.internal --room r --dev --whep")
        #expect(!plain.secure && plain.servers[0].host == "media-1.internal" && plain.servers[0].port == 80)
    }

    @Test func everyOptionIsRead() throws {
        let o = try parse(
            "--url ws://10.0.0.2:80/x --rooms 3 --publishers 2 --subscribers 5 --audio-only --no-simulcast "
                + "--duration 0 --ramp 2.5 --key k --secret s --json out.json --bind 10.0.0.9 --max-loss 1.5 "
                + "--max-join-ms 500 --max-delay-ms 300 --min-bitrate 200")
        #expect(o.rooms == ["roombot-1", "roombot-2", "roombot-3"])
        #expect(o.publishers == 2 && o.subscribers == 5 && o.audioOnly && !o.simulcast)
        #expect(o.duration == 0 && o.ramp == 2.5)
        #expect(o.jsonPath == "out.json" && o.bind == "10.0.0.9")
        #expect(o.maxLossPercent == 1.5 && o.maxJoinMilliseconds == 500)
        #expect(o.maxDelayMilliseconds == 300 && o.minBitrateKbps == 200)
        // Per room, publishers first.
        #expect(o.plan.count == 21)
        #expect(o.plan.prefix(3).map(\.role) == [.publisher, .publisher, .subscriber])
        #expect(o.plan[7].room == "roombot-2")
        #expect(o.tracksExpected(for: .subscriber) == 2 && o.tracksExpected(for: .publisher) == 0)
        let whep = try parse("--url http://127.0.0.1:80 --room r --dev --publishers 3 --whip --whep")
        #expect(whep.whip && whep.whep && whep.servers[0].port == 80)
        #expect(whep.tracksExpected(for: .subscriber) == 2)
    }

    @Test func refusesBadCommandLines() {
        #expect(invalid("--room r --dev") == "--url is required")
        #expect(invalid("--url ws://127.0.0.1:1 --dev") == "give --room NAME or --rooms N")
        #expect(invalid("--url ws://127.0.0.1:1 --room r") == "give --dev, or --key and --secret")
        #expect(invalid("--url ws://127.0.0.1:1 --room r --dev --key k") == "--dev and --key/--secret exclude each other")
        #expect(invalid("--url ftp://127.0.0.1:1 --room r --dev")?.hasPrefix("--url must start with ws://") == true)
        #expect(
            invalid("--url ws://127.0.0.1:1 --room r --dev --insecure")
                == "--ca-file and --insecure apply to wss:// and https:// URLs only")
        #expect(
            invalid("--url wss://h:1 --room r --dev --insecure --ca-file c.pem") == "--ca-file and --insecure exclude each other")
        #expect(invalid("--url ws://bad_host!:1 --room r --dev") == "--url has a bad host 'bad_host!'")
        #expect(invalid("--url ws://127.0.0.1:0 --room r --dev") == "--url has a bad port '0'")
        #expect(invalid("--url ws://127.0.0.1:1 --room r --dev --publishers -1")?.hasPrefix("--publishers wants") == true)
        #expect(invalid("--url ws://127.0.0.1:1 --room r --dev --publishers 0 --subscribers 0") != nil)
        #expect(invalid("--url ws://127.0.0.1:1 --room r --dev --duration nan")?.hasPrefix("--duration wants") == true)
        #expect(invalid("--url ws://127.0.0.1:1 --room r --dev --ramp") == "--ramp needs a value")
        #expect(
            invalid("--url ws://127.0.0.1:1 --room r --dev --frobnicate") == "unknown option '--frobnicate'; see roombot --help")
    }

    /// The same duration spellings as swiftlet's flags (Wire's parser).
    @Test func durationsTakeUnits() throws {
        for (text, seconds) in [("15s", 15.0), ("1m", 60), ("500ms", 0.5), ("90", 90), ("0", 0)] {
            #expect(try parse("--url ws://127.0.0.1:1 --room r --dev --duration \(text)").duration == seconds, "\(text)")
        }
        #expect(try parse("--url ws://127.0.0.1:1 --room r --dev --switch-every 2s").switchEvery == 2)
        #expect(invalid("--url ws://127.0.0.1:1 --room r --dev --duration 1x")?.contains("15s, 1m") == true)
        #expect(invalid("--url ws://127.0.0.1:1 --room r --dev --switch-every 0s") == "--switch-every must be above 0")
    }

    @Test func percentilesUseNearestRank() {
        let p = Percentiles((1...100).map(Double.init))
        #expect(p.count == 100 && p.p50 == 50 && p.p95 == 95 && p.p99 == 99)
        let one = Percentiles([7])
        #expect(one.p50 == 7 && one.p99 == 7)
        #expect(Percentiles([]).p50 == nil)
    }

    @Test func thresholdsSetTheExitStatus() throws {
        var o = try parse("--url ws://127.0.0.1:1 --room r --dev --publishers 1 --subscribers 0 --max-join-ms 100")
        #expect(o.tracksExpected(for: .subscriber) == 2)
        let record = BotRecord(role: .publisher, room: "r", identity: "p")
        record.startedAt = .zero
        record.joinedAt = Instant.zero + .milliseconds(250)
        record.publisherConnectedAt = Instant.zero + .milliseconds(400)
        let report = BotReport(
            records: [record], options: o, end: Instant.zero + .seconds(1), durationSeconds: 1, interrupted: false)
        #expect(report.overall.join.p95 == 250)
        #expect(report.overall.connect.p50 == 150)
        #expect(report.exitStatus(o).0 == 1)
        o.maxJoinMilliseconds = 300
        #expect(report.exitStatus(o).0 == 0)
        // A bot that never joined fails the run, whatever the thresholds.
        let lost = BotRecord(role: .subscriber, room: "r", identity: "s")
        let failed = BotReport(
            records: [record, lost], options: o, end: Instant.zero + .seconds(1), durationSeconds: 1, interrupted: true)
        #expect(failed.exitStatus(o).0 == 2)
        #expect(failed.table.contains("(interrupted)"))
    }
}

@Suite struct RoomBotFailureOptionsTests {
    private func parse(_ line: String) throws(BotOptions.Invalid) -> BotOptions {
        try BotOptions.parse(line.split(separator: " ").map(String.init))
    }

    @Test func failureOptionsDefaultsAndValues() throws {
        let d = try parse("--url ws://127.0.0.1:1/rtc --room r --dev")
        #expect(d.maxFreezeSeconds == 1.5 && !d.allowErrors && d.connectTimeout == 10 && !d.wideTable)
        let o = try parse(
            "--url ws://127.0.0.1:1/rtc --room r --dev --max-freeze 0.75 --allow-errors --connect-timeout 3 --wide")
        #expect(o.maxFreezeSeconds == 0.75 && o.allowErrors && o.connectTimeout == 3 && o.wideTable)
        // Durations take units, as everywhere else.
        let units = try parse("--url ws://127.0.0.1:1/rtc --room r --dev --max-freeze 750ms --connect-timeout 1m")
        #expect(units.maxFreezeSeconds == 0.75 && units.connectTimeout == 60)
        #expect(throws: BotOptions.Invalid.self) { try parse("--url ws://127.0.0.1:1/rtc --room r --dev --max-freeze 0") }
        #expect(throws: BotOptions.Invalid.self) {
            try parse("--url ws://127.0.0.1:1/rtc --room r --dev --connect-timeout x")
        }
        #expect(BotOptions.usage.contains("130 cut short by SIGINT"))
        #expect(try parse("--url ws://127.0.0.1:1/rtc --room r --dev --layout 3x3").layout == .grid3x3)
        #expect(throws: BotOptions.Invalid.self) { try parse("--url ws://127.0.0.1:1/rtc --room r --dev --layout 2x2") }
        #expect(throws: BotOptions.Invalid.self) {
            try parse("--url ws://127.0.0.1:1/rtc --room r --dev --layout speaker --switch-every 2")
        }
        #expect(BotOptions.Layout.speaker.maxWidth(tile: 0) == 1280)
        #expect(BotOptions.Layout.speaker.maxWidth(tile: 3) == 356)
        #expect(BotOptions.Layout.grid4x4.maxWidth(tile: 20) == 320)
    }
}
