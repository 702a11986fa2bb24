/// Conversions between wall-clock durations and RTP clock ticks, exact in
/// integers and free of overflow traps for any `Duration` an SFU meets.
extension Duration {
    /// This duration in ticks of an RTP clock of `clockRate` Hz, rounded
    /// toward zero. Negative durations give negative tick counts.
    @inline(__always)
    func rtpTicks(clockRate: UInt32) -> Int64 {
        let ns = nanoseconds
        let rate = Int64(clockRate)
        let seconds = ns / 1_000_000_000
        let rest = ns % 1_000_000_000  // |rest| * rate < 1e9 * 2^32 < 2^63
        return seconds &* rate &+ rest * rate / 1_000_000_000
    }

    /// This duration in units of 1/65536 s (the DLSR unit of RFC 3550
    /// section 6.4.1), rounded down, clamped to 0 ... UInt32.max.
    var rtcpDelayUnits: UInt32 {
        let ns = nanoseconds
        guard ns > 0 else { return 0 }
        let units = (ns / 1_000_000_000) &* 65536 &+ (ns % 1_000_000_000) * 65536 / 1_000_000_000
        return UInt32(clamping: units)
    }
}
