import BandwidthEstimation
import RTP
import Wire

/// The receive side of transport-wide congestion control for one peer
/// transport (draft-holmer-rmcat-transport-wide-cc-extensions-01), composed
/// once for the server's publisher transports and roombot's subscriber
/// transport: the id the session maps the transport-wide sequence number
/// to, and a `TransportFeedbackRecorder` of the arrivals.
///
/// Every packet on the transport counts, retransmissions and padding
/// probes included (the sender judges its probes on them), read from the
/// header as it arrived: before an RTX packet is restored, and in clear
/// (SRTP leaves the header so, RFC 3711 section 3.1). A class because the
/// recorder owns its ring (`~Copyable`) and both owners keep one per
/// transport.
package final class TransportWideArrivals {
    /// The extension id (one per BUNDLE session, RFC 8285 section 6); nil
    /// until the session maps it, and packets then count for nothing.
    package var extensionID: UInt8?
    private var recorder: TransportFeedbackRecorder
    /// Feedback packets written.
    package private(set) var feedbackWritten = 0

    package init(reporterSSRC: SSRC, extensionID: UInt8? = nil) {
        recorder = TransportFeedbackRecorder(senderSSRC: reporterSSRC)
        self.extensionID = extensionID
    }

    /// One packet, `packet` its bytes as received, at `arrival`.
    package func record(_ header: RTPHeader, packet: RawSpan, arrival: Instant) {
        guard let id = extensionID, let range = header.extensionValueRange(id: id, in: packet), range.count == 2 else {
            return
        }
        let number = packet.withUnsafeBytes { UInt16($0[range.lowerBound]) << 8 | UInt16($0[range.lowerBound + 1]) }
        recorder.record(transportSequenceNumber: number, arrival: arrival)
    }

    /// When feedback is next due; nil while nothing new arrived.
    package var nextFeedback: Instant? { recorder.nextFeedback }

    /// The feedback due at `now`, each packet a compound of its own handed
    /// to `emit` from the recorder's kept storage (no allocation). The
    /// media SSRC field names one of the peer's streams: transport-wide
    /// feedback does not use it, but it must be a sender's SSRC.
    @discardableResult
    package func writeFeedback(mediaSSRC: SSRC, now: Instant, emit: (UnsafeRawBufferPointer) -> Void) -> Int {
        let written = recorder.writeFeedback(mediaSSRC: mediaSSRC, now: now, emit: emit)
        feedbackWritten &+= written
        return written
    }
}
