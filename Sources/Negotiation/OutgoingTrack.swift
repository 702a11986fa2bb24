import SDP
import Wire

/// A track the SFU forwards to one subscriber: one m-section of the
/// subscriber offer.
public struct OutgoingTrack: Equatable, Sendable {
    public var kind: MediaKind
    /// The codec and its payload type numbers as we will send them.
    public var codec: CodecDescription
    public var ssrc: SSRC
    /// The SSRC of the RTX stream (RFC 4588), when `codec` has an RTX
    /// payload type; written as `a=ssrc-group:FID <ssrc> <rtx>`.
    public var rtxSSRC: SSRC?
    /// `a=msid` stream id (the publisher's participant, say).
    public var streamID: String
    /// `a=msid` track id; also the key of `remove(trackID:)`. Unique among
    /// the builder's tracks.
    public var trackID: String
    /// RTCP CNAME (RFC 3550 section 6.5.1) for `a=ssrc:<ssrc> cname:`.
    public var cname: String

    public init(
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
}
