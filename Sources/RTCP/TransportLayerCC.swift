import Wire

/// The reception status of one packet in transport-wide congestion control
/// feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01 section
/// 3.1.1), with its receive delta in 250 microsecond ticks.
///
/// A received packet's delta is relative to the previous received packet
/// in the feedback, or to the reference time for the first one. Small
/// deltas are one unsigned byte (0 to 63.75 ms); large ones two signed bytes
/// (-8192 ms to 8191.75 ms).
package enum TransportCCStatus: Equatable, Hashable, Sendable {
    case notReceived
    case receivedSmallDelta(UInt8)
    case receivedLargeDelta(Int16)

    /// One tick of receive delta.
    package static let tick: Duration = .microseconds(250)

    /// The 2-bit status symbol: 0 not received, 1 small delta, 2 large delta.
    package var symbol: UInt8 {
        switch self {
        case .notReceived: 0
        case .receivedSmallDelta: 1
        case .receivedLargeDelta: 2
        }
    }

    /// The delta in ticks, nil when not received.
    package var deltaTicks: Int32? {
        switch self {
        case .notReceived: nil
        case .receivedSmallDelta(let t): Int32(t)
        case .receivedLargeDelta(let t): Int32(t)
        }
    }

    package var receiveDelta: Duration? { deltaTicks.map { .microseconds(Int64($0) * 250) } }
}

/// One entry of parsed feedback: a transport-wide sequence number and its
/// status.
package struct TransportCCPacketResult: Equatable, Sendable {
    package var sequenceNumber: UInt16
    package var status: TransportCCStatus
    /// Arrival time in the feedback sender's time base: reference time plus
    /// every delta up to and including this one. Nil when not received.
    package var arrival: Duration?

    package init(sequenceNumber: UInt16, status: TransportCCStatus, arrival: Duration?) {
        self.sequenceNumber = sequenceNumber
        self.status = status
        self.arrival = arrival
    }

    package var receiveDelta: Duration? { status.receiveDelta }
}

/// Transport-wide congestion control feedback: RTPFB (205) with FMT 15
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1).
///
///     |V=2|P|  FMT=15 |    PT=205     |           length              |
///     |                     SSRC of packet sender                     |
///     |                      SSRC of media source                     |
///     |      base sequence number     |      packet status count      |
///     |                 reference time                | fb pkt. count |
///     |          packet chunk         |         packet chunk          |
///     .                                                               .
///     |         packet chunk          |  recv delta   |  recv delta   |
///     .                                                               .
///     |           recv delta          |  recv delta   | zero padding  |
///
/// Packet chunks are run-length (a symbol repeated up to 8191 times) or
/// status vectors (14 one-bit or 7 two-bit symbols); they cover exactly
/// `packet status count` statuses, any vector slots beyond that being
/// ignored. Receive deltas follow, one per received packet.
///
/// This is the expanded value that builders fill and serialize. Parsing
/// yields `TransportCCFeedback` instead, which keeps the chunks in the
/// packet and walks them: a few bytes can claim 65,535 statuses, and the
/// media path must not pay for them (issue #12).
///
/// Serializing chooses its own chunks (see `serialize(into:)`), so a
/// re-encoding expands to equal statuses, not necessarily equal bytes.
package struct TransportLayerCC: Equatable, Sendable {
    package static let format: UInt8 = 15
    /// Reference time unit.
    package static let referenceTimeUnit: Duration = .milliseconds(64)
    /// Statuses a run-length chunk can carry.
    static let maximumRunLength = 8191

    package var senderSSRC: SSRC
    package var mediaSSRC: SSRC
    package var baseSequenceNumber: UInt16
    /// 24-bit signed, in 64 ms units, sign-extended.
    package var referenceTime: Int32
    /// Feedback packet count: increments per feedback sent, wraps at 256.
    package var feedbackPacketCount: UInt8
    /// Statuses of packets base, base + 1, ... (wrapping), at most 65535.
    package var statuses: [TransportCCStatus]

    package init(
        senderSSRC: SSRC, mediaSSRC: SSRC, baseSequenceNumber: UInt16, referenceTime: Int32,
        feedbackPacketCount: UInt8, statuses: [TransportCCStatus]
    ) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.baseSequenceNumber = baseSequenceNumber
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.statuses = statuses
    }

    /// The reference time as a duration in the feedback sender's time base.
    package var referenceTimeOffset: Duration { Self.referenceTimeUnit * Int(referenceTime) }

    /// (sequence number, status, receive delta and arrival) per packet.
    package var packets: [TransportCCPacketResult] {
        var out: [TransportCCPacketResult] = []
        out.reserveCapacity(statuses.count)
        var arrival = referenceTimeOffset
        for (i, status) in statuses.enumerated() {
            var at: Duration?
            if let delta = status.receiveDelta {
                arrival += delta
                at = arrival
            }
            out.append(
                TransportCCPacketResult(
                    sequenceNumber: baseSequenceNumber &+ UInt16(truncatingIfNeeded: i),
                    status: status, arrival: at))
        }
        return out
    }
}
