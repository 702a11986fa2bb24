import Wire

/// `a=rtpmap:<payload type> <encoding name>/<clock rate>[/<encoding parameters>]`
/// (RFC 8866 section 6.6). For audio the encoding parameters are the
/// channel count; we accept only a number there.
package struct RTPMap: Equatable, Sendable {
    package var payloadType: PayloadType
    /// As written (`VP8`, `opus`); compare case-insensitively, RFC 4855 section 3.
    package var encodingName: String
    package var clockRate: UInt32
    package var channels: UInt16?

    package init(payloadType: PayloadType, encodingName: String, clockRate: UInt32, channels: UInt16? = nil) {
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    static func parse(_ value: Substring, line: Int) throws(SDPParseError) -> RTPMap {
        let f = fields(value)
        guard f.count == 2 else { throw .malformed(.rtpmap, line: line) }
        let pt = try parsePayloadType(f[0], line: line)
        let parts = pieces(f[1], "/")
        guard parts.count == 2 || parts.count == 3, !parts[0].isEmpty,
            let rate = decimal(parts[1], as: UInt32.self)
        else { throw .malformed(.rtpmap, line: line) }
        var channels: UInt16?
        if parts.count == 3 {
            guard let c = decimal(parts[2], as: UInt16.self) else { throw .malformed(.rtpmap, line: line) }
            channels = c
        }
        return RTPMap(payloadType: pt, encodingName: String(parts[0]), clockRate: rate, channels: channels)
    }

    package var value: String {
        var s = "\(payloadType.rawValue) \(encodingName)/\(clockRate)"
        if let channels { s += "/\(channels)" }
        return s
    }
}
