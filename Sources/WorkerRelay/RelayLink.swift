/// The source side of one relay between two media workers: what the
/// worker receiving a track from its publisher sends to one far worker
/// that has subscribers for it (docs/ARCHITECTURE.md, "Rooms over every
/// worker"). Each packet crosses once per far worker, whatever the number
/// of subscribers there; the far worker does its own layer choice,
/// rewriting and encryption.
///
/// Called on the source worker's thread only, per packet: an
/// implementation takes no lock and allocates nothing. `false` means the
/// message was dropped (the link is full); the caller counts it.
package protocol RelaySourceLink: AnyObject {
    /// One packet of spatial layer `layer` of `track`: the decrypted RTP
    /// packet as the publisher sent it (an RTX packet already restored to
    /// the original it repairs, `isRetransmission` true).
    func sendMedia(_ track: RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer) -> Bool
    /// The publisher's last Sender Report of a layer (RFC 3550 section
    /// 6.4.1: NTP time 32.32 and the RTP timestamp of the same instant):
    /// the far side re-bases timestamps across layer switches with it.
    func sendSenderReport(_ track: RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32) -> Bool
    /// What the publisher sends now per layer, as the source measures it
    /// (about once a second): the far side prices layers its relay does
    /// not carry by it.
    func sendLayerBitrates(_ track: RelayTrackID, _ rates: RelayedLayerBitrates) -> Bool
}

/// The far side of one relay: what a far worker asks of the track's
/// source worker. Same threading and cost rules as `RelaySourceLink`, on
/// the far worker's thread.
package protocol RelayFeedbackLink: AnyObject {
    func sendFeedback(_ feedback: RelayFeedback) -> Bool
}

/// Feedback that flows from a far worker's subscribers back to the source
/// worker of a relayed track.
package enum RelayFeedback: Equatable, Sendable {
    /// Some far subscriber needs a keyframe of `layer` (its PLI or FIR, or
    /// a layer switch). The source applies its own per-layer throttle, so
    /// the publisher sees at most one request per throttle window however
    /// many workers ask.
    case keyframeRequest(RelayTrackID, layer: Int)
    /// Packets the far side was asked for and does not hold: one generic
    /// NACK entry (RFC 4585 section 6.2.1: a packet id and a bitmask of the
    /// 16 that follow) for the media SSRC of `layer`. The source resends
    /// what its own history holds through `sendMedia` with
    /// `isRetransmission`.
    case nack(RelayTrackID, layer: Int, packetID: UInt16, lostBitmask: UInt16)
    /// Dynacast: the layers the far side's subscribers need now (bit i:
    /// layer i). The source tells the publisher the union of its own
    /// subscribers' needs and every relay's.
    case layerDemand(RelayTrackID, layers: UInt8)
}
