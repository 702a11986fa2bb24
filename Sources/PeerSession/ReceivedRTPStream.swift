import LossRecovery
import RTCP
import RTP
import RTPStreams
import Wire

/// One RTP stream a peer sends us (one SSRC), composed once for the two
/// receivers of media in the project: the server's publisher layers
/// (MediaRouter's `IncomingLayer`) and roombot's received tracks.
///
/// It keeps what RFC 3550 reports are made of (`ReceptionStatistics`:
/// loss, jitter, the LSR/DLSR echo of the source's last SR, sections
/// 6.4.1 and appendix A) and, where this side repairs the stream's
/// losses, a `NACKGenerator` (RFC 4585 section 6.2.1: a reorder wait
/// before the first NACK, retries each round trip, and a keyframe request
/// once a gap is beyond repair).
///
/// A retransmission reaches `received` restored to the packet it repairs
/// (`RTXPacket.restore`, RFC 4588 section 4) and flagged: it counts as
/// received (appendix A.3 counts duplicates too) and fills its gap
/// without moving the highest sequence number.
///
/// Sans-IO and allocation-free per packet: `pollRepairs` writes into the
/// caller's kept array.
package struct ReceivedRTPStream: Sendable {
    package private(set) var reception: ReceptionStatistics
    /// Nil where this side does not NACK the stream: audio (no repair
    /// stream is negotiated for it), a relayed track (the source worker,
    /// which has the publisher's transport, NACKs its losses) and
    /// roombot's light subscribers.
    private var repairs: NACKGenerator?

    package init(ssrc: SSRC, clockRate: UInt32, repairsLoss: Bool) {
        reception = ReceptionStatistics(ssrc: ssrc, clockRate: clockRate)
        repairs = repairsLoss ? NACKGenerator() : nil
    }

    package var ssrc: SSRC { reception.ssrc }
    package var repairsLoss: Bool { repairs != nil }

    /// One packet of this SSRC (a restored retransmission flagged so).
    package mutating func received(_ header: RTPHeader, arrival: Instant, isRetransmission: Bool) {
        received(
            sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, arrival: arrival,
            isRetransmission: isRetransmission)
    }

    package mutating func received(sequenceNumber: UInt16, timestamp: UInt32, arrival: Instant, isRetransmission: Bool) {
        reception.record(sequenceNumber: sequenceNumber, timestamp: timestamp, arrival: arrival)
        repairs?.received(sequenceNumber: sequenceNumber, arrival: arrival, isRetransmission: isRetransmission)
    }

    /// When `pollRepairs` has something to do; nil while nothing is missing.
    package var nextRepairDeadline: Instant? { repairs?.nextDeadline }

    /// Sequence numbers waiting for a retransmission.
    package var missingCount: Int { repairs?.missingCount ?? 0 }

    /// The sequence numbers to NACK now, written into `numbers` (emptied
    /// first, its capacity kept). True when a gap is beyond repair and the
    /// receiver needs a keyframe instead (RFC 4585 section 6.3.1).
    package mutating func pollRepairs(now: Instant, roundTripTime: Duration?, into numbers: inout [UInt16]) -> Bool {
        numbers.removeAll(keepingCapacity: true)
        return repairs?.poll(now: now, roundTripTime: roundTripTime, into: &numbers) ?? false
    }

    /// An SR from the source: its NTP time and arrival for the LSR/DLSR of
    /// our next report block (RFC 3550 section 6.4.1).
    package mutating func senderReport(_ info: SenderInfo, arrival: Instant) {
        reception.recordSenderReport(info, arrival: arrival)
    }

    /// The report block about this stream, once per report sent (it starts
    /// the next interval of the fraction lost); nil before the first packet.
    package mutating func makeReportBlock(now: Instant) -> ReceptionReport? {
        reception.makeReportBlock(now: now)
    }
}
