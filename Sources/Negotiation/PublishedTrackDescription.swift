import SDP
import Wire

/// What the rooms layer needs to route and forward one m-section a
/// publisher sends: the result of `PublishOffer`, a plain value.
public struct PublishedTrackDescription: Equatable, Sendable {
    public var mid: MID
    public var kind: MediaKind
    /// The client's direction (`sendonly` or `sendrecv` when it sends;
    /// `recvonly` or `inactive` for a section we accept but that carries
    /// nothing yet).
    public var direction: Direction
    /// `a=msid` (RFC 8830): the client's stream and track ids.
    public var msid: MediaStreamID?
    /// Accepted codecs in the offer's order of preference, with the offer's
    /// payload type numbers (RFC 3264 section 6.1 lets the answerer keep
    /// them; we always do, so that forwarded packets need no PT rewrite on
    /// ingress).
    public var codecs: [CodecDescription]
    /// RFC 8853 simulcast layers in the client's `a=simulcast:send` order
    /// (Chromium: low to high, `q;h;f`); empty without rid-based simulcast.
    public var simulcast: [SimulcastLayer]
    /// SSRCs from `a=ssrc` / `a=ssrc-group` (RFC 5576), if signalled.
    public var sources: SignalledSources?
    public var headerExtensions: HeaderExtensionIDs
    /// `a=rtcp-rsize` (RFC 5506) was offered, and is answered.
    public var reducedSizeRTCP: Bool

    /// True when the client sends on this m-section.
    public var isSending: Bool { direction == .sendonly || direction == .sendrecv }

    public init(
        mid: MID, kind: MediaKind, direction: Direction, msid: MediaStreamID?, codecs: [CodecDescription],
        simulcast: [SimulcastLayer], sources: SignalledSources?, headerExtensions: HeaderExtensionIDs,
        reducedSizeRTCP: Bool
    ) {
        self.mid = mid
        self.kind = kind
        self.direction = direction
        self.msid = msid
        self.codecs = codecs
        self.simulcast = simulcast
        self.sources = sources
        self.headerExtensions = headerExtensions
        self.reducedSizeRTCP = reducedSizeRTCP
    }
}

/// One rid-identified simulcast stream (RFC 8851 `a=rid`, RFC 8853
/// `a=simulcast`).
public struct SimulcastLayer: Equatable, Sendable {
    public var rid: RID
    /// Written with `~` in `a=simulcast` (RFC 8853 section 5.1): offered but
    /// not sent for now.
    public var paused: Bool
    /// The rid's `pt=` restriction narrowed to accepted payload types;
    /// empty means any accepted one (RFC 8851 section 4).
    public var payloadTypes: [PayloadType]
    /// `max-width`, `max-height`, `max-fps`, `max-br`, ... as written.
    public var restrictions: [RIDDescription.Restriction]

    public init(rid: RID, paused: Bool = false, payloadTypes: [PayloadType] = [], restrictions: [RIDDescription.Restriction] = [])
    {
        self.rid = rid
        self.paused = paused
        self.payloadTypes = payloadTypes
        self.restrictions = restrictions
    }
}

/// The SSRCs a client signalled for one m-section (RFC 5576): the media
/// streams (for SSRC-group simulcast in `SIM` order, low to high) each with
/// its RTX SSRC from an `FID` group (RFC 4588 section 8.2).
public struct SignalledSources: Equatable, Sendable {
    public struct Stream: Equatable, Sendable {
        public var ssrc: SSRC
        public var rtxSSRC: SSRC?
        public init(ssrc: SSRC, rtxSSRC: SSRC? = nil) {
            self.ssrc = ssrc
            self.rtxSSRC = rtxSSRC
        }
    }
    public var cname: String?
    public var streams: [Stream]
    /// True when the streams come from an `a=ssrc-group:SIM`.
    public var isSimulcast: Bool

    public init(cname: String?, streams: [Stream], isSimulcast: Bool) {
        self.cname = cname
        self.streams = streams
        self.isSimulcast = isSimulcast
    }
}
