import DTLS
import ICE
import SDP
import Wire

/// The SFU side of a transport, as written into our offers and answers:
/// ICE-lite credentials, the certificate fingerprint, and the candidates
/// of the worker's UDP port.
package struct LocalTransportParameters: Equatable, Sendable {
    package var credentials: ICECredentials
    /// One fingerprint (sha-256 in practice) of our DTLS certificate.
    package var fingerprint: CertificateFingerprint
    package var candidates: [ICECandidate]
    /// The server is ICE-lite (RFC 8445 section 2.5); `a=ice-lite` goes at
    /// session level, the only place aiortc reads it.
    package var isICELite: Bool

    package init(
        credentials: ICECredentials, fingerprint: CertificateFingerprint, candidates: [ICECandidate],
        isICELite: Bool = true
    ) {
        self.credentials = credentials
        self.fingerprint = fingerprint
        self.candidates = candidates
        self.isICELite = isICELite
    }

    /// The port and `c=` of the m= line: the first candidate's address
    /// (RFC 8829 section 5.3.1 uses the default candidate), or `9` and
    /// `0.0.0.0` when there is none (section 5.2.1).
    var defaultPort: UInt16 { candidates.first?.address.port ?? 9 }
    var connection: ConnectionData {
        guard let c = candidates.first else { return ConnectionData(address: "0.0.0.0") }
        return ConnectionData(addressType: c.address.family == .ipv4 ? "IP4" : "IP6", address: c.address.ipLiteral)
    }

    /// The transport attributes of one m-section. Candidates (and
    /// `a=end-of-candidates`: we gather nothing later, RFC 8840 section
    /// 8.2) only in the BUNDLE-tagged m-section, whose transport is the one
    /// used (RFC 8843 section 7); credentials, fingerprint and setup in
    /// every bundled m-section, as libwebrtc writes them, so that a peer
    /// that reads them per section finds them.
    /// `a=fingerprint` of our certificate. Our answers write it at session
    /// level too (RFC 8122 section 5 allows either level; a media-level
    /// one overrides it, and ours are the same): a rejected m-section
    /// carries no transport attributes (RFC 8829 section 5.3.1), and a
    /// strict peer such as GStreamer's webrtcbin then finds no
    /// fingerprint for it and refuses the whole answer.
    var fingerprintAttribute: Attribute {
        .fingerprint(Fingerprint(algorithm: fingerprint.algorithm.rawValue, bytes: fingerprint.digest))
    }

    func attributes(setup: SetupRole, withCandidates: Bool) -> [Attribute] {
        var out: [Attribute] = []
        if withCandidates {
            out += candidates.map { .candidate(Candidate($0)) }
            out.append(.endOfCandidates)
        }
        out.append(.iceUfrag(credentials.ufrag))
        out.append(.icePwd(credentials.password))
        out.append(fingerprintAttribute)
        out.append(.setup(setup))
        return out
    }
}
