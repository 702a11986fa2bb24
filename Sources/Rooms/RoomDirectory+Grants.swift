import RoomProtocol
import SDP

/// Which grant each client message needs (docs/TOKENS.md, "What each
/// grant allows"), and what a resume does to the grants. A refused message
/// gets `forbidden` and changes nothing.
///
/// - `publish`: `publish`, `unpublish`, `mute`; in mesh rooms, a signal
///   whose SDP sends media; WHIP.
/// - `subscribe`: `subscribe`, `unsubscribe`, `set-preference`; in mesh
///   rooms, a signal whose SDP receives media; WHEP.
/// - `call` and `answer-call` need both: a call is a private SFU room where
///   each side publishes to the other.
/// - `admin` grants nothing on this server today (there is no admin API)
///   and implies neither of the others.
extension RoomDirectory {
    enum Need {
        case publish, subscribe, publishAndSubscribe

        func isMet(by g: Grants) -> Bool {
            switch self {
            case .publish: g.publish
            case .subscribe: g.subscribe
            case .publishAndSubscribe: g.publish && g.subscribe
            }
        }

        var refusal: String {
            switch self {
            case .publish: "your token has no publish grant"
            case .subscribe: "your token has no subscribe grant"
            case .publishAndSubscribe: "a call needs a token with both the publish and subscribe grants"
            }
        }
    }

    /// The grant `message` needs from its sender; nil: none (leave, ping,
    /// ending a call, answering the server's own subscriber offer, and
    /// mesh signals, checked per payload by `meshSignalRefusal`).
    static func need(for message: ClientMessage) -> Need? {
        switch message {
        case .publish, .unpublish, .mute: .publish
        case .subscribe, .unsubscribe, .setPreference: .subscribe
        case .call, .answerCall: .publishAndSubscribe
        case .join, .leave, .ping, .declineCall, .hangup, .subscriberAnswer, .meshSignal: nil
        }
    }

    /// The `forbidden` refusal of `message` from `p`, or nil when its
    /// grants allow it.
    func grantRefusal(_ message: ClientMessage, from p: Participant) -> [RoomEffect]? {
        guard let need = Self.need(for: message), !need.isMet(by: p.grants) else { return nil }
        return send(p.id, .error(code: .forbidden, message: need.refusal))
    }

    /// Mesh media goes peer to peer, out of the server's sight, so the
    /// grants are checked on what it relays: a pair may signal only if
    /// media may flow one way at least (one side publishes, the other
    /// subscribes), and a payload with an `sdp` member (the documented
    /// offer/answer shape) may send media only with `publish` (to a target
    /// with `subscribe`) and receive it only with `subscribe`. Each audio
    /// or video m-section counts by its direction (RFC 8866 section 6.7;
    /// no attribute is `sendrecv`); a rejected one (port 0 without
    /// `a=bundle-only`, RFC 8843 section 6) and data channels count as
    /// neither. SDP that does not parse is refused: it cannot be checked.
    func meshSignalRefusal(from p: Participant, to t: Participant, payload: JSONValue) -> String? {
        let oneWay = (p.grants.publish && t.grants.subscribe) || (t.grants.publish && p.grants.subscribe)
        guard oneWay else { return "neither of you may send media to the other (publish and subscribe grants)" }
        guard case .object(let members) = payload, case .string(let text)? = members["sdp"] else { return nil }
        guard let sdp = try? SessionDescription.parse(text) else { return "the payload's sdp does not parse" }
        var sends = false
        var receives = false
        for m in sdp.media where m.media == "audio" || m.media == "video" {
            if m.isRejected { continue }
            switch m.direction {
            case .sendrecv: (sends, receives) = (true, true)
            case .sendonly: sends = true
            case .recvonly: receives = true
            case .inactive: break
            }
        }
        if sends && !p.grants.publish { return "your token has no publish grant: offer or answer recvonly" }
        if sends && !t.grants.subscribe { return "\(t.id) may not receive media: offer or answer recvonly" }
        if receives && !p.grants.subscribe { return "your token has no subscribe grant: offer or answer sendonly" }
        return nil
    }

    /// A resume takes the grants of the token it came with, not the old
    /// ones: what the new token no longer allows stops now. Without
    /// `publish` the participant's tracks are unpublished (the others hear
    /// `track-unpublished`); without `subscribe` it stops receiving; with
    /// a `subscribe` it lacked it receives the room's tracks. Room and
    /// identity need no re-check: the participant was found by the new
    /// token's (identity, room); its signature and expiry were checked by
    /// the shell before `join`.
    mutating func regrant(_ id: ParticipantID, to grants: Grants) -> [RoomEffect] {
        guard let old = participants[id]?.grants, old != grants else { return [] }
        participants[id]?.grants = grants
        var effects: [RoomEffect] = []
        if old.publish && !grants.publish {
            for track in participants[id]?.publisher?.tracks.keys.sorted() ?? [] { effects += unpublish(id, trackID: track) }
        }
        if old.subscribe && !grants.subscribe {
            let subscribed = participants[id]?.subscriber?.subscriptions.keys.sorted() ?? []
            for track in subscribed { effects += unsubscribe(id, from: track) }
        } else if !old.subscribe && grants.subscribe {
            effects += subscribeToExistingTracks(id)
        }
        return effects
    }
}
