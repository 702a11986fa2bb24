import Forwarding

/// What one worker's media engine has done since it started, for metrics.
/// A plain value: the server reads a copy through a control closure.
public struct RoomMediaCounters: Equatable, Sendable {
    /// Decrypted RTP packets and their bytes, from every transport.
    public var rtpPacketsIn: UInt64 = 0
    public var rtpBytesIn: UInt64 = 0
    /// Decrypted RTCP compounds received.
    public var rtcpPacketsIn: UInt64 = 0
    /// Protected RTP packets queued to subscribers, and their bytes on the
    /// wire (SRTP trailer included).
    public var rtpPacketsOut: UInt64 = 0
    public var rtpBytesOut: UInt64 = 0
    /// RTCP compounds queued (reports and keyframe requests).
    public var rtcpPacketsOut: UInt64 = 0
    /// Packet copies forwarded: one per subscriber a packet reached.
    public var forwarded: UInt64 = 0
    public var dropped = Drops()
    /// Keyframe requests sent upstream, and those the per-track throttle
    /// absorbed.
    public var plisForwarded: UInt64 = 0
    public var firsForwarded: UInt64 = 0
    public var keyframeRequestsSuppressed: UInt64 = 0
    public var senderReportsSent: UInt64 = 0
    public var receiverReportsSent: UInt64 = 0
    /// Transport-cc feedback packets sent to publishers.
    public var transportFeedbackSent: UInt64 = 0
    /// Commands for another worker, or naming an unknown transport or track.
    public var commandsIgnored: UInt64 = 0

    public init() {}

    /// Why packets were not forwarded. RTP drops before routing count once
    /// per packet; drops for one subscriber count once per subscriber.
    public struct Drops: Equatable, Sendable {
        /// RTP header, or VP8/H.264 payload descriptor, did not parse; or
        /// an RTCP compound did not.
        public var malformed: UInt64 = 0
        public var malformedRTCP: UInt64 = 0
        /// No track for the SSRC (nor its mid), or not a publisher transport.
        public var unknownSource: UInt64 = 0
        /// A simulcast layer other than the one forwarded.
        public var otherLayer: UInt64 = 0
        /// RTX (by payload type or SSRC): NACK/RTX is not implemented yet.
        public var retransmission: UInt64 = 0
        /// A payload type the track did not negotiate.
        public var unknownPayloadType: UInt64 = 0
        /// The subscriber paused the track (maxWidth 0).
        public var paused: UInt64 = 0
        /// The subscriber's transport is not open or not connected.
        public var subscriberNotConnected: UInt64 = 0
        /// The rewriter's reasons (`DropReason`).
        public var notCurrentSource: UInt64 = 0
        public var beforeSourceSwitch: UInt64 = 0
        public var duplicate: UInt64 = 0
        public var outsideHistory: UInt64 = 0
        public var paddingOnly: UInt64 = 0
        public var notForwarded: UInt64 = 0
        /// Did not fit a transmit slot, or the rewrite or protection failed.
        public var sendFailed: UInt64 = 0

        public init() {}

        mutating func count(_ reason: DropReason) {
            switch reason {
            case .notCurrentSource: notCurrentSource &+= 1
            case .beforeSourceSwitch: beforeSourceSwitch &+= 1
            case .duplicate: duplicate &+= 1
            case .outsideHistory: outsideHistory &+= 1
            case .paddingOnly: paddingOnly &+= 1
            case .notForwarded: notForwarded &+= 1
            }
        }
    }
}
