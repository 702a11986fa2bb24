import DTLS
import ICE
import RTP
import SDP
import Wire

/// What the client's description says about the one bundled transport:
/// ICE credentials and candidates, DTLS fingerprints and role (RFC 8829
/// section 5.8, RFC 8843 section 7). The shell hands these to
/// `PeerTransport`.
package struct RemoteTransportParameters: Equatable, Sendable {
    package var credentials: ICECredentials
    /// Every `a=fingerprint` with a hash function DTLS supports (sha-1,
    /// sha-224...sha-512), in the order written; aiortc sends three.
    /// Others (md5, unknown names) are skipped.
    package var fingerprints: [CertificateFingerprint]
    package var setup: SetupRole
    /// UDP candidates with an IP literal address; see `ICECandidate(sdp:)`.
    package var candidates: [ICECandidate]
    /// `a=end-of-candidates` (RFC 8840 section 8.2): no more will trickle.
    package var endOfCandidates: Bool
    /// The mids of the BUNDLE group, as written; the first is the offerer's
    /// tagged m-section (RFC 8843 section 7.2.1).
    package var bundle: [MID]
    /// `a=ice-lite` at session level.
    package var isICELite: Bool
    /// The header-extension ids to write on what we send this client, when
    /// they are the client's choice (a WHEP offer, as answered:
    /// `PlaybackAnswer.headerExtensions`); nil: the ids of our own offer
    /// (`SubscriberOfferBuilder.defaultHeaderExtensions`). Set by the rooms
    /// layer, not read from the description.
    package var egressHeaderExtensions: HeaderExtensionIDs? = nil

    /// Which side of offer/answer the description is; it decides which DTLS
    /// roles are acceptable. We are always the DTLS server (`passive`):
    /// an offer may say `actpass` or `active` (RFC 8842 section 5.2 lets
    /// the offerer say actpass, and we then answer passive); an answer to
    /// our `actpass` must say `active` (section 5.3), since we cannot be
    /// the DTLS client.
    package enum DescriptionRole: Equatable, Sendable {
        case offer, answer
    }

    /// Reads the transport of the BUNDLE group: the parameters of its
    /// tagged m-section (the first bundled one that is not rejected), with
    /// session-level values inherited (`SessionDescription.transport(for:)`).
    ///
    /// Also checks what every usable description needs: a mid on every
    /// m-section, unique; a BUNDLE group naming only known mids;
    /// `a=rtcp-mux` on every RTP m-section that is not rejected.
    package init(from description: SessionDescription, as role: DescriptionRole) throws(NegotiationError) {
        try self.init(from: description) { setup in
            switch (role, setup) {
            case (.offer, .actpass), (.offer, .active), (.answer, .active): true
            default: false
            }
        }
    }

    /// Reads the server's description as a client (roombot) sees it: we
    /// are then the DTLS client, so the server's offer must say `actpass`
    /// or `passive` and its answer `passive` (RFC 8842 sections 5.2, 5.3).
    /// The other checks are those of `init(from:as:)`.
    package init(fromServer description: SessionDescription, as role: DescriptionRole) throws(NegotiationError) {
        try self.init(from: description) { setup in
            switch (role, setup) {
            case (.offer, .actpass), (.offer, .passive), (.answer, .passive): true
            default: false
            }
        }
    }

    init(from description: SessionDescription, setupAllowed: (SetupRole) -> Bool) throws(NegotiationError) {
        var seen: Set<MID> = []
        for (index, m) in description.media.enumerated() {
            guard let mid = m.mid else { throw .missingMID(index: index) }
            guard seen.insert(mid).inserted else { throw .duplicateMID(mid) }
            // A bundle-only section (port 0) carries no IDENTICAL or
            // TRANSPORT attributes such as rtcp-mux in an initial offer
            // (RFC 8843 section 7.1.3): it takes the tagged section's.
            if m.port != 0, m.proto.contains("RTP"), !m.has(.rtcpMux) { throw .rtcpMuxRequired(mid: mid) }
        }
        guard let bundle = description.bundleMIDs, !bundle.isEmpty else { throw .missingBundle }
        for mid in bundle where !seen.contains(mid) { throw .bundleNamesUnknownMID(mid) }
        // RFC 8843 section 7.3.1: the offerer tagged section is the first
        // mid of the group whose section has a port (a bundle-only one
        // never is, section 7.2.1).
        let tagged = bundle.lazy.compactMap { mid in description.media.first { $0.mid == mid && $0.port != 0 } }.first
        guard let tagged else { throw .missingBundle }
        let mid = tagged.mid
        let transport = description.transport(for: tagged)
        guard let ufrag = transport.iceUfrag, let pwd = transport.icePwd else { throw .missingICECredentials(mid: mid) }
        let fingerprints = transport.fingerprints.compactMap { f -> CertificateFingerprint? in
            guard let algorithm = CertificateFingerprint.Algorithm(rawValue: f.algorithm) else { return nil }
            return CertificateFingerprint(algorithm: algorithm, digest: f.bytes)
        }
        guard !fingerprints.isEmpty else { throw .missingFingerprint(mid: mid) }
        guard let setup = transport.setup else { throw .missingSetup(mid: mid) }
        guard setupAllowed(setup) else { throw .setupRoleConflict(mid: mid, setup) }
        self.credentials = ICECredentials(ufrag: ufrag, password: pwd)
        self.fingerprints = fingerprints
        self.setup = setup
        self.candidates = tagged.candidates.compactMap(ICECandidate.init(sdp:))
        self.endOfCandidates = tagged.has(.endOfCandidates) || description.attributes.contains(.endOfCandidates)
        self.bundle = bundle
        self.isICELite = description.isICELite
    }
}
