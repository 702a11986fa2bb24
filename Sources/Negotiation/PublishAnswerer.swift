import SDP
import Wire

/// Answers publishers' offers on their publish transport (RFC 8829 section
/// 5.3). Holds the `o=` line's session id and a version that grows by one
/// per answer (RFC 8829 section 5.3.1 and 5.3.2: same id, higher version
/// for every later answer of the session).
package struct PublishAnswerer: Sendable {
    package let sessionID: UInt64
    /// The version of the last answer made; 0 before the first.
    package private(set) var sessionVersion: UInt64 = 0

    /// `sessionID` comes from the caller (a random number; this target
    /// reads no random source); it is cut to 63 bits as RFC 8829 section
    /// 5.2.1 asks.
    package init(sessionID: UInt64) {
        self.sessionID = sessionID & 0x7FFF_FFFF_FFFF_FFFF
    }

    /// The answer to `offer`, built from our SDP types:
    /// - m-sections in the offer's order with its mids; accepted ones
    ///   `recvonly` when the client sends, `inactive` when it does not yet;
    ///   rejected ones with port 0, `a=mid` and (for RTP) `a=inactive`
    ///   (RFC 8829 section 5.3.1), and left out of the BUNDLE group (RFC
    ///   8843 section 7.3.3);
    /// - session level: `a=group:BUNDLE` of the accepted mids, `a=ice-lite`
    ///   (at session level, the only place aiortc reads it), our
    ///   `a=fingerprint` (so that a rejected section, which has none, never
    ///   makes a strict peer refuse the answer: RFC 8122 section 5),
    ///   `a=extmap-allow-mixed` when offered (RFC 8285 section 6),
    ///   `a=msid-semantic: WMS`;
    /// - per accepted m-section: credentials, fingerprint, `a=setup:passive`
    ///   (RFC 8842 section 5.3: we are the DTLS server), candidates and
    ///   `a=end-of-candidates` in the first one only (the BUNDLE-tagged
    ///   m-section of the answer, RFC 8843 section 7.3.1), accepted
    ///   `a=extmap` with the offer's ids, `a=rtcp-mux`, `a=rtcp-rsize` when
    ///   offered, the accepted codecs with rtpmap/rtcp-fb/fmtp, and
    ///   `a=rid:<id> recv` plus `a=simulcast:recv` in the offer's send order
    ///   (RFC 8853 section 5.3).
    package mutating func makeAnswer(to offer: PublishOffer, local: LocalTransportParameters) -> SessionDescription {
        sessionVersion &+= 1
        var media: [MediaDescription] = []
        var bundled: [MID] = []
        for section in offer.sections {
            switch section {
            case .rejected(let r):
                media.append(Self.rejectedSection(r))
            case .accepted(let track):
                media.append(answerSection(track, local: local, tagged: bundled.isEmpty))
                bundled.append(track.mid)
            case .dataChannel(let data):
                media.append(Self.dataChannelSection(data, local: local, tagged: bundled.isEmpty))
                bundled.append(data.mid)
            }
        }
        var session: [Attribute] = [.group(Group(semantics: Group.bundle, mids: bundled))]
        if local.isICELite { session.append(.iceLite) }
        session.append(local.fingerprintAttribute)
        if offer.description.attributes.contains(.extmapAllowMixed) { session.append(.extmapAllowMixed) }
        session.append(.msidSemantic(MSIDSemantic()))
        return SessionDescription(
            origin: Origin(sessionID: sessionID, sessionVersion: sessionVersion), attributes: session, media: media)
    }

    /// A rejected m-section: port 0, `a=mid` and (for RTP) `a=inactive`
    /// (RFC 8829 section 5.3.1).
    static func rejectedSection(_ r: PublishOffer.RejectedSection) -> MediaDescription {
        var m = MediaDescription(
            media: r.media, port: 0, proto: r.proto, formats: r.formats,
            connection: ConnectionData(address: "0.0.0.0"), attributes: [.mid(r.mid)])
        if r.proto.contains("RTP") { m.attributes.append(.direction(.inactive)) }
        return m
    }

    /// The accepted data channel section (RFC 8841 sections 4.1, 5, 6):
    /// `m=application <port> UDP/DTLS/SCTP webrtc-datachannel`, the
    /// transport attributes every bundled section carries, our
    /// `a=sctp-port` and `a=max-message-size`.
    static func dataChannelSection(
        _ data: DataChannelSection, local: LocalTransportParameters, tagged: Bool
    )
        -> MediaDescription
    {
        var a = local.attributes(setup: .passive, withCandidates: tagged)
        a.append(.mid(data.mid))
        a.append(.sctpPort(DataChannelSection.localPort))
        a.append(.maxMessageSize(DataChannelSection.localMaximumMessageSize))
        return MediaDescription(
            media: "application", port: local.defaultPort, proto: DataChannelSection.proto,
            formats: [DataChannelSection.format], connection: local.connection, attributes: a)
    }

    func answerSection(
        _ track: PublishedTrackDescription, local: LocalTransportParameters, tagged: Bool
    )
        -> MediaDescription
    {
        var a = local.attributes(setup: .passive, withCandidates: tagged)
        a.append(.mid(track.mid))
        for e in track.extensionMaps {
            a.append(.extmap(ExtensionMap(id: e.id, direction: e.direction?.reversed, uri: e.uri, attributes: e.attributes)))
        }
        a.append(.direction(track.isSending ? .recvonly : .inactive))
        a.append(.rtcpMux)
        if track.reducedSizeRTCP { a.append(.rtcpReducedSize) }
        for c in track.codecs { a += c.attributes }
        if !track.simulcast.isEmpty {
            for layer in track.simulcast {
                a.append(.rid(RIDDescription(id: layer.rid, direction: .recv, payloadTypes: layer.payloadTypes)))
            }
            let streams = track.simulcast.map { [Simulcast.Stream(rid: $0.rid, paused: $0.paused)] }
            a.append(.simulcast(Simulcast(recv: streams)))
        }
        return MediaDescription(
            media: track.kind.rawValue, port: local.defaultPort,
            formats: track.codecs.flatMap(\.payloadTypes).map {
                String($0.rawValue)
            }, connection: local.connection, attributes: a)
    }
}
