/// URIs that name RTP header extensions in SDP `a=extmap` lines (RFC 8285
/// section 5). The local identifier each maps to is negotiated per session;
/// these are the names to match.
package enum HeaderExtensionURI {
    /// RFC 9143 section 15 (BUNDLE): the media identification tag.
    package static let mid = "urn:ietf:params:rtp-hdrext:sdes:mid"
    /// RFC 8852 section 3.1: RTP stream identifier (simulcast rid).
    package static let rtpStreamID = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    /// RFC 8852 section 3.2: the rid of the stream that this RTX stream repairs.
    package static let repairedRTPStreamID = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
    /// Absolute send time: 24-bit 6.18 fixed-point seconds (webrtc.org experiment).
    package static let absoluteSendTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
    /// draft-holmer-rmcat-transport-wide-cc-extensions-01: 16-bit
    /// transport-wide sequence number.
    package static let transportWideSequenceNumber =
        "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    /// Absolute capture time (webrtc.org experiment): the 64-bit NTP time
    /// the frame was captured, optionally followed by the 64-bit signed
    /// Q32.32 estimated offset of the capturer's clock. A mixer passes it
    /// through so receivers can measure end-to-end delay and sync streams.
    package static let absoluteCaptureTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time"
    /// RFC 6464: client-to-mixer audio level.
    package static let audioLevel = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
    /// 3GPP TS 26.114 coordination of video orientation.
    package static let videoOrientation = "urn:3gpp:video-orientation"
    /// RFC 5450: transmission time offset.
    package static let transmissionTimeOffset = "urn:ietf:params:rtp-hdrext:toffset"
    /// The AV1 RTP specification's dependency descriptor (not parsed yet).
    package static let dependencyDescriptor =
        "https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension"
}
