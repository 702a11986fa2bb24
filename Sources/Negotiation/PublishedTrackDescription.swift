import RTP
import SDP
import Wire

/// What the rooms layer needs to route and forward one m-section a
/// publisher sends: the result of `PublishOffer`, a plain value.
package struct PublishedTrackDescription: Equatable, Sendable {
    package var mid: MID
    package var kind: MediaKind
    /// The client's direction (`sendonly` or `sendrecv` when it sends;
    /// `recvonly` or `inactive` for a section we accept but that carries
    /// nothing yet).
    package var direction: Direction
    /// `a=msid` (RFC 8830): the client's stream and track ids.
    package var msid: MediaStreamID?
    /// Accepted codecs in the offer's order of preference, with the offer's
    /// payload type numbers (RFC 3264 section 6.1 lets the answerer keep
    /// them; we always do, so that forwarded packets need no PT rewrite on
    /// ingress).
    package var codecs: [CodecDescription]
    /// RFC 8853 simulcast layers in the client's `a=simulcast:send` order
    /// (Chromium: low to high, `q;h;f`); empty without rid-based simulcast.
    package var simulcast: [SimulcastLayer]
    /// SSRCs from `a=ssrc` / `a=ssrc-group` (RFC 5576), if signalled.
    package var sources: SignalledSources?
    /// The ids of the accepted header extensions (RFC 8285).
    package var headerExtensions: HeaderExtensionIDs
    /// The accepted `a=extmap` lines, in the offer's order, the first of
    /// each URI and of each id (`ExtensionMap.firstOfEach`): what the
    /// answer echoes (RFC 8285 section 6).
    package var extensionMaps: [ExtensionMap]
    /// `a=rtcp-rsize` (RFC 5506) was offered, and is answered.
    package var reducedSizeRTCP: Bool

    /// True when the client sends on this m-section.
    package var isSending: Bool { direction == .sendonly || direction == .sendrecv }

    package init(
        mid: MID, kind: MediaKind, direction: Direction, msid: MediaStreamID?, codecs: [CodecDescription],
        simulcast: [SimulcastLayer], sources: SignalledSources?, headerExtensions: HeaderExtensionIDs,
        extensionMaps: [ExtensionMap] = [], reducedSizeRTCP: Bool
    ) {
        self.mid = mid
        self.kind = kind
        self.direction = direction
        self.msid = msid
        self.codecs = codecs
        self.simulcast = simulcast
        self.sources = sources
        self.headerExtensions = headerExtensions
        self.extensionMaps = extensionMaps
        self.reducedSizeRTCP = reducedSizeRTCP
    }
}

/// One rid-identified simulcast stream (RFC 8851 `a=rid`, RFC 8853
/// `a=simulcast`).
package struct SimulcastLayer: Equatable, Sendable {
    package var rid: RID
    /// Written with `~` in `a=simulcast` (RFC 8853 section 5.1): offered but
    /// not sent for now.
    package var paused: Bool
    /// The rid's `pt=` restriction narrowed to accepted payload types;
    /// empty means any accepted one (RFC 8851 section 4).
    package var payloadTypes: [PayloadType]
    /// `max-width`, `max-height`, `max-fps`, `max-br`, ... as written.
    package var restrictions: [RIDDescription.Restriction]

    package init(
        rid: RID, paused: Bool = false, payloadTypes: [PayloadType] = [], restrictions: [RIDDescription.Restriction] = []
    ) {
        self.rid = rid
        self.paused = paused
        self.payloadTypes = payloadTypes
        self.restrictions = restrictions
    }
}

/// The SSRCs a client signalled for one m-section (RFC 5576): the media
/// streams (for SSRC-group simulcast in `SIM` order, low to high) each with
/// its RTX SSRC from an `FID` group (RFC 4588 section 8.2).
package struct SignalledSources: Equatable, Sendable {
    package struct Stream: Equatable, Sendable {
        package var ssrc: SSRC
        package var rtxSSRC: SSRC?
        package init(ssrc: SSRC, rtxSSRC: SSRC? = nil) {
            self.ssrc = ssrc
            self.rtxSSRC = rtxSSRC
        }
    }
    package var cname: String?
    package var streams: [Stream]
    /// True when the streams come from an `a=ssrc-group:SIM`.
    package var isSimulcast: Bool

    package init(cname: String?, streams: [Stream], isSimulcast: Bool) {
        self.cname = cname
        self.streams = streams
        self.isSimulcast = isSimulcast
    }
}
