import BandwidthEstimation
import BotMedia
import RTCP
import RTP
import SDP
import Wire

/// Transport-wide congestion control feedback from a subscriber
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1), as a
/// browser sends it: the server's send-side estimate for this subscriber
/// (`SubscriberLink`) grows only on this feedback, and the allocator
/// gives a subscriber the upper simulcast layers only when its estimate
/// has room for them. Without it a bot stays on the layer the start
/// estimate allows, which is not the load a browser puts on the server.
///
/// The same `TransportFeedbackRecorder` the server uses for its
/// publishers: every packet on the subscriber transport counts, RTX and
/// padding probes included (the server's probes are judged on them).
final class SubscriberFeedback {
    /// The id the subscriber session maps the transport-wide sequence
    /// number extension to.
    let extensionID: UInt8
    private var recorder: TransportFeedbackRecorder
    private(set) var sent = 0

    init(extensionID: UInt8, senderSSRC: SSRC) {
        self.extensionID = extensionID
        recorder = TransportFeedbackRecorder(senderSSRC: senderSSRC)
    }

    /// One packet (its RTP header in clear: SRTP leaves it so, RFC 3711
    /// section 3.1) arrived at `arrival`.
    func record(_ header: RTPHeader, packet: RawSpan, arrival: Instant) {
        guard let range = header.extensionValueRange(id: extensionID, in: packet), range.count == 2 else { return }
        var reader = ByteReader(packet, offset: range.lowerBound)
        guard let number = try? reader.uint16(or: BotMediaError.truncated) else { return }
        recorder.record(transportSequenceNumber: number, arrival: arrival)
    }

    var nextDeadline: Instant? { recorder.nextFeedback }

    /// The feedback packets due at `now`, each a compound of its own,
    /// handed to `emit`.
    func send(mediaSSRC: SSRC, now: Instant, emit: (UnsafeRawBufferPointer) -> Void) {
        sent += recorder.writeFeedback(mediaSSRC: mediaSSRC, now: now, emit: emit)
    }

    /// The transport-wide sequence number's id in `description` (BUNDLE:
    /// one id for the session, read from the first section that maps it).
    static func extensionID(in description: SessionDescription) -> UInt8? {
        description.media.lazy.compactMap { $0.extensionID(for: ExtensionMap.transportWideCC) }.first
    }
}

extension Bot {
    /// Starts transport-cc feedback on the subscriber transport once the
    /// session maps the extension; kept across renegotiations (the id of a
    /// BUNDLE session does not change).
    func useTransportFeedback(in description: SessionDescription) {
        guard feedback == nil, let id = SubscriberFeedback.extensionID(in: description) else { return }
        feedback = SubscriberFeedback(extensionID: id, senderSSRC: reportSSRC)
    }

    /// The feedback due now, sent on the subscriber transport; the media
    /// SSRC field names one of the server's streams (the field is unused
    /// by transport-wide feedback but must be a sender SSRC).
    func sendTransportFeedback(now: Instant) {
        guard let f = feedback, let due = f.nextDeadline, now >= due, let s = subscriber, s.isConnected else { return }
        let media = announced.keys.min { $0.rawValue < $1.rawValue } ?? SSRC(0)
        f.send(mediaSSRC: media, now: now) { sendRTCP($0, on: s) }
        record.transportFeedbackSent = f.sent
    }
}
