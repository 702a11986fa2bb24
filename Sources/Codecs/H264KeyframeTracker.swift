/// Decides, per H264 stream (one per simulcast layer), which packet starts
/// a picture a decoder can begin with: an IDR slice whose SPS and PPS came
/// with it (RFC 6184 section 8.4 and H.264 section 7.4.1.2.3: an IDR is
/// decodable only with the parameter sets it refers to). libwebrtc sends
/// SPS and PPS right before each IDR, either in one STAP-A with it or as
/// separate packets with the IDR's timestamp ahead of its first FU-A.
///
/// `H264PayloadDescriptor.isKeyframe` is true on any IDR start; this is the
/// stricter test a layer switch needs. An IDR without parameter sets
/// (a sender that sent them once at the start) is not a switch point here:
/// the SFU then asks for another keyframe.
public struct H264KeyframeTracker: Equatable, Sendable {
    private var timestamp: UInt32?
    private var sawSPS = false
    private var sawPPS = false

    public init() {}

    /// Notes one packet (in arrival order) and says whether it starts a
    /// decoder refresh: an IDR start with SPS and PPS in this packet or in
    /// earlier packets of the same RTP timestamp.
    public mutating func isDecoderRefresh(_ descriptor: H264PayloadDescriptor, timestamp: UInt32) -> Bool {
        if self.timestamp != timestamp {
            self.timestamp = timestamp
            sawSPS = false
            sawPPS = false
        }
        sawSPS = sawSPS || descriptor.containsSPS
        sawPPS = sawPPS || descriptor.containsPPS
        return descriptor.isKeyframe && sawSPS && sawPPS
    }
}

extension H264PayloadDescriptor {
    /// This packet alone starts a decodable picture: it holds SPS, PPS and
    /// the start of an IDR slice (a STAP-A as libwebrtc sends it). Use
    /// `H264KeyframeTracker` when the parameter sets may come in packets
    /// of their own.
    public var isDecoderRefreshPoint: Bool { isKeyframe && containsSPS && containsPPS }
}
