import RTCP
import RTP
import SFUTesting
import Testing
import Wire

@testable import RTPStreams

@Test func extrapolatesTheSRTimestampToNow() throws {
    var s = SendStatistics(ssrc: SSRC(7), clockRate: 90_000)
    let ntp = NTPTimestamp(seconds: 3_900_000_000, fraction: 0x4000_0000)
    #expect(s.makeSenderInfo(now: .zero, wallClock: ntp) == nil)
    var clock = VirtualClock()
    s.record(timestamp: 1000, payloadOctets: 1200, sentAt: clock.now)
    clock.advance(by: .milliseconds(5))
    s.record(timestamp: 1000, payloadOctets: 800, sentAt: clock.now)  // same frame
    clock.advance(by: .milliseconds(15))
    // 20 ms after the frame's first packet: 1000 + 0.020 * 90000 = 2800.
    let info = try #require(s.makeSenderInfo(now: clock.now, wallClock: ntp))
    #expect(info == SenderInfo(ntpTimestamp: ntp.rawValue, rtpTimestamp: 2800, packetCount: 2, octetCount: 2000))
}

@Test func ignoresOlderTimestampsAndWraps() throws {
    var s = SendStatistics(ssrc: SSRC(7), clockRate: 48_000)
    let t0 = Instant(nanoseconds: 10_000_000_000)
    s.record(timestamp: 0xFFFF_FF00, payloadOctets: 10, sentAt: t0)
    s.record(timestamp: 0xFFFF_F000, payloadOctets: 10, sentAt: t0 + .milliseconds(500))  // a retransmission
    let info = try #require(s.makeSenderInfo(now: t0 + .seconds(1), wallClock: NTPTimestamp(rawValue: 1)))
    #expect(info.rtpTimestamp == 0xFFFF_FF00 &+ 48_000)
    #expect(info.packetCount == 2)
}

@Test func countsPayloadOctetsWithoutHeaderOrPadding() throws {
    var s = SendStatistics(ssrc: SSRC(7), clockRate: 90_000)
    let bytes = RTPBuilders.packet(
        timestamp: 77, extensions: [(1, [0xAB])], payload: [UInt8](repeating: 1, count: 100), paddingLength: 4)
    s.record(header: try RTPHeader(parsing: bytes.span.bytes), sentAt: .zero)
    #expect(s.payloadOctetsSent == 100)
    #expect(try #require(s.makeSenderInfo(now: .zero, wallClock: NTPTimestamp(rawValue: 0))).rtpTimestamp == 77)
}

@Test func convertsUnixTimeToNTP() {
    let ntp = NTPTimestamp(sinceUnixEpoch: .milliseconds(1500))
    #expect(ntp.seconds == 2_208_988_801)
    #expect(ntp.fraction == 0x8000_0000)
    #expect(ntp.compact == UInt32(truncatingIfNeeded: (UInt64(2_208_988_801) << 16) | 0x8000))
    #expect((ntp + .milliseconds(250)).fraction == 0xC000_0000)
    #expect((ntp + .milliseconds(750)) == NTPTimestamp(seconds: 2_208_988_802, fraction: 0x4000_0000))
}
