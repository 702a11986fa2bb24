import RTCP
import Wire

/// A keyframe request to send upstream to the publisher.
package enum KeyframeRequest: Equatable, Sendable {
    case pli(PictureLossIndication)
    case fir(FullIntraRequest)
}

/// Which kind of request a subscriber sent (or the SFU wants).
package enum KeyframeRequestKind: Equatable, Sendable {
    /// Picture Loss Indication (RFC 4585 section 6.3.1).
    case pli
    /// Full Intra Request (RFC 5104 section 4.3.1).
    case fir
}

/// What the throttle decided for one request.
package enum KeyframeRequestDecision: Equatable, Sendable {
    case send(KeyframeRequest)
    case suppress
}

/// Collapses keyframe requests from many subscribers of one published
/// track into at most one request upstream per `interval`.
///
/// Every subscriber that joins, loses a packet or switches layers asks for
/// a keyframe; forwarding each one would make the publisher send keyframes
/// back to back, and one keyframe serves them all. 500 ms is the default:
/// about one round trip plus the time an encoder takes to produce the
/// keyframe, inside the 200 ms to 1 s range SFUs built on libwebrtc use.
/// A request inside the window is suppressed, not deferred: a subscriber
/// still waiting after the keyframe arrives asks again.
///
/// FIR sequence numbers (RFC 5104 section 4.3.1.1) increase by one for
/// each FIR sent, modulo 256, starting at 0; a suppressed FIR consumes none.
/// PLI and FIR share one window.
package struct KeyframeRequestThrottle: Sendable {
    package static let defaultInterval: Duration = .milliseconds(500)

    /// Our SSRC as the sender of the feedback.
    package var senderSSRC: SSRC
    /// The publisher's media SSRC the requests are about (update it when
    /// the publisher restarts or a layer changes).
    package var mediaSSRC: SSRC
    package var interval: Duration
    package private(set) var lastSent: Instant?
    /// The sequence number the next FIR will carry.
    package private(set) var nextFIRSequenceNumber: UInt8 = 0

    package init(senderSSRC: SSRC, mediaSSRC: SSRC, interval: Duration = Self.defaultInterval) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.interval = interval
    }

    /// Decides whether to send a request of `kind` at `now`.
    package mutating func request(_ kind: KeyframeRequestKind, now: Instant) -> KeyframeRequestDecision {
        if let last = lastSent, now < last + interval { return .suppress }
        lastSent = now
        switch kind {
        case .pli:
            return .send(.pli(PictureLossIndication(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC)))
        case .fir:
            let sequenceNumber = nextFIRSequenceNumber
            nextFIRSequenceNumber &+= 1
            // RFC 5104 section 4.3.1.2: the media source SSRC field is 0;
            // the target is named in the FCI entry.
            return .send(
                .fir(
                    FullIntraRequest(
                        senderSSRC: senderSSRC, entries: [FIREntry(ssrc: mediaSSRC, sequenceNumber: sequenceNumber)])))
        }
    }

    /// When the next request would be sent rather than suppressed.
    package var nextAllowed: Instant? { lastSent.map { $0 + interval } }
}
