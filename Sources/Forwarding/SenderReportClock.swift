import Wire

/// The latest Sender Report of one layer's SSRC: an NTP timestamp and the
/// RTP timestamp that corresponds to the same instant (RFC 3550 section
/// 6.4.1). All layers of a simulcast track come from one capture clock, so
/// two layers' pairs say how their RTP timelines line up.
struct SenderReportClock: Equatable, Sendable {
    var ssrc: SSRC
    /// NTP time, 32.32 fixed point (seconds since 1900 and fraction).
    var ntp: UInt64
    var rtpTimestamp: UInt32

    /// The offset that, added to this SSRC's RTP timestamps, expresses them
    /// on `other`'s timeline at the same wall-clock instant:
    /// `rtp_other - rtp_self + (ntp_self - ntp_other) * clockRate`,
    /// modulo 2^32. NTP differences are exact to the tick (rounded toward
    /// zero); no arithmetic here can trap, whatever the reports say.
    func timestampOffset(to other: SenderReportClock, clockRate: UInt32) -> UInt32 {
        let difference = Int64(bitPattern: ntp &- other.ntp)
        let magnitude = difference.magnitude
        let seconds = magnitude >> 32
        let fraction = magnitude & 0xFFFF_FFFF
        let rate = UInt64(clockRate)
        // fraction < 2^32 and rate < 2^32: the product fits in 64 bits.
        let ticks = seconds &* rate &+ (fraction &* rate) >> 32
        let signed = difference < 0 ? 0 &- ticks : ticks
        return other.rtpTimestamp &- rtpTimestamp &+ UInt32(truncatingIfNeeded: signed)
    }
}
