import RTCP
import Wire

/// What `ReceptionStatistics.record` made of one packet (RFC 3550 appendix
/// A.1).
package enum ReceivedPacketKind: Equatable, Sendable {
    /// The first packet, or one that advanced the highest sequence number
    /// (possibly past a gap of fewer than `maxDropout` packets).
    case inOrder
    /// Up to `maxMisorder` behind the highest and not seen before.
    case reordered
    /// A sequence number already received (within the last 128).
    case duplicate
    /// A jump too large to trust; not counted. Two such packets in sequence
    /// are a restart (`restarted`).
    case outOfRange
    /// The source restarted its sequence numbering: the counters began
    /// again at this packet.
    case restarted
}

/// Reception statistics of one incoming SSRC: loss, jitter and the LSR/DLSR
/// echo for reception report blocks (RFC 3550 section 6.4.1, appendix A.1,
/// A.3 and A.8).
///
/// Invariants and choices:
/// - Sequence numbers follow appendix A.1: a packet fewer than `maxDropout`
///   ahead advances; one at most `maxMisorder` behind is late; anything else
///   is distrusted until a second packet continues it, which restarts the
///   counters (the source reset its numbering). There is no initial
///   probation: an SFU only sees SSRCs that signalling and SRTP vouched for.
/// - "Received" counts every accepted packet, duplicates included, as
///   appendix A.3 says; cumulative loss can therefore go negative.
///   Duplicates are also counted apart (`duplicates`).
/// - Jitter (appendix A.8) is updated on in-order packets only; a late
///   packet's transit time says more about reordering than about jitter.
/// - Nothing allocates; `record` is safe to call per media packet.
package struct ReceptionStatistics: Sendable {
    /// Appendix A.1's MAX_DROPOUT: the largest forward jump accepted at once.
    package static let maxDropout: UInt16 = 3000
    /// Appendix A.1's MAX_MISORDER: how far behind a late packet may be.
    package static let maxMisorder: UInt16 = 100

    package let ssrc: SSRC
    /// RTP clock rate in Hz, for jitter in timestamp units.
    package let clockRate: UInt32

    /// Accepted packets since the last (re)start, duplicates included.
    package private(set) var packetsReceived: UInt64 = 0
    package private(set) var duplicates: UInt64 = 0
    package private(set) var reordered: UInt64 = 0
    /// Packets ignored as untrusted jumps (`ReceivedPacketKind.outOfRange`).
    package private(set) var outOfRange: UInt64 = 0
    package private(set) var restarts: UInt64 = 0

    private var unwrapper = SequenceNumberUnwrapper()
    private var started = false
    private var maxSequence: UInt16 = 0
    /// Extended values from `unwrapper` (which starts one 2^16 cycle up).
    private var baseExtended: UInt64 = 0
    private var highestExtended: UInt64 = 0
    /// After an untrusted jump, the sequence number that would confirm it.
    private var badSequence: UInt16?
    /// Bit k set: `highest - k` was received (k < 128 > maxMisorder).
    private var history: (low: UInt64, high: UInt64) = (0, 0)

    private var expectedPrior: UInt64 = 0
    private var receivedPrior: UInt64 = 0

    /// Jitter times 16, as in appendix A.8's integer form.
    private var jitterQ4: UInt64 = 0
    private var lastTransit: UInt32?
    private var arrivalOrigin: Instant?

    private var lastSenderReport: (compactNTP: UInt32, arrival: Instant)?

    package init(ssrc: SSRC, clockRate: UInt32) {
        self.ssrc = ssrc
        self.clockRate = clockRate
    }

    /// Whether any packet has been accepted (a report block is meaningful).
    package var hasReceived: Bool { started }

    /// Extended highest sequence number as reported: cycles count from 0 at
    /// the first packet (appendix A.1), truncated to 32 bits.
    package var extendedHighestSequenceNumber: UInt32 {
        UInt32(truncatingIfNeeded: highestExtended &- (1 << 16))
    }

    /// Packets expected since the (re)start: highest - base + 1.
    package var expected: UInt64 { started ? highestExtended - baseExtended + 1 : 0 }

    /// Expected minus received, unclamped (negative with duplicates).
    package var cumulativeLost: Int64 { Int64(truncatingIfNeeded: expected) - Int64(truncatingIfNeeded: packetsReceived) }

    /// Interarrival jitter in timestamp units (appendix A.8).
    package var jitter: UInt32 { UInt32(clamping: jitterQ4 >> 4) }

    /// Records one RTP packet of this SSRC (appendix A.1 `update_seq`, A.8).
    @discardableResult
    package mutating func record(sequenceNumber: UInt16, timestamp: UInt32, arrival: Instant) -> ReceivedPacketKind {
        guard started else {
            begin(at: sequenceNumber)
            packetsReceived = 1
            updateJitter(timestamp: timestamp, arrival: arrival)
            return .inOrder
        }
        let delta = sequenceNumber &- maxSequence
        if delta == 0 {
            packetsReceived &+= 1
            duplicates &+= 1
            return .duplicate
        }
        if delta < Self.maxDropout {
            let extended = unwrapper.unwrap(sequenceNumber)
            shiftHistory(by: extended - highestExtended)
            highestExtended = extended
            maxSequence = sequenceNumber
            badSequence = nil
            packetsReceived &+= 1
            updateJitter(timestamp: timestamp, arrival: arrival)
            return .inOrder
        }
        if delta <= UInt16.max - Self.maxMisorder {
            // A very large jump. Two in a row mean the source restarted.
            if let bad = badSequence, bad == sequenceNumber {
                restarts &+= 1
                begin(at: sequenceNumber)
                packetsReceived = 1
                lastTransit = nil
                updateJitter(timestamp: timestamp, arrival: arrival)
                return .restarted
            }
            badSequence = sequenceNumber &+ 1
            outOfRange &+= 1
            return .outOfRange
        }
        // Late by 1 ... maxMisorder.
        let behind = Int(maxSequence &- sequenceNumber)
        packetsReceived &+= 1
        if historyContains(behind) {
            duplicates &+= 1
            return .duplicate
        }
        markHistory(behind)
        reordered &+= 1
        let extended = unwrapper.unwrap(sequenceNumber)
        if extended < baseExtended { baseExtended = extended }
        return .reordered
    }

    /// Records an SR from this source for the LSR/DLSR echo (RFC 3550
    /// section 6.4.1): its compact NTP time and when it arrived.
    package mutating func recordSenderReport(compactNTP: UInt32, arrival: Instant) {
        lastSenderReport = (compactNTP, arrival)
    }

    package mutating func recordSenderReport(_ info: SenderInfo, arrival: Instant) {
        recordSenderReport(compactNTP: info.compactNTP, arrival: arrival)
    }

    /// The report block for this source at `now`, or nil before the first
    /// packet. Starts a new interval for the fraction lost (appendix A.3):
    /// call it once per report actually sent.
    package mutating func makeReportBlock(now: Instant) -> ReceptionReport? {
        guard started else { return nil }
        let expectedNow = expected
        let expectedInterval = expectedNow &- expectedPrior
        let receivedInterval = packetsReceived &- receivedPrior
        expectedPrior = expectedNow
        receivedPrior = packetsReceived
        var fraction: UInt8 = 0
        if expectedInterval > 0, expectedInterval > receivedInterval {
            let lostInterval = expectedInterval - receivedInterval
            fraction = UInt8(clamping: (lostInterval << 8) / expectedInterval)
        }
        let range = ReceptionReport.cumulativeLostRange
        let lost = Int32(clamping: min(max(cumulativeLost, Int64(range.lowerBound)), Int64(range.upperBound)))
        var lsr: UInt32 = 0
        var dlsr: UInt32 = 0
        if let sr = lastSenderReport {
            lsr = sr.compactNTP
            dlsr = (now - sr.arrival).rtcpDelayUnits
        }
        return ReceptionReport(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: lost,
            extendedHighestSequenceNumber: extendedHighestSequenceNumber, jitter: jitter,
            lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
    }

    // MARK: - Internals

    /// Appendix A.1 `init_seq`: counters start over at `sequenceNumber`.
    private mutating func begin(at sequenceNumber: UInt16) {
        started = true
        unwrapper = SequenceNumberUnwrapper()
        let extended = unwrapper.unwrap(sequenceNumber)
        baseExtended = extended
        highestExtended = extended
        maxSequence = sequenceNumber
        badSequence = nil
        history = (1, 0)
        expectedPrior = 0
        receivedPrior = 0
    }

    /// Appendix A.8: D = (Rj - Ri) - (Sj - Si); J += (|D| - J) / 16, with
    /// arrival times converted to timestamp units. Arithmetic is modulo
    /// 2^32 like the timestamps, so wraps cancel.
    private mutating func updateJitter(timestamp: UInt32, arrival: Instant) {
        let origin = arrivalOrigin ?? arrival
        arrivalOrigin = origin
        let arrivalUnits = UInt32(truncatingIfNeeded: (arrival - origin).rtpTicks(clockRate: clockRate))
        let transit = arrivalUnits &- timestamp
        if let last = lastTransit {
            let d = UInt64(Int32(bitPattern: transit &- last).magnitude)
            jitterQ4 = jitterQ4 &+ d &- ((jitterQ4 &+ 8) >> 4)
        }
        lastTransit = transit
    }

    private mutating func shiftHistory(by delta: UInt64) {
        if delta >= 128 {
            history = (0, 0)
        } else if delta >= 64 {
            history = (0, history.low << (delta - 64))
        } else if delta > 0 {
            history = (history.low << delta, history.high << delta | history.low >> (64 - delta))
        }
        history.low |= 1
    }

    private func historyContains(_ behind: Int) -> Bool {
        behind < 64 ? history.low >> behind & 1 == 1 : history.high >> (behind - 64) & 1 == 1
    }

    private mutating func markHistory(_ behind: Int) {
        if behind < 64 { history.low |= 1 << behind } else { history.high |= 1 << (behind - 64) }
    }
}
