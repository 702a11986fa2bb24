import DTLS
import Foundation
import HTTPClient
import Negotiation
import NetIO
import Testing
import Wire

@testable import RoomBot

#if canImport(Glibc)
    import Glibc
#endif

/// A room WebSocket that comes back to a server that no longer knows the
/// participant (`joined` with `resumed: false`: the room's node died and
/// the room was placed on another node, or the server restarted): the bot
/// starts over as a new participant, and the report times the outage.
/// Decisions on a virtual clock; no server.
@Suite struct RoomBotRejoinTests {
    private func at(_ ms: Int) -> Instant { Instant(nanoseconds: Int64(ms) * 1_000_000) }

    /// A bot whose context can open media sockets on 127.0.0.1 (nothing
    /// listens: no packet is answered) and records what it unregisters.
    private func bot(_ role: BotRole, unregistered: UnregisteredTransports) throws -> Bot {
        let options = try BotOptions.parse(
            "--url ws://127.0.0.1:1/rtc --room r --dev --audio-only".split(separator: " ").map(String.init))
        let address = try #require(SocketAddress(hostAndPort: "127.0.0.1:1"))
        let server = BotServer(
            url: options.servers[0],
            endpoint: ServerEndpoint(address: address, hostHeader: "127.0.0.1:1", serverName: "", tls: nil),
            bindIP: "127.0.0.1")
        let context = BotContext(
            servers: [server], options: options,
            certificate: try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970)), media: NoMedia())
        context.mediaUnregistrar = { unregistered.list.append(ObjectIdentifier($0)) }
        let bot = Bot(record: BotRecord(role: role, room: "r", identity: "\(role.rawValue)-1"), context: context)
        bot.record.startedAt = at(0)
        bot.opened = true
        bot.record.joinedAt = at(10)
        return bot
    }

    final class UnregisteredTransports { var list: [ObjectIdentifier] = [] }

    private let track = AnnouncedTrack(
        mid: "0", kind: .audio, streamID: "s", trackID: "TR_a", codec: ClientOfferBuilder.opus, ssrc: SSRC(7), rtxSSRC: nil)

    /// 100-byte packets every 20 ms over [from, to).
    private func feed(_ record: BotRecord, from: Int, to: Int) {
        var stats = record.tracks[SSRC(7)] ?? TrackStats(track: track, ssrc: SSRC(7))
        for ms in stride(from: from, to: to, by: 20) {
            stats.stream.received(
                sequenceNumber: UInt16(ms / 20), timestamp: UInt32(ms * 48), arrival: at(ms), isRetransmission: false)
            stats.packet(bytes: 100, at: at(ms))
        }
        record.tracks[SSRC(7)] = stats
    }

    @Test func aFreshJoinAfterADropDropsTheTransportsAndPublishesTheSamePublicationAgain() throws {
        let unregistered = UnregisteredTransports()
        let b = try bot(.participant, unregistered: unregistered)
        b.startPublishing(now: at(10))
        let oldPublisher = try #require(b.publisher)
        let oldOffer = try #require(b.pendingOffer)
        let ssrcLines = oldOffer.text.split(separator: "\r\n").filter { $0.hasPrefix("a=ssrc:") }
        #expect(!ssrcLines.isEmpty)
        b.record.tracksAnnounced = 1
        feed(b.record, from: 100, to: 5000)

        b.signalingClosed("websocket closed 1012 lost the room's node: resume", code: .serviceRestart, now: at(5000))
        #expect(b.reconnection != nil)
        b.rejoined(resumed: false, now: at(11_000))

        #expect(b.reconnection == nil && b.reconnectAt == nil)
        #expect(b.record.rejoins == 1 && b.record.reconnects == 0 && b.record.errors.isEmpty)
        // The old transport left the loop; a new one offers the same SSRCs
        // with new ICE credentials.
        #expect(unregistered.list == [ObjectIdentifier(oldPublisher)])
        let newPublisher = try #require(b.publisher)
        #expect(newPublisher !== oldPublisher && b.subscriber == nil)
        let newOffer = try #require(b.pendingOffer)
        #expect(newOffer.text.split(separator: "\r\n").filter { $0.hasPrefix("a=ssrc:") } == ssrcLines)
        let ufrag = { (o: String) in o.split(separator: "\r\n").first { $0.hasPrefix("a=ice-ufrag:") } }
        #expect(ufrag(newOffer.text) != nil && ufrag(newOffer.text) != ufrag(oldOffer.text))
        // What was received is closed at the drop; the new session starts
        // empty and the recovery is timed from the drop.
        #expect(b.record.tracks.isEmpty && b.record.tracksAnnounced == 0)
        #expect(b.record.earlierSessions.count == 1)
        #expect(b.record.earlierSessions[0].tracks[SSRC(7)]?.endedAt == at(5000))
        #expect(b.record.recoveringSince == at(5000))
    }

    @Test func aResumeKeepsTheTransportsAndCountsAReconnect() throws {
        let unregistered = UnregisteredTransports()
        let b = try bot(.publisher, unregistered: unregistered)
        b.startPublishing(now: at(10))
        let publisher = try #require(b.publisher)
        b.signalingClosed(ClientStream.peerClosed, code: nil, now: at(5000))
        b.rejoined(resumed: true, now: at(5300))
        #expect(b.publisher === publisher && unregistered.list.isEmpty)
        #expect(b.record.reconnects == 1 && b.record.rejoins == 0 && b.record.recoveringSince == nil)
    }

    @Test func recoveryIsFromTheDropToTheFirstMediaAfterTheRejoin() throws {
        let b = try bot(.subscriber, unregistered: UnregisteredTransports())
        b.record.tracksExpected = 1
        b.record.tracksAnnounced = 1
        b.record.subscriberConnectedAt = at(50)
        feed(b.record, from: 100, to: 5000)
        b.signalingClosed(ClientStream.peerClosed, code: nil, now: at(5000))
        b.rejoined(resumed: false, now: at(11_000))
        // No sink (NoMedia): the first packet of the new session counts.
        b.mediaAfterRejoin(ssrc: SSRC(7), arrival: at(12_500))
        b.mediaAfterRejoin(ssrc: SSRC(7), arrival: at(12_520))
        #expect(b.record.recoveryMilliseconds == [7500] && b.record.recoveringSince == nil)

        let options = try BotOptions.parse(
            "--url ws://127.0.0.1:1/rtc --room r --dev --audio-only --subscribers 1".split(separator: " ").map(String.init))
        // The new session delivered nothing yet: the run fails on it, the
        // earlier session's packets do not count as flowing.
        let stalled = BotReport(records: [b.record], options: options, end: at(20_000), durationSeconds: 20, interrupted: false)
        #expect(stalled.exitStatus(options).1.contains("subscribers received media on 0 of 1 expected tracks"))

        b.record.tracksAnnounced = 1
        feed(b.record, from: 12_500, to: 20_000)
        let report = BotReport(records: [b.record], options: options, end: at(20_000), durationSeconds: 20, interrupted: false)
        let (status, reasons) = report.exitStatus(options)
        // The silence from the drop is the recovery, not a stall.
        #expect(status == 0, "\(reasons)")
        #expect(report.stalls.allSatisfy { $0.longest < .milliseconds(100) }, "\(report.stalls)")
        #expect(report.overall.rejoins == 1 && report.overall.reconnects == 0)
        #expect(report.overall.recovery.p50 == 7500 && report.overall.recoveryMax == 7500)
        // Packets of both sessions count.
        let expected: UInt64 = (5000 - 100) / 20 + (20_000 - 12_500) / 20
        #expect(report.overall.packets == expected)
        #expect(report.table.contains("rejoins 1 (recovered 1)"), "\(report.table)")
        #expect(report.table.contains("recovery p50/p95/max 7500/7500/7500 ms"), "\(report.table)")
        let json = report.json(options)
        let overall = try #require((json["groups"] as? [String: Any])?["overall"] as? [String: Any])
        #expect(overall["rejoins"] as? Int == 1)
        #expect((overall["recoveryMs"] as? [String: Any])?["max"] as? Double == 7500)
        let bots = try #require(json["bots"] as? [[String: Any]])
        #expect(bots.first?["rejoins"] as? Int == 1 && bots.first?["recoveryMs"] as? [Double] == [7500])
    }

    @Test func theProgressLineDoesNotGoBackAtARejoin() throws {
        let b = try bot(.subscriber, unregistered: UnregisteredTransports())
        var progress = LiveProgress()
        feed(b.record, from: 0, to: 1000)
        _ = progress.sample([b.record], now: at(1000))
        feed(b.record, from: 1000, to: 2000)
        b.signalingClosed(ClientStream.peerClosed, code: nil, now: at(2000))
        b.rejoined(resumed: false, now: at(2000))
        // The second before the drop: 50 packets of 100 bytes, whatever
        // the rejoin moved aside.
        let rejoined = progress.sample([b.record], now: at(2000))
        #expect(abs(rejoined.mbps - 50 * 100 * 8 / 1e6) < 1e-9 && rejoined.flowing == 0, "\(rejoined)")
        feed(b.record, from: 2000, to: 3000)
        let back = progress.sample([b.record], now: at(3000))
        #expect(abs(back.mbps - 50 * 100 * 8 / 1e6) < 1e-9 && back.flowing == 1, "\(back)")
    }

    @Test func aSecondDropBeforeMediaCameBackIsTimedFromTheFirst() throws {
        let b = try bot(.subscriber, unregistered: UnregisteredTransports())
        b.signalingClosed(ClientStream.peerClosed, code: nil, now: at(5000))
        b.rejoined(resumed: false, now: at(6000))
        b.signalingClosed(ClientStream.peerClosed, code: nil, now: at(6500))
        b.rejoined(resumed: false, now: at(8000))
        b.mediaAfterRejoin(ssrc: SSRC(7), arrival: at(9000))
        #expect(b.record.rejoins == 2 && b.record.recoveryMilliseconds == [4000])
    }
}

extension ClusterProcessSuite {
    /// The real roombot against a real dev server that forgets its bots: the
    /// server is killed while media flows and started again on the same port,
    /// so the bots' WebSockets come back to a server that answers `joined`
    /// with `resumed: false`. Each bot starts over as a new participant and
    /// media flows again to the end of the run.
    @Suite struct RoomBotRejoinProcessTests {
        private let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache").path

        @Test(.timeLimit(.minutes(1)))
        func botsThatComeBackToAServerThatForgotThemRejoinAndGetMediaAgain() throws {
            let (first, _, url) = try startDevServer()
            defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
            let port = try #require(url.split(separator: ":").last.flatMap { UInt16($0.prefix { $0.isNumber }) })
            let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: json) }
            let bot = try RoomBotFailureTests.BotProcess([
                "--url", url, "--room", "again", "--dev", "--audio-only", "--duration", "14", "--connect-timeout", "15",
                "--cache-dir", cache, "--json", json.path,
            ])
            #expect(bot.wait(for: "1 flowing", seconds: 20), "\(bot.output)")
            kill(first.processIdentifier, SIGKILL)
            first.waitUntilExit()
            // The same port, a server that knows nobody.
            let (second, secondOutput, again) = try startDevServer(["--http", "127.0.0.1:\(port)"])
            defer { if second.isRunning { kill(second.processIdentifier, SIGKILL) } }
            #expect(again == url, "\(secondOutput.text)")
            #expect(bot.wait(for: "joined again (not resumed", seconds: 15), "\(bot.output)")
            #expect(bot.wait(for: "1 flowing", seconds: 10, after: bot.output.utf8.count), "\(bot.output)")
            let status = bot.finish(within: 30)
            // Tracks flowing at the end, no stall, no error.
            #expect(status == 0, "\(bot.output)")
            #expect(bot.output.contains("rejoins 2 (recovered 2)"), "\(bot.output)")

            let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
            let groups = try #require(report["groups"] as? [String: Any])
            let overall = try #require(groups["overall"] as? [String: Any])
            #expect(overall["rejoins"] as? Int == 2 && overall["reconnects"] as? Int == 0, "\(overall)")
            #expect((overall["errors"] as? [String: Int])?.isEmpty == true, "\(overall)")
            let subscriber = try #require(groups["subscriber"] as? [String: Any])
            let recovery = try #require(subscriber["recoveryMs"] as? [String: Any])
            #expect(recovery["count"] as? Int == 1, "\(recovery)")
            #expect((recovery["max"] as? Double ?? .infinity) < 15_000, "\(recovery)")
            let bots = try #require(report["bots"] as? [[String: Any]])
            #expect(bots.map { $0["rejoins"] as? Int } == [1, 1])
        }
    }
}
