/// Per-SSRC SRTP and SRTCP state for one session: the highest index seen
/// or sent and a replay bitmap for each (RFC 3711 sections 3.3.1 and
/// 3.3.2). State lives in arrays indexed by slot, appended in arrival
/// order; a sorted SSRC-to-slot index finds a slot by binary search.
/// Storage grows only when a new SSRC is inserted (an append plus an
/// 8-byte-per-entry index shift), never per packet, and never past
/// `capacity` (`SRTPError.tooManyStreams`).
struct SRTPStreamTable {
    /// SRTCP's replay window, fixed like libsrtp's (RFC 3711 section 3.3.2
    /// asks for at least 64).
    static let rtcpWindow = 128
    private static let rtcpWords = 2

    let capacity: Int
    let rtpWindow: Int
    private let rtpWords: Int

    /// Sorted SSRCs and, at the same position, their slot.
    private var ssrcs: [UInt32] = []
    private var slots: [Int] = []
    private var rtpStarted: [Bool] = []
    /// ROC << 16 | SEQ of the newest RTP packet (the RFC's ROC and s_l).
    private var rtpHighest: [UInt64] = []
    private var rtpBits: [UInt64] = []
    private var rtcpStarted: [Bool] = []
    /// The newest SRTCP index received, or the last one sent.
    private var rtcpHighest: [UInt64] = []
    private var rtcpBits: [UInt64] = []

    /// `rtpWindow` is rounded up to a multiple of 32, as libsrtp2 keeps
    /// its window in 32-bit words (`bitvector_alloc`): both backends then
    /// refuse the same late packets for any window the caller asks for.
    init(capacity: Int, rtpWindow: Int) {
        self.capacity = capacity
        self.rtpWindow = (rtpWindow + 31) / 32 * 32
        rtpWords = (self.rtpWindow + 63) / 64
    }

    var count: Int { ssrcs.count }

    /// The slot of `ssrc`, or nil.
    func slot(of ssrc: UInt32) -> Int? {
        var low = 0, high = ssrcs.count
        while low < high {
            let mid = (low + high) / 2
            if ssrcs[mid] < ssrc { low = mid + 1 } else { high = mid }
        }
        return low < ssrcs.count && ssrcs[low] == ssrc ? slots[low] : nil
    }

    /// Makes a slot for a new `ssrc` (the only place this table allocates).
    mutating func insert(_ ssrc: UInt32) throws(SRTPError) -> Int {
        guard ssrcs.count < capacity else { throw .tooManyStreams }
        var low = 0, high = ssrcs.count
        while low < high {
            let mid = (low + high) / 2
            if ssrcs[mid] < ssrc { low = mid + 1 } else { high = mid }
        }
        let slot = rtpStarted.count
        ssrcs.insert(ssrc, at: low)
        slots.insert(slot, at: low)
        rtpStarted.append(false)
        rtpHighest.append(0)
        rtpBits.append(contentsOf: repeatElement(0, count: rtpWords))
        rtcpStarted.append(false)
        rtcpHighest.append(0)
        rtcpBits.append(contentsOf: repeatElement(0, count: Self.rtcpWords))
        return slot
    }

    // MARK: - Per-packet lookups

    // The engine holds this table in a class's stored property. A
    // non-mutating call there reads a copy of the struct: eight array
    // retains and releases per packet (perf, issue #14). These lookups are
    // `mutating` only so that the call is an in-place access; they change
    // nothing.

    /// The slot of `ssrc` and the packet index of `sequence`, checked
    /// against the replay window (RFC 3711 section 3.3.2).
    mutating func lookupRTP(ssrc: UInt32, sequence: UInt16) throws(SRTPError) -> (slot: Int?, index: UInt64) {
        let slot = slot(of: ssrc)
        let index = rtpIndex(slot: slot, sequence: sequence)
        try checkRTP(slot: slot, index: index)
        return (slot, index)
    }

    /// The slot of `ssrc` and the next SRTCP index to send on it.
    mutating func lookupNextRTCP(ssrc: UInt32) throws(SRTPError) -> (slot: Int?, index: UInt64) {
        let slot = slot(of: ssrc)
        return (slot, try nextRTCPIndex(slot: slot))
    }

    /// The slot of `ssrc`, with `index` checked against its SRTCP replay
    /// window.
    mutating func lookupRTCP(ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int? {
        let slot = slot(of: ssrc)
        try checkRTCP(slot: slot, index: index)
        return slot
    }

    /// Whether a packet of a new SSRC may still get a slot.
    mutating func hasRoom(for slot: Int?) -> Bool { slot != nil || count < capacity }

    // MARK: - SRTP

    /// The packet index of `sequence` (RFC 3711 section 3.3.1, appendix A).
    /// While the stream is in the first half of ROC 0, the ROC stays 0 (as
    /// libsrtp does), so a first packet near 65535 followed by a low
    /// number is not read as ROC -1.
    func rtpIndex(slot: Int?, sequence: UInt16) -> UInt64 {
        guard let slot, rtpStarted[slot] else { return UInt64(sequence) }
        let highest = rtpHighest[slot]
        if highest <= 0x8000 { return UInt64(sequence) }
        let roc = UInt32(truncatingIfNeeded: highest >> 16)
        let last = UInt16(truncatingIfNeeded: highest)
        let guess: UInt32
        if last < 0x8000 {
            guess = Int(sequence) - Int(last) > 0x8000 ? roc &- 1 : roc
        } else {
            guess = Int(last) - 0x8000 > Int(sequence) ? roc &+ 1 : roc
        }
        return UInt64(guess) << 16 | UInt64(sequence)
    }

    func checkRTP(slot: Int?, index: UInt64) throws(SRTPError) {
        guard let slot, rtpStarted[slot] else { return }
        try Self.check(index, highest: rtpHighest[slot], window: rtpWindow, bits: rtpBits, base: slot * rtpWords, words: rtpWords)
    }

    mutating func commitRTP(slot: Int, index: UInt64) {
        if !rtpStarted[slot] {
            rtpStarted[slot] = true
            rtpHighest[slot] = index
        }
        Self.commit(index, highest: &rtpHighest[slot], bits: &rtpBits, base: slot * rtpWords, words: rtpWords)
    }

    // MARK: - SRTCP

    /// The next SRTCP index to send on `slot` (RFC 3711 section 3.4: the
    /// first is 1, as libsrtp does; 2^31 - 1 is the last).
    func nextRTCPIndex(slot: Int?) throws(SRTPError) -> UInt64 {
        guard let slot, rtcpStarted[slot] else { return 1 }
        let next = rtcpHighest[slot] + 1
        guard next <= 0x7FFF_FFFF else { throw .keyExpired }
        return next
    }

    func checkRTCP(slot: Int?, index: UInt64) throws(SRTPError) {
        guard let slot, rtcpStarted[slot] else { return }
        try Self.check(
            index, highest: rtcpHighest[slot], window: Self.rtcpWindow, bits: rtcpBits,
            base: slot * Self.rtcpWords, words: Self.rtcpWords)
    }

    mutating func commitRTCP(slot: Int, index: UInt64) {
        if !rtcpStarted[slot] {
            rtcpStarted[slot] = true
            rtcpHighest[slot] = index
        }
        Self.commit(index, highest: &rtcpHighest[slot], bits: &rtcpBits, base: slot * Self.rtcpWords, words: Self.rtcpWords)
    }

    // MARK: - Replay bitmap

    // The bitmap is a ring over `words * 64` indices: bit (index mod that)
    // is set once the index was accepted. Only indices within `window` of
    // the highest are ever looked at, and all of those are in the ring.

    private static func check(
        _ index: UInt64, highest: UInt64, window: Int, bits: [UInt64], base: Int, words: Int
    ) throws(SRTPError) {
        if index > highest { return }
        guard highest - index < UInt64(window) else { throw .replayOld }
        let bit = Int(index % UInt64(words * 64))
        if bits[base + bit / 64] & (1 << UInt64(bit % 64)) != 0 { throw .replayFail }
    }

    private static func commit(_ index: UInt64, highest: inout UInt64, bits: inout [UInt64], base: Int, words: Int) {
        let ring = UInt64(words * 64)
        if index > highest {
            let advance = index - highest
            if advance >= ring {
                for w in 0..<words { bits[base + w] = 0 }
            } else {
                var i = highest + 1
                while i < index {
                    let bit = Int(i % ring)
                    bits[base + bit / 64] &= ~(1 << UInt64(bit % 64))
                    i += 1
                }
            }
            highest = index
        }
        let bit = Int(index % ring)
        bits[base + bit / 64] |= 1 << UInt64(bit % 64)
    }
}
