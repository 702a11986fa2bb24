import Wire

/// `a=group:<semantics> <identification-tag> ...` (RFC 5888 section 5),
/// here `BUNDLE` (RFC 8843) or `LS` and others, kept by name. Tags are MIDs.
package struct Group: Equatable, Sendable {
    package var semantics: String
    package var mids: [MID]

    package static let bundle = "BUNDLE"

    package init(semantics: String, mids: [MID]) {
        self.semantics = semantics
        self.mids = mids
    }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> Group {
        let f = fields(text)
        guard let first = f.first else { throw .malformed(.group, line: line) }
        var mids: [MID] = []
        for tag in f.dropFirst() { mids.append(try parseMID(tag, line: line, field: .group)) }
        return Group(semantics: String(first), mids: mids)
    }

    package var text: String { ([semantics] + mids.map(\.description)).joined(separator: " ") }
}

/// `a=msid:<stream id> [<track id>]` (RFC 8830 section 2); Chromium writes
/// `-` as the stream id of a track without a stream.
package struct MediaStreamID: Equatable, Sendable {
    package var streamID: String
    package var trackID: String?

    package init(streamID: String, trackID: String? = nil) {
        self.streamID = streamID
        self.trackID = trackID
    }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> MediaStreamID {
        let f = fields(text)
        guard f.count == 1 || f.count == 2 else { throw .malformed(.msid, line: line) }
        return MediaStreamID(streamID: String(f[0]), trackID: f.count == 2 ? String(f[1]) : nil)
    }

    package var text: String { trackID.map { "\(streamID) \($0)" } ?? streamID }
}

/// `a=msid-semantic: WMS [<stream id> ...]`, the pre-RFC 8830 session
/// attribute browsers still send. Written the way libwebrtc writes it,
/// with a space after the colon.
package struct MSIDSemantic: Equatable, Sendable {
    package var semantic: String
    package var streamIDs: [String]

    package init(semantic: String = "WMS", streamIDs: [String] = []) {
        self.semantic = semantic
        self.streamIDs = streamIDs
    }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> MSIDSemantic {
        let f = fields(text)
        guard let first = f.first else { throw .malformed(.msidSemantic, line: line) }
        return MSIDSemantic(semantic: String(first), streamIDs: f.dropFirst().map(String.init))
    }

    package var text: String { " " + ([semantic] + streamIDs).joined(separator: " ") }
}
