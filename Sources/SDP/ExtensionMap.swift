/// `a=extmap:<id>[/<direction>] <URI> [<extension attributes>]`
/// (RFC 8285 section 5). Ids 1...14 fit the one-byte header form, 15...255
/// need the two-byte form (and `a=extmap-allow-mixed` to mix them, RFC 8285
/// section 6); 0 is never valid, and we refuse ids above 255.
package struct ExtensionMap: Equatable, Sendable {
    package var id: UInt8
    package var direction: Direction?
    package var uri: String
    package var attributes: [String]

    package init(id: UInt8, direction: Direction? = nil, uri: String, attributes: [String] = []) {
        self.id = id
        self.direction = direction
        self.uri = uri
        self.attributes = attributes
    }

    /// True when the id can be sent in an RFC 8285 one-byte header (1...14).
    package var fitsOneByteHeader: Bool { id >= 1 && id <= 14 }

    package static let sdesMID = "urn:ietf:params:rtp-hdrext:sdes:mid"
    package static let sdesRTPStreamID = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    package static let sdesRepairedRTPStreamID = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
    package static let transportWideCC = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    package static let absSendTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
    package static let audioLevel = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"

    static func parse(_ value: Substring, line: Int) throws(SDPParseError) -> ExtensionMap {
        let f = fields(value)
        guard f.count >= 2 else { throw .malformed(.extmap, line: line) }
        let (idText, directionText) = splitOnce(f[0], "/")
        guard let n = decimal(idText, as: UInt64.self) else { throw .malformed(.extmap, line: line) }
        guard n >= 1, n <= 255 else { throw .extensionIDOutOfRange(line: line) }
        var direction: Direction?
        if let directionText {
            guard let d = Direction(rawValue: String(directionText)) else { throw .malformed(.extmap, line: line) }
            direction = d
        }
        return ExtensionMap(
            id: UInt8(n), direction: direction, uri: String(f[1]),
            attributes: f.dropFirst(2).map(String.init))
    }

    package var value: String {
        var s = "\(id)"
        if let direction { s += "/\(direction.rawValue)" }
        s += " \(uri)"
        for a in attributes { s += " \(a)" }
        return s
    }
}
