import SDP
import Wire

/// A track the server announced in its subscriber offer: what roombot
/// expects to receive in one m-section.
package struct AnnouncedTrack: Equatable, Sendable {
    package var mid: MID
    package var kind: MediaKind
    /// `a=msid` stream id (the publisher's participant) and track id.
    package var streamID: String?
    package var trackID: String?
    /// The codec we accepted, with the server's payload types.
    package var codec: CodecDescription
    /// The media SSRC and its RTX SSRC (`a=ssrc-group:FID`), from `a=ssrc`.
    package var ssrc: SSRC?
    package var rtxSSRC: SSRC?

    package init(
        mid: MID, kind: MediaKind, streamID: String?, trackID: String?, codec: CodecDescription, ssrc: SSRC?,
        rtxSSRC: SSRC?
    ) {
        self.mid = mid
        self.kind = kind
        self.streamID = streamID
        self.trackID = trackID
        self.codec = codec
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
    }

    /// The track the server sends in `m` (a section of its subscriber
    /// offer or of its WHEP answer): msid, and the SSRCs of
    /// `a=ssrc-group:FID <media> <rtx>` (RFC 5576 section 4.2), else of the
    /// first `a=ssrc` with no RTX.
    package init(mid: MID, kind: MediaKind, codec: CodecDescription, sentIn m: MediaDescription) {
        let fid = m.sourceGroups.first { $0.semantics == SourceGroup.flowIdentification && $0.ssrcs.count == 2 }
        self.init(
            mid: mid, kind: kind, streamID: m.msid?.streamID, trackID: m.msid?.trackID, codec: codec,
            ssrc: fid?.ssrcs.first ?? m.sourceAttributes.first?.ssrc, rtxSSRC: fid?.ssrcs.last)
    }
}

/// Answers the server's offers on a subscriber transport as a client
/// (roombot), the mirror of `SubscriberOfferBuilder.applyAnswer`: every
/// section the server sends in is answered `recvonly`, an inactive one
/// `inactive`, with the first codec we can decode (Opus, VP8, H.264 mode 1)
/// and its RTX under the offer's payload types (RFC 3264 section 6.1), the
/// offered extensions echoed with their ids (RFC 8285 section 6), and
/// `a=setup:active`: we are the DTLS client (RFC 8842 section 5.3).
package struct ClientAnswerBuilder: Sendable {
    package let sessionID: UInt64
    package private(set) var sessionVersion: UInt64 = 0
    package var local: LocalTransportParameters

    package init(sessionID: UInt64, local: LocalTransportParameters) {
        self.sessionID = sessionID & 0x7FFF_FFFF_FFFF_FFFF
        self.local = local
    }

    package struct Answer: Equatable, Sendable {
        package var description: SessionDescription
        /// The server's transport, read from its offer.
        package var transport: RemoteTransportParameters
        /// The sections the server sends in (`sendonly`/`sendrecv`), in order.
        package var tracks: [AnnouncedTrack]
    }

    /// The answer to `offer`. Sections we cannot decode and non-RTP ones
    /// are answered with port 0 (RFC 8829 section 5.3.1) and left out of
    /// BUNDLE; the server's own sections are never that in practice.
    package mutating func makeAnswer(to offer: SessionDescription) throws(NegotiationError) -> Answer {
        let transport = try RemoteTransportParameters(fromServer: offer, as: .offer)
        sessionVersion &+= 1
        var media: [MediaDescription] = []
        var bundled: [MID] = []
        var tracks: [AnnouncedTrack] = []
        for m in offer.media {
            guard let mid = m.mid else { throw .missingMID(index: media.count) }
            let codec: CodecDescription?
            switch OfferedSections.screen(m, mid: mid, bundle: transport.bundle) {
            case .rejected(let r):
                media.append(PublishAnswerer.rejectedSection(r))
                continue
            case .rtp(let kind):
                codec = PlaybackOffer.offeredCodecs(m, kind: kind).first
                guard let codec else {
                    media.append(PublishAnswerer.rejectedSection(OfferedSections.rejection(m, mid: mid, .noAcceptableCodec)))
                    continue
                }
                let sending = m.direction == .sendonly || m.direction == .sendrecv
                if sending { tracks.append(AnnouncedTrack(mid: mid, kind: kind, codec: codec, sentIn: m)) }
                var a = local.attributes(setup: .active, withCandidates: bundled.isEmpty)
                a.append(.mid(mid))
                a += m.extensionMaps.map { .extmap($0) }
                a.append(.direction(sending ? .recvonly : .inactive))
                a.append(.rtcpMux)
                if m.has(.rtcpReducedSize) { a.append(.rtcpReducedSize) }
                a += codec.attributes
                media.append(
                    MediaDescription(
                        media: kind.rawValue, port: local.defaultPort,
                        formats: codec.payloadTypes.map { String($0.rawValue) }, connection: local.connection,
                        attributes: a))
                bundled.append(mid)
            }
        }
        let description = SessionDescription(
            origin: Origin(sessionID: sessionID, sessionVersion: sessionVersion),
            attributes: [.group(Group(semantics: Group.bundle, mids: bundled)), .msidSemantic(MSIDSemantic(streamIDs: ["*"]))],
            media: media)
        return Answer(description: description, transport: transport, tracks: tracks)
    }
}
