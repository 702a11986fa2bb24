import Negotiation
import Testing
import Wire

@testable import RoomBot

/// roombot's judgement of a run on a virtual clock: a track that stops is
/// stalled until the end (no closing packet needed), a stall lowers the
/// bitrate, live figures are about the last second, and the exit status
/// fails a run with a stall, an error or a signal.
@Suite struct RoomBotStallTests {
    private func at(_ ms: Int) -> Instant { Instant(nanoseconds: Int64(ms) * 1_000_000) }

    private func track(_ kind: MediaKind = .audio, id: String = "TR_a") -> AnnouncedTrack {
        AnnouncedTrack(
            mid: "0", kind: kind, streamID: "s", trackID: id,
            codec: kind == .audio ? ClientOfferBuilder.opus : ClientOfferBuilder.vp8, ssrc: SSRC(7), rtxSSRC: nil)
    }

    /// 100-byte packets every 20 ms over [from, to).
    private func feed(_ stats: inout TrackStats, from: Int, to: Int) {
        var seq = UInt16(from / 20)
        for ms in stride(from: from, to: to, by: 20) {
            stats.stream.received(sequenceNumber: seq, timestamp: UInt32(ms * 48), arrival: at(ms), isRetransmission: false)
            stats.packet(bytes: 100, at: at(ms))
            seq &+= 1
        }
    }

    private func subscriber(_ stats: TrackStats) -> BotRecord {
        let r = BotRecord(role: .subscriber, room: "r", identity: "sub-1")
        r.startedAt = at(0)
        r.joinedAt = at(10)
        r.subscriberConnectedAt = at(50)
        r.tracksAnnounced = 1
        r.tracksExpected = 1
        r.tracks[SSRC(7)] = stats
        return r
    }

    private func options(_ extra: String = "") throws -> BotOptions {
        try BotOptions.parse(("--url ws://127.0.0.1:1/rtc --room r --dev " + extra).split(separator: " ").map(String.init))
    }

    @Test func stallThatLastsToTheEndIsCountedAndLowersTheBitrate() {
        var stats = TrackStats(track: track(), ssrc: SSRC(7))
        feed(&stats, from: 0, to: 3000)
        // The last packet came at 2980 ms; the run ended at 10 s.
        let end = at(10_000)
        #expect(stats.gaps.freezeCount == 0)  // no packet closed the gap
        let gaps = stats.gaps(until: end)
        #expect(gaps.freezeCount == 1)
        #expect(gaps.longestGap == .milliseconds(7020))
        // 150 packets x 100 bytes over 10 s, not over the 2.98 s that had packets.
        #expect(stats.bitsPerSecond(until: end) == 150 * 100 * 8 / 10.0)
        #expect(stats.isFlowing(at: at(3500), window: .seconds(1)))
        #expect(!stats.isFlowing(at: at(4000), window: .seconds(1)))
    }

    @Test func withdrawnTrackStopsStallingWhenItLeavesTheOffer() {
        var stats = TrackStats(track: track(), ssrc: SSRC(7))
        feed(&stats, from: 0, to: 2000)
        stats.endedAt = at(2200)  // its publisher left: not a stall
        #expect(stats.gaps(until: at(10_000)).longestGap == .milliseconds(220))
        #expect(stats.bitsPerSecond(until: at(10_000)) == 100 * 100 * 8 / 2.2)
        #expect(!stats.isFlowing(at: at(2100), window: .seconds(1)))
    }

    @Test func exitStatusFailsAStallOverMaxFreezeWithTheTrackAndUnroundedValue() throws {
        var stats = TrackStats(track: track(), ssrc: SSRC(7))
        feed(&stats, from: 0, to: 3000)
        let record = subscriber(stats)
        let o = try options()
        #expect(o.maxFreezeSeconds == 1.5)
        // A 2 s stall at the end fails the default.
        let failed = BotReport(records: [record], options: o, end: at(4980), durationSeconds: 5, interrupted: false)
        let (status, reasons) = failed.exitStatus(o)
        #expect(status == 1)
        #expect(reasons.contains { $0.contains("freeze 2.0 s > --max-freeze 1.5 s on sub-1 audio track TR_a (still frozen") })
        // A 1 s stall passes.
        let passed = BotReport(records: [record], options: o, end: at(3980), durationSeconds: 4, interrupted: false)
        #expect(passed.exitStatus(o).0 == 0, "\(passed.exitStatus(o).1)")
        // Unrounded: 2.345 s against 2.3 s.
        let o2 = try options("--max-freeze 2.3")
        let close = BotReport(records: [record], options: o2, end: at(5325), durationSeconds: 6, interrupted: false)
        #expect(close.exitStatus(o2).1.first?.hasPrefix("freeze 2.345 s > --max-freeze 2.3 s") == true)
    }

    @Test func errorsFailTheRunUnlessAllowedAndSignalsCutItShort() throws {
        var stats = TrackStats(track: track(), ssrc: SSRC(7))
        feed(&stats, from: 0, to: 5000)
        let record = subscriber(stats)
        record.error("signaling_closed", "server closed the connection")
        let o = try options()
        let report = BotReport(records: [record], options: o, end: at(5000), durationSeconds: 5, interrupted: false)
        let (status, reasons) = report.exitStatus(o)
        #expect(status == 2)
        #expect(reasons == ["1 errors: signaling_closed x1 (sub-1: server closed the connection)"])
        let allowed = try options("--allow-errors")
        #expect(report.exitStatus(allowed).0 == 0)
        let cut = BotReport(
            records: [record], options: o, end: at(5000), durationSeconds: 5, interrupted: true, cutShortBy: 2)
        #expect(cut.exitStatus(o).0 == 130)
        #expect(cut.exitStatus(o).1.first == "cut short by signal 2 after 5.0 s")
    }

    @Test func trackAnnouncedButNeverDeliveredFailsTheRun() throws {
        let record = subscriber(TrackStats(track: track(), ssrc: SSRC(7)))
        record.tracks = [:]
        let o = try options()
        let report = BotReport(records: [record], options: o, end: at(5000), durationSeconds: 5, interrupted: false)
        #expect(report.exitStatus(o).0 == 2)
        #expect(report.exitStatus(o).1.contains("subscribers received media on 0 of 1 expected tracks"))
        let noMedia = try options("--no-media")
        let control = BotReport(records: [record], options: noMedia, end: at(5000), durationSeconds: 5, interrupted: false)
        #expect(control.exitStatus(noMedia).0 == 0)
    }

    @Test func liveProgressShowsTheLastSecondNotTheRunningAverage() {
        var stats = TrackStats(track: track(), ssrc: SSRC(7))
        let record = subscriber(stats)
        record.transportUp = true
        record.signalingUp = true
        var progress = LiveProgress()
        feed(&stats, from: 0, to: 1000)
        record.tracks[SSRC(7)] = stats
        _ = progress.sample([record], now: at(1000))
        feed(&stats, from: 1000, to: 2000)
        record.tracks[SSRC(7)] = stats
        let flowing = progress.sample([record], now: at(2000))
        #expect(flowing.flowing == 1 && flowing.connected == 1)
        #expect(abs(flowing.mbps - 50 * 100 * 8 / 1e6) < 1e-9)
        // Nothing for the next two seconds, and the WebSocket closed.
        record.signalingUp = false
        let stopped = progress.sample([record], now: at(4000))
        #expect(stopped.flowing == 0 && stopped.connected == 0 && stopped.mbps == 0)
        #expect(LiveProgress.line(stopped, elapsedSeconds: 4).contains("0 connected, tracks 1 announced 0 flowing, 0.00 Mbps"))
    }

    @Test func narrowTableFitsIn100Columns() throws {
        var stats = TrackStats(track: track(), ssrc: SSRC(7))
        feed(&stats, from: 0, to: 3000)
        let record = subscriber(stats)
        record.error("signaling_closed", "x")
        let o = try options()
        let report = BotReport(records: [record], options: o, end: at(3000), durationSeconds: 3, interrupted: false)
        for line in report.table.split(separator: "\n") { #expect(line.count <= 100, "\(line)") }
        let wide = try options("--wide")
        let full = BotReport(records: [record], options: wide, end: at(3000), durationSeconds: 3, interrupted: false)
        #expect(full.table.split(separator: "\n").contains { $0.count > 150 })
    }

    @Test func connectRetriesBackOffTo2Seconds() {
        #expect(Bot.backoff(afterFailures: 1) == .milliseconds(250))
        #expect(Bot.backoff(afterFailures: 2) == .milliseconds(500))
        #expect(Bot.backoff(afterFailures: 4) == .milliseconds(2000))
        #expect(Bot.backoff(afterFailures: 40) == .milliseconds(2000))
    }
}
