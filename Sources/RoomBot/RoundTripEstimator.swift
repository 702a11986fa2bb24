import RTCP
import RTPStreams
import Wire

/// Round-trip time from our sender reports echoed in the server's
/// reception report blocks (RFC 3550 section 6.4.1): the block's LSR names
/// one of our SRs, DLSR says how long the server held it, so
/// RTT = arrival - (when we sent that SR) - DLSR.
///
/// We write the SR's NTP field from the monotonic clock: only we read the
/// LSR of our own SRs, so any clock that does not jump will do.
struct RoundTripEstimator {
    /// Compact NTP (LSR) of recent SRs -> when they were sent.
    private var sent: [UInt32: Instant] = [:]
    private var order: [UInt32] = []
    static let remembered = 32

    static func ntp(_ now: Instant) -> NTPTimestamp { NTPTimestamp(sinceUnixEpoch: .nanoseconds(now.nanoseconds)) }

    mutating func senderReportSent(compactNTP: UInt32, at now: Instant) {
        if sent.updateValue(now, forKey: compactNTP) == nil { order.append(compactNTP) }
        while order.count > Self.remembered { sent[order.removeFirst()] = nil }
    }

    /// The RTT a block reports, or nil: LSR 0 (no SR received yet), an SR
    /// we do not remember, or a negative result (a DLSR longer than the
    /// time since we sent: the server's clock or report is off).
    func roundTrip(_ block: ReceptionReport, arrival: Instant) -> Duration? {
        guard block.lastSenderReport != 0, let sentAt = sent[block.lastSenderReport] else { return nil }
        let rtt = arrival - sentAt - block.delaySinceLastSenderReportDuration
        return rtt.nanoseconds >= 0 ? rtt : nil
    }
}
