/// Maps one RTP stream's timestamps to the sender's wall clock from its
/// last Sender Report (RFC 3550 section 6.4.1: an SR pairs an NTP time,
/// UQ32.32 seconds since 1900, with the RTP timestamp of the same
/// instant). Audio and video of one publisher come from one sender clock,
/// so mapping both to NTP puts them on one timeline however their RTP
/// timestamps started (RFC 3550 section 5.1: the initial value is
/// random), and a simulcast layer switch (another SSRC, another offset)
/// lands on the same timeline too.
///
/// Times are microseconds of NTP time, kept as `Int64` (the 1900 epoch
/// fits with room to spare).
///
/// Successive reports of one stream disagree: a sender extrapolates the
/// report's RTP timestamp from its last packet's send time, and packets
/// leave after their capture by a varying delay (pacing, a video frame's
/// packets spread out), so reports can jitter by tens of milliseconds;
/// and the sender's wall clock and media clock drift apart slowly. So frames are timed from an anchor,
/// the first mapped frame, by their RTP timestamp distance (exact
/// spacing: 960 ticks at 48 kHz are exactly 20 ms), and the anchor moves
/// to the latest report's mapping only when the two differ by more than
/// `maximumDrift` (70 ms: drift of 100 ppm needs about 12 minutes to get
/// there). Audio and video are each within the first report's jitter of
/// the sender's timeline, so within about that of each other.
package struct SenderReportClock: Equatable, Sendable {
    package let clockRate: Int
    /// The last report: its NTP time in microseconds and RTP timestamp.
    package private(set) var reference: (ntpMicroseconds: Int64, rtpTimestamp: UInt32)?
    private var anchor: (ntpMicroseconds: Int64, rtpTimestamp: UInt32)?
    package static let maximumDrift: Int64 = 70_000

    package init(clockRate: Int) { self.clockRate = max(1, clockRate) }

    package static func == (a: SenderReportClock, b: SenderReportClock) -> Bool {
        a.clockRate == b.clockRate && a.reference?.ntpMicroseconds == b.reference?.ntpMicroseconds
            && a.reference?.rtpTimestamp == b.reference?.rtpTimestamp
            && a.anchor?.ntpMicroseconds == b.anchor?.ntpMicroseconds && a.anchor?.rtpTimestamp == b.anchor?.rtpTimestamp
    }

    /// A new Sender Report of the stream.
    package mutating func senderReport(ntp: UInt64, rtpTimestamp: UInt32) {
        reference = (Self.microseconds(ntp: ntp), rtpTimestamp)
    }

    /// The sender's wall-clock time of `rtpTimestamp`, in NTP
    /// microseconds; nil before the first report. The difference from
    /// the report is taken modulo 2^32 as a signed value, so timestamps
    /// up to half the wrap period (about 12 hours at 48 kHz) before or
    /// after the report map correctly across a wrap.
    package func ntpMicroseconds(of rtpTimestamp: UInt32) -> Int64? {
        guard let reference else { return nil }
        return Self.map(rtpTimestamp, from: reference, clockRate: clockRate)
    }

    /// A frame's time for the file: from the anchor, which follows the
    /// reports only past `maximumDrift` (and every 2^30 ticks, long
    /// before the signed distance could wrap).
    package mutating func frameMicroseconds(of rtpTimestamp: UInt32) -> Int64? {
        guard let reported = ntpMicroseconds(of: rtpTimestamp) else { return nil }
        if let anchor {
            let distance = Int64(Int32(bitPattern: rtpTimestamp &- anchor.rtpTimestamp))
            let anchored = Self.map(rtpTimestamp, from: anchor, clockRate: clockRate)
            if abs(anchored - reported) <= Self.maximumDrift && abs(distance) < 1 << 30 { return anchored }
        }
        anchor = (reported, rtpTimestamp)
        return reported
    }

    private static func map(
        _ rtp: UInt32, from base: (ntpMicroseconds: Int64, rtpTimestamp: UInt32), clockRate: Int
    )
        -> Int64
    {
        let ticks = Int64(Int32(bitPattern: rtp &- base.rtpTimestamp))
        return base.ntpMicroseconds + ticks * 1_000_000 / Int64(clockRate)
    }

    /// NTP UQ32.32 to microseconds (a fraction of 999,999.5 us or more
    /// rounds up to the next second's 1,000,000: harmless for differences).
    package static func microseconds(ntp: UInt64) -> Int64 {
        let seconds = Int64(ntp >> 32)
        // Rounded to the nearest microsecond. Parenthesized: in Swift `>>`
        // binds tighter than `*`.
        let fraction = Int64(((ntp & 0xFFFF_FFFF) * 1_000_000 + (1 << 31)) >> 32)
        return seconds * 1_000_000 + fraction
    }
}
