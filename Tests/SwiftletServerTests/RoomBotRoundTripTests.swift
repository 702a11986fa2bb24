import RTCP
import Testing
import Wire

@testable import RoomBot

@Suite struct RoomBotRoundTripTests {
    let t0 = Instant(nanoseconds: 5_000_000_000)

    @Test func roundTripIsArrivalMinusSentMinusDLSR() {
        var e = RoundTripEstimator()
        let lsr = RoundTripEstimator.ntp(t0).compact
        e.senderReportSent(compactNTP: lsr, at: t0)
        // The server held our SR for 0.5 s (32768/65536); the block came
        // back 0.56 s after we sent it: 60 ms round trip.
        let block = ReceptionReport(ssrc: SSRC(1), lastSenderReport: lsr, delaySinceLastSenderReport: 32768)
        #expect(e.roundTrip(block, arrival: t0 + .milliseconds(560)) == .milliseconds(60))
    }

    @Test func noRoundTripWithoutAKnownSenderReport() {
        var e = RoundTripEstimator()
        #expect(e.roundTrip(ReceptionReport(ssrc: SSRC(1)), arrival: t0) == nil)  // LSR 0
        e.senderReportSent(compactNTP: 1234, at: t0)
        #expect(e.roundTrip(ReceptionReport(ssrc: SSRC(1), lastSenderReport: 999), arrival: t0) == nil)
        // DLSR longer than the time since we sent: refused, not negative.
        let block = ReceptionReport(ssrc: SSRC(1), lastSenderReport: 1234, delaySinceLastSenderReport: 65536)
        #expect(e.roundTrip(block, arrival: t0 + .milliseconds(10)) == nil)
    }

    @Test func onlyRecentSenderReportsAreRemembered() {
        var e = RoundTripEstimator()
        for i in 0..<(RoundTripEstimator.remembered + 1) {
            e.senderReportSent(compactNTP: UInt32(100 + i), at: t0 + .milliseconds(Int64(i)))
        }
        let oldest = ReceptionReport(ssrc: SSRC(1), lastSenderReport: 100)
        let newest = ReceptionReport(ssrc: SSRC(1), lastSenderReport: UInt32(100 + RoundTripEstimator.remembered))
        #expect(e.roundTrip(oldest, arrival: t0 + .seconds(1)) == nil)
        #expect(e.roundTrip(newest, arrival: t0 + .seconds(1)) != nil)
    }
}
