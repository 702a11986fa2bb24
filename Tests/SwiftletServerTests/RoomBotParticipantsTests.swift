import Negotiation
import Testing
import Wire

@testable import RoomBot

/// `--participants`: bots that publish and receive every other participant
/// (a video call, `lk load-test`'s grid). The command line, when such a
/// bot counts as connected, and how its two directions are reported, on a
/// virtual clock; RoomBotGridProcessTests runs them for real.
@Suite struct RoomBotParticipantsTests {
    private func parse(_ line: String) throws(BotOptions.Invalid) -> BotOptions {
        try BotOptions.parse(("--url ws://127.0.0.1:1/rtc --room r --dev " + line).split(separator: " ").map(String.init))
    }

    private func invalid(_ line: String) -> String? {
        do {
            _ = try parse(line)
            return nil
        } catch {
            return error.description
        }
    }

    private func at(_ ms: Int) -> Instant { Instant(nanoseconds: Int64(ms) * 1_000_000) }

    @Test func participantsAloneMeanNoPublishersOrSubscribersAndExpectTheOthers() throws {
        let o = try parse("--participants 3 --layout 3x3")
        #expect(o.participants == 3 && o.publishers == 0 && o.subscribers == 0)
        #expect(o.plan.map(\.role) == [.participant, .participant, .participant])
        // Audio and video of the two others; never its own.
        #expect(o.tracksExpected(for: .participant) == 4)
        #expect(o.layout == .grid3x3)
        let audio = try parse("--participants 3 --audio-only")
        #expect(audio.tracksExpected(for: .participant) == 2)
    }

    @Test func participantsMixWithPublishersAndViewers() throws {
        let o = try parse("--rooms 2 --participants 2 --publishers 1 --subscribers 3")
        #expect(o.plan.count == 12)
        // Per room: participants, then publishers, then subscribers.
        #expect(o.plan.prefix(6).map(\.role) == [.participant, .participant, .publisher, .subscriber, .subscriber, .subscriber])
        #expect(o.plan[6].room == "r-2")
        // The other participant and the publisher.
        #expect(o.tracksExpected(for: .participant) == 4)
        // Both participants and the publisher.
        #expect(o.tracksExpected(for: .subscriber) == 6)
        #expect(o.tracksExpected(for: .publisher) == 0)
        // Without --participants the defaults are unchanged.
        let plain = try parse("")
        #expect(plain.participants == 0 && plain.publishers == 1 && plain.subscribers == 1)
        #expect(plain.tracksExpected(for: .subscriber) == 2)
    }

    @Test func contradictoryParticipantCommandLinesAreRefused() {
        #expect(invalid("--participants 0") == "--participants wants a whole number from 1, got '0'")
        #expect(invalid("--participants") == "--participants needs a value")
        let whip = invalid("--participants 3 --whip")
        #expect(
            whip?.hasPrefix("--participants publish and subscribe on one room WebSocket; --whip and --whep exclude it") == true)
        #expect(invalid("--participants 3 --subscribers 2 --whep") == whip)
        #expect(
            invalid("--participants 3 --layout 3x3 --switch-every 2")
                == "--layout and --switch-every exclude each other (both set each track's layer)")
        #expect(invalid("--participants 2 --layout 2x2")?.hasPrefix("--layout wants speaker, 3x3") == true)
        #expect(invalid("--publishers 0 --subscribers 0") == "no bots: give --participants, --publishers or --subscribers")
    }

    @Test func participantIsConnectedWhenBothTransportsAre() {
        let r = BotRecord(role: .participant, room: "r", identity: "p-1")
        r.tracksExpected = 2
        r.joinedAt = at(10)
        r.publisherConnectedAt = at(60)
        #expect(!r.isConnected && r.connectMilliseconds == nil)
        #expect(!r.transportsUp(publisher: true, subscriber: nil))
        r.subscriberConnectedAt = at(90)
        #expect(r.isConnected && r.connectMilliseconds == 80)
        #expect(r.transportsUp(publisher: true, subscriber: true))
        #expect(!r.transportsUp(publisher: false, subscriber: true))
        // Alone in its room (another process may bring the others): nothing
        // to receive yet, so its publisher transport is enough.
        let alone = BotRecord(role: .participant, room: "r", identity: "p-2")
        alone.joinedAt = at(10)
        alone.publisherConnectedAt = at(40)
        #expect(alone.isConnected && alone.connectMilliseconds == 30)
        // Once offered tracks it needs its subscriber transport too.
        alone.subscriberOffersAnswered = 1
        #expect(!alone.isConnected)
        // Publishers and subscribers are unchanged.
        let sub = BotRecord(role: .subscriber, room: "r", identity: "s-1")
        #expect(!sub.transportsUp(publisher: nil, subscriber: nil) && sub.transportsUp(publisher: nil, subscriber: true))
        let pub = BotRecord(role: .publisher, room: "r", identity: "u-1")
        #expect(pub.transportsUp(publisher: true, subscriber: nil))
    }

    /// A participant that sent and received: one row and one JSON entry
    /// with both directions; its received track's stall fails the run.
    @Test func participantIsReportedInBothDirectionsAndItsReceiveSideIsJudged() throws {
        let o = try parse("--participants 2")
        let track = AnnouncedTrack(
            mid: "0", kind: .audio, streamID: "s", trackID: "TR_a", codec: ClientOfferBuilder.opus, ssrc: SSRC(7),
            rtxSSRC: nil)
        var stats = TrackStats(track: track, ssrc: SSRC(7))
        // Received: 100-byte packets every 20 ms for 3 s, then nothing.
        for (n, ms) in stride(from: 0, to: 3000, by: 20).enumerated() {
            stats.stream.received(sequenceNumber: UInt16(n), timestamp: UInt32(ms * 48), arrival: at(ms), isRetransmission: false)
            stats.packet(bytes: 100, at: at(ms))
        }
        let r = BotRecord(role: .participant, room: "r", identity: "roombot-x-participant-1")
        r.startedAt = at(0)
        r.joinedAt = at(10)
        r.publisherConnectedAt = at(40)
        r.subscriberConnectedAt = at(50)
        r.tracksExpected = 1
        r.tracksAnnounced = 1
        r.tracksPublished = 2
        r.tracks[SSRC(7)] = stats
        // Sent: 1000-byte packets every 10 ms for 5 s: 800 kbit/s.
        for ms in stride(from: 0, to: 5000, by: 10) { r.sent(bytes: 1000, at: at(ms)) }
        let report = BotReport(records: [r], options: o, end: at(5000), durationSeconds: 5, interrupted: false)
        let row = try #require(report.bots.first)
        #expect(report.bots.count == 1 && row.role == .participant)
        #expect(row.packetsSent == 500 && row.sentKbps == 800)
        #expect(row.packetsReceived == 150 && row.receivedKbps == 150 * 100 * 8 / 5.0 / 1000)
        #expect(row.tracksExpected == 1 && row.tracksFlowing == 1 && row.flowingByKind == ["audio": 1])
        let group = try #require(report.groups.first { $0.name == "participant" })
        #expect(group.sentMbps == 0.8 && group.packetsSent == 500 && group.tracksFlowing == 1)
        let lines = report.table.split(separator: "\n").map(String.init)
        let tableRow = try #require(lines.first { $0.hasPrefix("participant ") })
        #expect(tableRow.contains(" 0.02/0.80 "), "\(tableRow)")
        #expect(lines.contains { $0.contains("participant: sent 0.80 Mbps on 2 tracks") }, "\(lines)")
        for line in lines { #expect(line.count <= 100, "\(line)") }
        // The 2 s it received nothing at the end fails the default --max-freeze.
        let (status, reasons) = report.exitStatus(o)
        #expect(status == 1)
        #expect(
            reasons.contains { $0.contains("> --max-freeze 1.5 s on roombot-x-participant-1 audio track TR_a") },
            "\(reasons)")
    }

    @Test func progressLineShowsWhatWasSentWhereBotsPublish() {
        let p = BotRecord(role: .participant, room: "r", identity: "p-1")
        var progress = LiveProgress(start: at(0))
        for ms in stride(from: 0, to: 1000, by: 10) { p.sent(bytes: 1000, at: at(ms)) }
        let s = progress.sample([p], now: at(1000))
        #expect(s.publishing && abs(s.sentMbps - 0.8) < 1e-9)
        #expect(LiveProgress.line(s, elapsedSeconds: 1).contains("loss 0.00%, sent 0.80 Mbps, errors 0"))
        // Nothing sent in the next second: the figure drops.
        #expect(progress.sample([p], now: at(2000)).sentMbps == 0)
        var viewers = LiveProgress(start: at(0))
        let line = LiveProgress.line(
            viewers.sample([BotRecord(role: .subscriber, room: "r", identity: "s")], now: at(1000)), elapsedSeconds: 1)
        #expect(!line.contains("sent"))
    }
}
