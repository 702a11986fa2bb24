import RTP
import SDP
import Wire

/// Builds the SFU's offers on a subscriber transport (the server offers,
/// the client answers; RFC 8829 sections 5.2 and 5.3) and checks the
/// answers.
///
/// The m-section list is stable across renegotiations: a section's index
/// and mid never change. `remove(trackID:)` turns a section `inactive`
/// (port 9, still in BUNDLE); a later `add(track:)` of the same kind
/// reuses it (with a new msid and SSRCs) before any new section is
/// appended, so the list grows only to the largest number of tracks sent
/// at once. We keep removed sections in BUNDLE with a live port instead of
/// port 0: a port-0 section is stopped for good and cannot be recycled
/// without the client creating a new transceiver (RFC 8829 section
/// 5.2.2), and disabling the BUNDLE-tagged section would move the whole
/// BUNDLE transport (RFC 8843 section 7.5.3).
///
/// Glare: only the server sends offers on the subscriber transport (the
/// client never offers there), so offers cannot cross. The builder allows
/// one outstanding offer: `stable` -> `createOffer` -> `haveLocalOffer` ->
/// `applyAnswer` (or `rollback`) -> `stable`. Tracks may be added and
/// removed at any time; changes made while an offer is outstanding raise
/// `needsRenegotiation`, and the rooms layer offers again once the answer
/// is applied.
package struct SubscriberOfferBuilder: Sendable {
    /// RFC 8829 section 3.2 signalling states, those the server side of a
    /// subscriber transport can be in.
    package enum SignalingState: Equatable, Sendable {
        case stable, haveLocalOffer
    }

    struct Slot: Equatable, Sendable {
        var mid: MID
        var kind: MediaKind
        var track: OutgoingTrack?
        /// The codec last offered in this section: an inactive section keeps
        /// listing it, since an m= line needs at least one format.
        var codec: CodecDescription
        /// The client's answer rejected it (port 0): a browser does so when
        /// it decodes none of the section's codecs (Chromium offered
        /// H.264 `640c1f`). Offered with port 0 from then on, outside
        /// BUNDLE, never recycled (RFC 8829 section 5.2.2).
        var refused = false
    }

    package let sessionID: UInt64
    /// The `o=` version of the last offer; 0 before the first.
    package private(set) var sessionVersion: UInt64 = 0
    package internal(set) var state: SignalingState = .stable
    /// True when tracks changed since the last offer was created.
    package private(set) var needsRenegotiation = false
    package var local: LocalTransportParameters
    /// The same `a=extmap` lines go on every m-section, so one id means one
    /// extension across the whole BUNDLE.
    package var headerExtensions: [ExtensionMap]

    var slots: [Slot] = []
    /// The slots as in the outstanding offer.
    var offered: [Slot]?
    /// The slots as last agreed (offer answered); recycling picks only
    /// sections the client has already seen go inactive.
    var negotiated: [Slot] = []
    var nextMID = 0
    /// The tracks whose sections the last applied answer rejected (port 0):
    /// no longer in any section; the caller stops forwarding them.
    package internal(set) var refusedTrackIDs: [String] = []

    package static let defaultHeaderExtensions: [ExtensionMap] = [
        ExtensionMap(id: 1, uri: HeaderExtensionURI.mid),
        ExtensionMap(id: 2, uri: HeaderExtensionURI.absoluteSendTime),
        ExtensionMap(id: 3, uri: HeaderExtensionURI.transportWideSequenceNumber),
        ExtensionMap(id: 4, uri: HeaderExtensionURI.absoluteCaptureTime),
    ]

    /// `sessionID` comes from the caller (random), cut to 63 bits
    /// (RFC 8829 section 5.2.1).
    package init(
        sessionID: UInt64, local: LocalTransportParameters,
        headerExtensions: [ExtensionMap] = SubscriberOfferBuilder.defaultHeaderExtensions
    ) {
        self.sessionID = sessionID & 0x7FFF_FFFF_FFFF_FFFF
        self.local = local
        self.headerExtensions = headerExtensions
    }

    /// The offer waiting for its answer, as it was sent (same version), to
    /// send again to a client that reconnected before answering.
    package var outstandingOffer: SessionDescription? { offered.map { description(of: $0) } }

    /// The mids of sections that currently carry a track, in order.
    package var activeMIDs: [MID] { slots.compactMap { $0.track == nil ? nil : $0.mid } }

    /// The mid that carries `trackID`, if it is sent.
    package func mid(of trackID: String) -> MID? { slots.first { $0.track?.trackID == trackID }?.mid }

    /// Places `track` in a section and returns its mid: the first section
    /// of the same kind that is inactive both now and in the last agreed
    /// description, else a new one at the end.
    @discardableResult
    package mutating func add(track: OutgoingTrack) throws(NegotiationError) -> MID {
        guard mid(of: track.trackID) == nil else { throw .duplicateTrack(track.trackID) }
        needsRenegotiation = true
        for i in slots.indices where slots[i].track == nil && slots[i].kind == track.kind && !slots[i].refused {
            let mid = slots[i].mid
            let agreedInactive = negotiated.first { $0.mid == mid }.map { $0.track == nil } ?? false
            let offeredInactive = offered?.first { $0.mid == mid }.map { $0.track == nil } ?? true
            guard agreedInactive, offeredInactive else { continue }
            slots[i].track = track
            slots[i].codec = track.codec
            return mid
        }
        let mid = MID(String(nextMID)) ?? MID("0")
        nextMID += 1
        slots.append(Slot(mid: mid, kind: track.kind, track: track, codec: track.codec))
        return mid
    }

    /// Stops sending `trackID`: its section goes `inactive` in the next offer.
    package mutating func remove(trackID: String) throws(NegotiationError) {
        guard let i = slots.firstIndex(where: { $0.track?.trackID == trackID }) else { throw .unknownTrack(trackID) }
        slots[i].track = nil
        needsRenegotiation = true
    }

    /// The next offer. Throws `offerOutstanding` while the previous one
    /// waits for its answer, `nothingToOffer` before any track was added.
    package mutating func createOffer() throws(NegotiationError) -> SessionDescription {
        guard state == .stable else { throw .offerOutstanding }
        guard !slots.isEmpty else { throw .nothingToOffer }
        sessionVersion &+= 1
        state = .haveLocalOffer
        offered = slots
        needsRenegotiation = false
        return description(of: slots)
    }

    /// Abandons the outstanding offer (RFC 8829 section 4.1.10.2,
    /// rollback): back to `stable`, and renegotiation is needed again.
    package mutating func rollback() throws(NegotiationError) {
        guard state == .haveLocalOffer else { throw .noOfferOutstanding }
        state = .stable
        offered = nil
        needsRenegotiation = true
    }

    func description(of slots: [Slot]) -> SessionDescription {
        var media: [MediaDescription] = []
        // Candidates go in the first bundled section (RFC 8843 section 7.1).
        let tagged = slots.firstIndex { !$0.refused }
        for (i, slot) in slots.enumerated() {
            if slot.refused {
                media.append(
                    MediaDescription(
                        media: slot.kind.rawValue, port: 0, formats: slot.codec.payloadTypes.map { String($0.rawValue) },
                        connection: ConnectionData(address: "0.0.0.0"), attributes: [.mid(slot.mid), .direction(.inactive)]))
                continue
            }
            var a = local.attributes(setup: .actpass, withCandidates: i == tagged)
            a.append(.mid(slot.mid))
            a += headerExtensions.map { .extmap($0) }
            if let t = slot.track {
                a.append(.direction(.sendonly))
                a.append(.msid(MediaStreamID(streamID: t.streamID, trackID: t.trackID)))
            } else {
                a.append(.direction(.inactive))
            }
            a.append(.rtcpMux)
            a.append(.rtcpReducedSize)
            a += slot.codec.attributes
            // aiortc routes incoming RTP by SSRC, not by mid: signal them.
            if let t = slot.track { a += t.sourceAttributes }
            media.append(
                MediaDescription(
                    media: slot.kind.rawValue, port: local.defaultPort,
                    formats: slot.codec.payloadTypes.map { String($0.rawValue) }, connection: local.connection,
                    attributes: a))
        }
        var session: [Attribute] = [
            .group(Group(semantics: Group.bundle, mids: slots.filter { !$0.refused }.map(\.mid)))
        ]
        if local.isICELite { session.append(.iceLite) }
        session.append(.msidSemantic(MSIDSemantic(streamIDs: ["*"])))
        return SessionDescription(
            origin: Origin(sessionID: sessionID, sessionVersion: sessionVersion), attributes: session, media: media)
    }
}
