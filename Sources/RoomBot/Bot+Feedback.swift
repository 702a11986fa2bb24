import PeerSession
import RTCP
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
/// The same `TransportWideArrivals` the server keeps for each publisher
/// transport: every packet on the subscriber transport counts, RTX and
/// padding probes included (the server's probes are judged on them).
extension Bot {
    /// The transport-wide sequence number's id in `description` (BUNDLE:
    /// one id for the session, read from the first section that maps it).
    static func transportWideExtensionID(in description: SessionDescription) -> UInt8? {
        description.media.lazy.compactMap { $0.extensionID(for: ExtensionMap.transportWideCC) }.first
    }

    /// Starts transport-cc feedback on the subscriber transport once the
    /// session maps the extension; kept across renegotiations (the id of a
    /// BUNDLE session does not change).
    func useTransportFeedback(in description: SessionDescription) {
        guard arrivals == nil, let id = Self.transportWideExtensionID(in: description) else { return }
        arrivals = TransportWideArrivals(reporterSSRC: reportSSRC, extensionID: id)
    }

    /// The feedback due now, sent on the subscriber transport; the media
    /// SSRC field names one of the server's streams (the field is unused
    /// by transport-wide feedback but must be a sender SSRC).
    func sendTransportFeedback(now: Instant) {
        guard let a = arrivals, let due = a.nextFeedback, now >= due, let s = subscriber, s.isConnected else { return }
        let media = announced.keys.min { $0.rawValue < $1.rawValue } ?? SSRC(0)
        a.writeFeedback(mediaSSRC: media, now: now) { sendRTCP($0, on: s) }
        record.transportFeedbackSent = a.feedbackWritten
    }
}
