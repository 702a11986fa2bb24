import SDP
import Wire

/// Why a description from the client cannot be used, or why the subscriber
/// builder refused a step. Every case names the offending m-section where
/// there is one, so the signalling layer can tell the client precisely.
package enum NegotiationError: Error, Equatable, Sendable {
    /// No `a=group:BUNDLE` at session level: we run one transport per
    /// PeerConnection (RFC 8843, RFC 8829 section 4.1.1 max-bundle).
    case missingBundle
    /// A BUNDLE group names a mid that no m-section carries.
    case bundleNamesUnknownMID(MID)
    /// No `a=ice-ufrag` / `a=ice-pwd` at media or session level (RFC 8839 section 5.4).
    case missingICECredentials(mid: MID?)
    /// No `a=fingerprint` we can verify: none at all, or only hash functions
    /// we do not support (RFC 8122 section 5).
    case missingFingerprint(mid: MID?)
    /// No `a=setup` (RFC 8842 section 5 makes it mandatory with DTLS).
    case missingSetup(mid: MID?)
    /// The client's DTLS role conflicts with ours: we are always the DTLS
    /// server (`passive`), so the client must be able to be `active`.
    case setupRoleConflict(mid: MID?, SetupRole)
    /// An RTP m-section without `a=rtcp-mux`: we demultiplex RTP and RTCP on
    /// one port and never offer a separate RTCP candidate (RFC 8829 section 5.1.3).
    case rtcpMuxRequired(mid: MID?)
    /// An m-section without `a=mid` (RFC 8829 section 5.2.1 requires one).
    case missingMID(index: Int)
    /// Two m-sections carry the same mid (RFC 5888 section 4).
    case duplicateMID(MID)
    /// A publish offer in which no m-section sends media we accept.
    case nothingToPublish
    /// A playback (WHEP) offer in which no m-section receives a codec we
    /// forward.
    case nothingToPlay
    /// The subscriber builder has no m-section to offer.
    case nothingToOffer
    /// `createOffer` while our previous offer still waits for its answer.
    case offerOutstanding
    /// `applyAnswer` or `rollback` without an outstanding offer.
    case noOfferOutstanding
    /// `add(track:)` with a track id already placed.
    case duplicateTrack(String)
    /// `remove(trackID:)` with a track id we do not send.
    case unknownTrack(String)
    /// The answer's m-section count differs from our offer's (RFC 3264 section 6).
    case answerMediaCount(expected: Int, got: Int)
    /// The answer's m-section at `index` has another mid than our offer's.
    case answerMIDMismatch(index: Int, expected: MID, got: MID?)
    /// The answer's m-section kind differs from the offer's.
    case answerMediaKindMismatch(mid: MID)
    /// The answer rejected (port 0) an m-section we offered.
    case answerRejectedSection(mid: MID)
    /// The answer accepts a section we offered with port 0 (one the client
    /// rejected before: it stays rejected, RFC 8829 section 5.3.1).
    case answerRevivedSection(mid: MID)
    /// The answer's direction cannot answer ours (RFC 3264 section 6.1).
    case answerDirectionIncompatible(mid: MID, Direction)
    /// The answer lists a payload type we did not offer in that m-section
    /// (RFC 3264 section 6.1), or none of ours.
    case answerFormatNotOffered(mid: MID, format: String)
    /// The answer accepts an active m-section without any of our codecs.
    case answerNoCommonCodec(mid: MID)

    /// One line for logs and for the client.
    package var reason: String {
        func m(_ mid: MID?) -> String { mid.map { "m-section \($0)" } ?? "session" }
        switch self {
        case .missingBundle:
            // docs/WHIP_WHEP.md, "BUNDLE is required": a section per
            // transport (webrtcbin's default bundle-policy=none) is refused.
            return "no a=group:BUNDLE: one bundled transport is required (offer with bundle-policy max-bundle or max-compat)"
        case .bundleNamesUnknownMID(let mid): return "the BUNDLE group names mid \(mid), which no m-section has"
        case .missingICECredentials(let mid): return "\(m(mid)): no a=ice-ufrag/a=ice-pwd"
        case .missingFingerprint(let mid): return "\(m(mid)): no usable a=fingerprint (sha-1, sha-224...sha-512)"
        case .missingSetup(let mid): return "\(m(mid)): no a=setup"
        case .setupRoleConflict(let mid, let role):
            return "\(m(mid)): a=setup:\(role.rawValue) conflicts with our DTLS server role (we are passive)"
        case .rtcpMuxRequired(let mid): return "\(m(mid)): a=rtcp-mux is required"
        case .missingMID(let index): return "m-section #\(index): no a=mid"
        case .duplicateMID(let mid): return "mid \(mid) is used twice"
        case .nothingToPublish: return "the offer sends no audio or video we accept"
        case .nothingToPlay: return "the offer receives no audio or video we forward (Opus, VP8, H264)"
        case .nothingToOffer: return "no m-section to offer"
        case .offerOutstanding: return "an offer is already waiting for its answer"
        case .noOfferOutstanding: return "no offer is waiting for an answer"
        case .duplicateTrack(let id): return "track \(id) is already sent"
        case .unknownTrack(let id): return "track \(id) is not sent"
        case .answerMediaCount(let expected, let got): return "the answer has \(got) m-sections, the offer \(expected)"
        case .answerMIDMismatch(let index, let expected, let got):
            return "answer m-section #\(index) has mid \(got.map(\.description) ?? "none"), expected \(expected)"
        case .answerMediaKindMismatch(let mid): return "m-section \(mid): the answer changed the media type"
        case .answerRejectedSection(let mid): return "m-section \(mid): the answer rejected it (port 0)"
        case .answerRevivedSection(let mid): return "m-section \(mid): rejected before, offered with port 0, answered with a port"
        case .answerDirectionIncompatible(let mid, let d):
            return "m-section \(mid): a=\(d.rawValue) does not answer our offer"
        case .answerFormatNotOffered(let mid, let format): return "m-section \(mid): payload type \(format) was not offered"
        case .answerNoCommonCodec(let mid): return "m-section \(mid): the answer accepts none of our codecs"
        }
    }
}
