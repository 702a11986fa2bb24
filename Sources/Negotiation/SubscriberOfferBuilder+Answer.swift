import SDP
import Wire

extension SubscriberOfferBuilder {
    /// Checks the client's answer to our outstanding offer and returns its
    /// transport parameters. On success the state is `stable` again and the
    /// offered sections count as agreed; on error nothing changes (the
    /// offer stays outstanding; `rollback()` abandons it).
    ///
    /// Rules: as many m-sections as offered with the same mids and media in
    /// the same order (RFC 3264 section 6, RFC 8829 section 5.3.1); a
    /// section may be rejected (port 0: the client decodes none of its
    /// codecs, as Chromium does with H.264 `640c1f`): its track is listed in
    /// `refusedTrackIDs` and the section stays port 0 in later offers (a
    /// section we offered with port 0 must come back so); otherwise
    /// a `sendonly` section answered `recvonly` or `inactive`, an
    /// `inactive` one `inactive` (RFC 3264 section 6.1); only payload types
    /// we offered in that section, and at least our codec's in a section
    /// answered `recvonly`; `a=setup:active` (RFC 8842 section 5.3; we are
    /// the DTLS server); BUNDLE, ICE credentials, fingerprint and
    /// `a=rtcp-mux` as `RemoteTransportParameters` requires.
    package mutating func applyAnswer(_ answer: SessionDescription) throws(NegotiationError) -> RemoteTransportParameters {
        guard state == .haveLocalOffer, let offered else { throw .noOfferOutstanding }
        guard answer.media.count == offered.count else {
            throw .answerMediaCount(expected: offered.count, got: answer.media.count)
        }
        var rejected: [Int] = []
        for (index, (slot, m)) in zip(offered, answer.media).enumerated() {
            // A rejected section may come without its mid.
            guard m.mid == slot.mid || (m.port == 0 && m.mid == nil) else {
                throw .answerMIDMismatch(index: index, expected: slot.mid, got: m.mid)
            }
            guard m.media == slot.kind.rawValue else { throw .answerMediaKindMismatch(mid: slot.mid) }
            // Port 0 with `a=bundle-only` is a bundled section, not a
            // rejected one (RFC 8843 section 7.3: how that RFC's answerer
            // writes every bundled section but the tagged one).
            if m.isRejected {
                if !slot.refused { rejected.append(index) }
                continue
            }
            guard !slot.refused else { throw .answerRevivedSection(mid: slot.mid) }
            let direction = m.direction
            switch (slot.track != nil, direction) {
            case (true, .recvonly), (true, .inactive), (false, .inactive): break
            default: throw .answerDirectionIncompatible(mid: slot.mid, direction)
            }
            let ours = slot.codec.payloadTypes.map { String($0.rawValue) }
            for f in m.formats where !ours.contains(f) { throw .answerFormatNotOffered(mid: slot.mid, format: f) }
            if direction == .recvonly, !m.formats.contains(String(slot.codec.payloadType.rawValue)) {
                throw .answerNoCommonCodec(mid: slot.mid)
            }
        }
        let transport = try RemoteTransportParameters(from: answer, as: .answer)
        var agreed = offered
        refusedTrackIDs = []
        for index in rejected {
            agreed[index].refused = true
            agreed[index].track = nil
            slots[index].refused = true
            if let id = offered[index].track?.trackID {
                refusedTrackIDs.append(id)
                if slots[index].track?.trackID == id { slots[index].track = nil }
            }
        }
        negotiated = agreed
        self.offered = nil
        state = .stable
        return transport
    }
}
