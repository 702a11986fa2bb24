import Wire

/// A whole SDP description (RFC 8866 section 5): session-level lines and
/// attributes, then the media sections in order.
///
/// Serialisation writes, per section, the fixed lines in RFC 8866 order
/// (`v o s [other] c b t` / `m [other] c b`), then the attributes in stored
/// order, each line ending in CRLF. A description built by our code is
/// therefore written exactly as specified, and parse -> serialize is a fixed
/// point after one round.
package struct SessionDescription: Equatable, Sendable {
    /// Refuse descriptions larger than this (256 KiB).
    package static let maxBytes = 256 * 1024
    /// Refuse descriptions with more lines than this.
    package static let maxLines = 10_000
    /// Refuse any line longer than this (16 KiB, line ending excluded).
    package static let maxLineBytes = 16 * 1024

    package var origin: Origin
    package var sessionName: String
    package var connection: ConnectionData?
    package var bandwidths: [Bandwidth]
    package var timing: [Timing]
    package var otherLines: [OtherLine]
    package var attributes: [Attribute]
    package var media: [MediaDescription]

    package init(
        origin: Origin, sessionName: String = "-", connection: ConnectionData? = nil,
        bandwidths: [Bandwidth] = [], timing: [Timing] = [Timing()], otherLines: [OtherLine] = [],
        attributes: [Attribute] = [], media: [MediaDescription] = []
    ) {
        self.origin = origin
        self.sessionName = sessionName
        self.connection = connection
        self.bandwidths = bandwidths
        self.timing = timing
        self.otherLines = otherLines
        self.attributes = attributes
        self.media = media
    }
}

// Session-level typed views and RFC 8829 inheritance.
extension SessionDescription {
    package var groups: [Group] { attributes.compactMap { if case .group(let g) = $0 { g } else { nil } } }

    /// The mids of the first `a=group:BUNDLE` (RFC 8843 section 7).
    package var bundleMIDs: [MID]? { groups.first { $0.semantics == Group.bundle }?.mids }

    package var isICELite: Bool { attributes.contains(.iceLite) }

    package var fingerprints: [Fingerprint] {
        attributes.compactMap { if case .fingerprint(let f) = $0 { f } else { nil } }
    }

    /// Transport parameters that apply to one media section.
    package struct TransportParameters: Equatable, Sendable {
        package var iceUfrag: String?
        package var icePwd: String?
        package var fingerprints: [Fingerprint]
        package var setup: SetupRole?
    }

    /// The ICE credentials, fingerprints and DTLS role for `media`: its own
    /// lines where present, otherwise the session-level ones. ice-ufrag and
    /// ice-pwd may be given at either level (RFC 8839 section 5.4), as may
    /// fingerprint (RFC 8122 section 5) and setup (RFC 4145 section 4);
    /// RFC 8829 section 5.8 applies a session-level value to every media
    /// section that does not override it.
    package func transport(for media: MediaDescription) -> TransportParameters {
        var session = MediaDescription(media: "", formats: [])
        session.attributes = attributes
        let fp = media.fingerprints
        return TransportParameters(
            iceUfrag: media.iceUfrag ?? session.iceUfrag,
            icePwd: media.icePwd ?? session.icePwd,
            fingerprints: fp.isEmpty ? session.fingerprints : fp,
            setup: media.setup ?? session.setup)
    }
}
