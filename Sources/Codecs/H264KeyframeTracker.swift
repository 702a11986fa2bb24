/// Decides, per H264 stream (one per simulcast layer), which packet a
/// subscriber may start or switch on: the first packet of an access unit
/// (an RTP timestamp) that carries a sequence parameter set. An IDR is
/// decodable only with the SPS and PPS it refers to (RFC 6184 section 8.4,
/// H.264 section 7.4.1.2.3), and libwebrtc sends them right before each
/// IDR with its timestamp: in one STAP-A with it, or (the IDR is larger
/// than a packet) as a STAP-A or single units ahead of its first FU-A. So
/// the switch must happen at the parameter sets, not at the IDR slice:
/// starting at the FU-A would drop the new layer's SPS and PPS, and the
/// decoder would read the new layer's IDR with the old layer's parameter
/// sets (same ids, another size; Chromium then showed the old size and
/// never the new one).
///
/// An IDR without parameter sets in its access unit (a sender that sent
/// them once at the start) is not a switch point: the SFU then asks for
/// another keyframe. `H264PayloadDescriptor.isKeyframe` is true on any
/// IDR start; `isDecoderRefreshPoint` on one packet that holds all three.
package struct H264KeyframeTracker: Equatable, Sendable {
    private var timestamp: UInt32?
    private var sawSPS = false

    package init() {}

    /// Notes one packet (in arrival order) and says whether a subscriber
    /// may begin with it: it carries an SPS and no earlier packet of its
    /// timestamp did.
    ///
    /// A packet of an older picture (a retransmission, or one that came
    /// late) is never a switch point, since newer packets went before it,
    /// and leaves the newest picture's state alone. Older is in RTP
    /// timestamp order with wraparound (RFC 3550 section 5.1).
    package mutating func isDecoderRefresh(_ descriptor: H264PayloadDescriptor, timestamp: UInt32) -> Bool {
        if let newest = self.timestamp {
            let delta = Int32(bitPattern: timestamp &- newest)
            if delta < 0 { return false }
            if delta > 0 {
                self.timestamp = timestamp
                sawSPS = false
            }
        } else {
            self.timestamp = timestamp
        }
        guard descriptor.containsSPS, !sawSPS else { return false }
        sawSPS = true
        return true
    }
}

extension H264PayloadDescriptor {
    /// This packet alone starts a decodable picture: it holds SPS, PPS and
    /// the start of an IDR slice (a STAP-A as libwebrtc sends a small
    /// keyframe).
    package var isDecoderRefreshPoint: Bool { isKeyframe && containsSPS && containsPPS }
}
