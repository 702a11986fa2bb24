import RTCP
import RTP
import Wire

/// Counters of one outgoing SSRC for its sender reports (RFC 3550 section
/// 6.4.1).
///
/// - The octet count is payload octets only: no header, no padding.
/// - The SR's RTP timestamp must stand for the same instant as its NTP
///   timestamp, not for the last packet sent; `makeSenderInfo` extrapolates
///   from the newest timestamp sent with the clock rate.
/// - The newest timestamp is the serially greatest seen (RFC 1982
///   arithmetic), with the instant its first packet was sent: packets of one
///   frame share a timestamp, and the first is nearest to the frame's time.
/// - Counts wrap modulo 2^32 on the wire, as the RFC allows.
package struct SendStatistics: Sendable {
    package let ssrc: SSRC
    /// RTP clock rate in Hz.
    package let clockRate: UInt32

    package private(set) var packetsSent: UInt64 = 0
    package private(set) var payloadOctetsSent: UInt64 = 0
    /// The newest RTP timestamp sent and when its first packet was sent.
    package private(set) var lastTimestamp: (value: UInt32, sentAt: Instant)?

    package init(ssrc: SSRC, clockRate: UInt32) {
        self.ssrc = ssrc
        self.clockRate = clockRate
    }

    /// Records one packet sent on this SSRC.
    package mutating func record(timestamp: UInt32, payloadOctets: Int, sentAt: Instant) {
        packetsSent &+= 1
        payloadOctetsSent &+= UInt64(clamping: max(0, payloadOctets))
        if let last = lastTimestamp, !timestamp.isNewer(than: last.value) { return }
        lastTimestamp = (timestamp, sentAt)
    }

    /// Records a packet from its parsed header (payload excludes padding).
    package mutating func record(header: RTPHeader, sentAt: Instant) {
        record(timestamp: header.timestamp, payloadOctets: header.payloadLength, sentAt: sentAt)
    }

    /// Sender info for an SR sent at `now`, whose wall-clock time the shell
    /// gives as `wallClock`. Nil before the first packet: a source that has
    /// sent nothing reports with an RR (RFC 3550 section 6.4).
    package func makeSenderInfo(now: Instant, wallClock: NTPTimestamp) -> SenderInfo? {
        guard let last = lastTimestamp else { return nil }
        let ticks = (now - last.sentAt).rtpTicks(clockRate: clockRate)
        return SenderInfo(
            ntpTimestamp: wallClock.rawValue,
            rtpTimestamp: last.value &+ UInt32(truncatingIfNeeded: ticks),
            packetCount: UInt32(truncatingIfNeeded: packetsSent),
            octetCount: UInt32(truncatingIfNeeded: payloadOctetsSent))
    }
}
