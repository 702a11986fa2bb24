import RTP
import SDP
import Wire

/// A track the SFU can send to a playback client: the publisher's codec
/// (with the publisher's payload type), the SSRC we send it with, and the
/// SSRC of its RTX stream (RFC 4588), used where the client offers RTX.
package struct PlaybackSource: Equatable, Sendable {
    package var trackID: String
    /// `a=msid` stream id (the publisher's participant, say).
    package var streamID: String
    /// The publisher's codec, as its offer described it.
    package var codec: CodecDescription
    package var ssrc: SSRC
    /// Our RTX stream for this track: NACKed packets are resent on it,
    /// under its own sequence numbers (docs/TRANSPORT.md, "One index, one
    /// packet"). Nil: the client gets no RTX even if it offers it.
    package var rtxSSRC: SSRC?
    package var cname: String

    package init(
        trackID: String, streamID: String, codec: CodecDescription, ssrc: SSRC, rtxSSRC: SSRC? = nil, cname: String
    ) {
        self.trackID = trackID
        self.streamID = streamID
        self.codec = codec
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.cname = cname
    }

    package var kind: MediaKind { codec.codec.kind }
}

/// The answer to a playback offer and what goes in it.
package struct PlaybackAnswer: Equatable, Sendable {
    /// One placed source: the m-section it is sent in and the track to
    /// forward, with the client's payload type and our SSRC.
    package struct Assignment: Equatable, Sendable {
        package var mid: MID
        package var track: OutgoingTrack
    }

    package var description: SessionDescription
    /// In the offer's m-section order.
    package var assignments: [Assignment]
    /// The header-extension ids the worker writes on this client's
    /// transport: the client's own, as answered (empty when it offered
    /// none of `PlaybackOffer.egressURIs`).
    package var headerExtensions: HeaderExtensionIDs
}

/// Answers playback clients' offers (WHEP): the client offers `recvonly`
/// sections and we send, the reverse of our subscriber transport where the
/// server offers. Like `PublishAnswerer` it keeps the `o=` session id and
/// raises the version per answer (RFC 8829 section 5.3.1).
package struct PlaybackAnswerer: Sendable {
    package let sessionID: UInt64
    /// The version of the last answer made; 0 before the first.
    package private(set) var sessionVersion: UInt64 = 0

    /// `sessionID` comes from the caller (random), cut to 63 bits.
    package init(sessionID: UInt64) {
        self.sessionID = sessionID & 0x7FFF_FFFF_FFFF_FFFF
    }

    /// The answer to `offer`, sending `sources`:
    /// - each receiving m-section, in offer order, takes the first source
    ///   not yet placed of its kind whose codec the client can decode
    ///   (`CodecDescription.canBeDecoded(by:)`); it is answered `sendonly`
    ///   with only that codec under the client's payload type (the
    ///   forwarder rewrites the payload type per subscriber), `a=msid`, and
    ///   `a=ssrc` cname/msid lines (clients that route by SSRC need them);
    ///   where the client offered RTX for that codec (`apt=`) and the
    ///   source has an RTX SSRC, its RTX payload type too (the client's
    ///   number), with `a=ssrc-group:FID` pairing our two SSRCs: the only
    ///   stream NACKed packets are resent on (RFC 4588; docs/TRANSPORT.md,
    ///   "One index, one packet"); without it, no RTX;
    /// - sections left without a source, and `sendonly`/`inactive` ones,
    ///   are answered `inactive` with the client's first usable codec, port
    ///   kept and still bundled (RFC 3264 section 6.1);
    /// - rejected sections get port 0 and leave the BUNDLE group, as in
    ///   `PublishAnswerer`;
    /// - session level: BUNDLE, `a=ice-lite`, `a=fingerprint` (as in
    ///   `PublishAnswerer`), `a=msid-semantic`; transport
    ///   attributes with `a=setup:passive` (the client offers `actpass`:
    ///   we are the DTLS server, RFC 8842 section 5.3), candidates in the
    ///   first bundled section only.
    ///
    /// - header extensions: of the ones the worker writes
    ///   (`PlaybackOffer.egressURIs`), each the client offered is answered
    ///   with the client's id (RFC 8285 section 6: the answer uses the
    ///   offer's mapping) in every playable section that offered it. One
    ///   id per URI for the whole bundle (RFC 8843 section 9.2), the first
    ///   offered; `PlaybackAnswer.headerExtensions` tells the worker to
    ///   write those ids on this transport. Without that, a WHEP client
    ///   ignores our transport-wide sequence numbers (RFC 8285 section 5),
    ///   sends no transport-cc feedback, and the send-side estimate never
    ///   rises above its start (issue #14: viewers stuck on 640x360).
    package mutating func makeAnswer(
        to offer: PlaybackOffer, sources: [PlaybackSource], local: LocalTransportParameters
    ) -> PlaybackAnswer {
        sessionVersion &+= 1
        var remaining = sources
        var media: [MediaDescription] = []
        var bundled: [MID] = []
        var assignments: [PlaybackAnswer.Assignment] = []
        var offered: [ExtensionMap] = []
        for section in offer.sections {
            if case .playable(let p) = section { offered += p.extensionMaps }
        }
        let accepted = ExtensionMap.firstOfEach(offered)
        for section in offer.sections {
            switch section {
            case .rejected(let r):
                media.append(PublishAnswerer.rejectedSection(r))
            case .playable(let p):
                var placed: OutgoingTrack?
                if p.isReceiving,
                    let index = remaining.firstIndex(where: { $0.kind == p.kind && p.codec(matching: $0.codec) != nil }),
                    let codec = p.codec(matching: remaining[index].codec)
                {
                    let source = remaining.remove(at: index)
                    var sent = codec
                    if source.rtxSSRC == nil { sent.rtxPayloadType = nil }
                    placed = OutgoingTrack(
                        kind: p.kind, codec: sent, ssrc: source.ssrc,
                        rtxSSRC: sent.rtxPayloadType == nil ? nil : source.rtxSSRC, streamID: source.streamID,
                        trackID: source.trackID, cname: source.cname)
                }
                if let placed { assignments.append(PlaybackAnswer.Assignment(mid: p.mid, track: placed)) }
                media.append(
                    answerSection(p, track: placed, local: local, tagged: bundled.isEmpty, accepted: accepted))
                bundled.append(p.mid)
            }
        }
        var session: [Attribute] = [.group(Group(semantics: Group.bundle, mids: bundled))]
        if local.isICELite { session.append(.iceLite) }
        session.append(local.fingerprintAttribute)
        session.append(.msidSemantic(MSIDSemantic(streamIDs: ["*"])))
        let description = SessionDescription(
            origin: Origin(sessionID: sessionID, sessionVersion: sessionVersion), attributes: session, media: media)
        return PlaybackAnswer(
            description: description, assignments: assignments, headerExtensions: HeaderExtensionIDs(maps: accepted))
    }

    func answerSection(
        _ p: PlaybackOffer.PlayableSection, track: OutgoingTrack?, local: LocalTransportParameters, tagged: Bool,
        accepted: [ExtensionMap]
    ) -> MediaDescription {
        var a = local.attributes(setup: .passive, withCandidates: tagged)
        a.append(.mid(p.mid))
        // An inactive section sends nothing, so it answers no RTX.
        var codec = track?.codec ?? p.codecs[0]
        if track == nil { codec.rtxPayloadType = nil }
        if let t = track {
            a.append(.direction(.sendonly))
            a.append(.msid(MediaStreamID(streamID: t.streamID, trackID: t.trackID)))
        } else {
            a.append(.direction(.inactive))
        }
        for map in p.extensionMaps where accepted.contains(where: { $0.id == map.id && $0.uri == map.uri }) {
            a.append(.extmap(ExtensionMap(id: map.id, uri: map.uri)))
        }
        a.append(.rtcpMux)
        if p.reducedSizeRTCP { a.append(.rtcpReducedSize) }
        a += codec.attributes
        if let t = track { a += t.sourceAttributes }
        return MediaDescription(
            media: p.kind.rawValue, port: local.defaultPort, formats: codec.payloadTypes.map { String($0.rawValue) },
            connection: local.connection, attributes: a)
    }
}
