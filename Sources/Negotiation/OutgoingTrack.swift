import SDP
import Wire

/// A track the SFU forwards to one subscriber: one m-section of the
/// subscriber offer.
package struct OutgoingTrack: Equatable, Sendable {
    package var kind: MediaKind
    /// The codec and its payload type numbers as we will send them.
    package var codec: CodecDescription
    package var ssrc: SSRC
    /// The SSRC of the RTX stream (RFC 4588), when `codec` has an RTX
    /// payload type; written as `a=ssrc-group:FID <ssrc> <rtx>`.
    package var rtxSSRC: SSRC?
    /// `a=msid` stream id (the publisher's participant, say).
    package var streamID: String
    /// `a=msid` track id; also the key of `remove(trackID:)`. Unique among
    /// the builder's tracks.
    package var trackID: String
    /// RTCP CNAME (RFC 3550 section 6.5.1) for `a=ssrc:<ssrc> cname:`.
    package var cname: String

    package init(
        kind: MediaKind, codec: CodecDescription, ssrc: SSRC, rtxSSRC: SSRC? = nil, streamID: String,
        trackID: String, cname: String
    ) {
        self.kind = kind
        self.codec = codec
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.streamID = streamID
        self.trackID = trackID
        self.cname = cname
    }

    /// The source lines of the m-section that sends this track: for the
    /// media SSRC, and for the RTX SSRC where `codec` has an RTX payload
    /// type, `a=ssrc` cname and msid lines (RFC 5576 section 4.1; clients
    /// that route incoming RTP by SSRC, as aiortc does, need them), and
    /// `a=ssrc-group:FID <media> <rtx>` pairing the two (RFC 5576 section
    /// 4.2, RFC 4588 section 8.4).
    package var sourceAttributes: [Attribute] {
        var a: [Attribute] = []
        let ssrcs = [ssrc] + (codec.rtxPayloadType == nil ? [] : rtxSSRC.map { [$0] } ?? [])
        if ssrcs.count == 2 { a.append(.ssrcGroup(SourceGroup(semantics: SourceGroup.flowIdentification, ssrcs: ssrcs))) }
        for s in ssrcs {
            a.append(.ssrc(SourceAttribute(ssrc: s, name: "cname", value: cname)))
            a.append(.ssrc(SourceAttribute(ssrc: s, name: "msid", value: "\(streamID) \(trackID)")))
        }
        return a
    }
}
