import Wire

/// One media section: `m=<media> <port>[/<count>] <proto> <fmt> ...`
/// (RFC 8866 section 5.14) and the lines after it up to the next `m=`.
package struct MediaDescription: Equatable, Sendable {
    /// `audio`, `video`, `application`, ...
    package var media: String
    package var port: UInt16
    package var portCount: UInt16?
    /// `UDP/TLS/RTP/SAVPF`, `UDP/DTLS/SCTP`, ...
    package var proto: String
    /// Payload types for RTP, `webrtc-datachannel` for SCTP; as written.
    package var formats: [String]
    package var connection: ConnectionData?
    package var bandwidths: [Bandwidth]
    package var otherLines: [OtherLine]
    package var attributes: [Attribute]

    package init(
        media: String, port: UInt16 = 9, portCount: UInt16? = nil, proto: String = "UDP/TLS/RTP/SAVPF",
        formats: [String], connection: ConnectionData? = nil, bandwidths: [Bandwidth] = [],
        otherLines: [OtherLine] = [], attributes: [Attribute] = []
    ) {
        self.media = media
        self.port = port
        self.portCount = portCount
        self.proto = proto
        self.formats = formats
        self.connection = connection
        self.bandwidths = bandwidths
        self.otherLines = otherLines
        self.attributes = attributes
    }

    static func parseMediaLine(_ value: Substring, line: Int) throws(SDPParseError) -> MediaDescription {
        let f = fields(value)
        guard f.count >= 4 else { throw .malformed(.media, line: line) }
        let (portText, countText) = splitOnce(f[1], "/")
        guard let port = decimal(portText, as: UInt16.self) else { throw .malformed(.media, line: line) }
        var count: UInt16?
        if let countText {
            guard let c = decimal(countText, as: UInt16.self) else { throw .malformed(.media, line: line) }
            count = c
        }
        return MediaDescription(
            media: String(f[0]), port: port, portCount: count, proto: String(f[2]),
            formats: f.dropFirst(3).map(String.init))
    }

    /// The text after `m=`.
    package var mediaLine: String {
        var s = "\(media) \(port)"
        if let portCount { s += "/\(portCount)" }
        s += " \(proto)"
        for f in formats { s += " \(f)" }
        return s
    }
}

// Typed views of the attribute list. Each returns what is written at this
// media level only; see `SessionDescription.transport(for:)` for values
// inherited from the session level.
extension MediaDescription {
    package var mid: MID? {
        for case .mid(let m) in attributes { return m }
        return nil
    }

    /// The last direction attribute; `sendrecv` when there is none (RFC 8866 section 6.7).
    package var direction: Direction {
        var d = Direction.sendrecv
        for case .direction(let x) in attributes { d = x }
        return d
    }

    package var msid: MediaStreamID? {
        for case .msid(let m) in attributes { return m }
        return nil
    }

    package var rtpMaps: [RTPMap] { attributes.compactMap { if case .rtpmap(let r) = $0 { r } else { nil } } }
    package var formatParameters: [FormatParameters] {
        attributes.compactMap { if case .fmtp(let f) = $0 { f } else { nil } }
    }
    package var rtcpFeedback: [RTCPFeedback] {
        attributes.compactMap { if case .rtcpFeedback(let f) = $0 { f } else { nil } }
    }
    package var extensionMaps: [ExtensionMap] { attributes.compactMap { if case .extmap(let e) = $0 { e } else { nil } } }
    package var sourceAttributes: [SourceAttribute] {
        attributes.compactMap { if case .ssrc(let s) = $0 { s } else { nil } }
    }
    package var sourceGroups: [SourceGroup] { attributes.compactMap { if case .ssrcGroup(let g) = $0 { g } else { nil } } }
    package var rids: [RIDDescription] { attributes.compactMap { if case .rid(let r) = $0 { r } else { nil } } }
    package var simulcast: Simulcast? {
        for case .simulcast(let s) in attributes { return s }
        return nil
    }
    package var candidates: [Candidate] { attributes.compactMap { if case .candidate(let c) = $0 { c } else { nil } } }
    package var fingerprints: [Fingerprint] {
        attributes.compactMap { if case .fingerprint(let f) = $0 { f } else { nil } }
    }
    package var iceUfrag: String? {
        for case .iceUfrag(let s) in attributes { return s }
        return nil
    }
    package var icePwd: String? {
        for case .icePwd(let s) in attributes { return s }
        return nil
    }
    package var setup: SetupRole? {
        for case .setup(let r) in attributes { return r }
        return nil
    }

    /// The value of `a=ssrc:<ssrc> <name>:<value>` (`cname`, `msid`), if any.
    package func sourceAttribute(_ name: String, of ssrc: SSRC) -> String? {
        sourceAttributes.first { $0.ssrc == ssrc && $0.name == name }?.value
    }

    package func has(_ attribute: Attribute) -> Bool { attributes.contains(attribute) }

    /// `a=bundle-only` (RFC 8843 section 6): port 0 then means "accept me
    /// only inside the BUNDLE group", not "rejected".
    package var isBundleOnly: Bool { has(.bundleOnly) }

    /// Port 0 without `a=bundle-only`: rejected in an answer, disabled in
    /// an offer (RFC 8843 section 7.3, note, and section 7.5.3; RFC 3264
    /// section 6). A bundle-only section with port 0 is not rejected.
    package var isRejected: Bool { port == 0 && !isBundleOnly }

    /// The rtpmap for `payloadType`, if any.
    package func rtpMap(for payloadType: PayloadType) -> RTPMap? {
        rtpMaps.first { $0.payloadType == payloadType }
    }

    /// The id negotiated for header extension `uri`, if any.
    package func extensionID(for uri: String) -> UInt8? {
        extensionMaps.first { $0.uri == uri }?.id
    }

    /// RFC 8853 section 5.1: every rid a simulcast line names must have an
    /// `a=rid` line in this section with the matching direction.
    func validateSimulcast(line: Int) throws(SDPParseError) {
        guard let s = simulcast else { return }
        let known = rids
        func check(_ list: [[Simulcast.Stream]], _ direction: RIDDescription.RIDDirection) throws(SDPParseError) {
            for alternatives in list {
                for stream in alternatives where !known.contains(where: { $0.id == stream.rid && $0.direction == direction }) {
                    throw .simulcastUnknownRID(line: line)
                }
            }
        }
        try check(s.send, .send)
        try check(s.recv, .recv)
    }
}
