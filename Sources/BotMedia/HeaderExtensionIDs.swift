import RTP
import Wire

/// The RFC 8285 extension IDs a sender negotiated (SDP `a=extmap`), each
/// nil when not negotiated. The packetizers write the one-byte form, so
/// every ID is 1...14 (RFC 8285 section 4.2).
package struct HeaderExtensionIDs: Equatable, Sendable {
    /// urn:ietf:params:rtp-hdrext:sdes:mid (RFC 9143 section 15).
    package var mid: UInt8?
    /// urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id (RFC 8852 section 3.1).
    package var rid: UInt8?
    /// http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time: 24-bit
    /// 6.18 fixed-point seconds.
    package var absSendTime: UInt8?
    /// http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01:
    /// 16-bit transport-wide sequence number.
    package var transportSequenceNumber: UInt8?
    /// urn:ietf:params:rtp-hdrext:ssrc-audio-level (RFC 6464): audio only.
    package var audioLevel: UInt8?
    /// http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time: the
    /// 8-byte form, an NTP UQ32.32 capture timestamp.
    package var absCaptureTime: UInt8?

    package init(
        mid: UInt8? = nil, rid: UInt8? = nil, absSendTime: UInt8? = nil, transportSequenceNumber: UInt8? = nil,
        audioLevel: UInt8? = nil, absCaptureTime: UInt8? = nil
    ) {
        self.mid = mid
        self.rid = rid
        self.absSendTime = absSendTime
        self.transportSequenceNumber = transportSequenceNumber
        self.audioLevel = audioLevel
        self.absCaptureTime = absCaptureTime
    }

    /// Every configured ID is 1...14 and no two are equal.
    var isValidForOneByteForm: Bool {
        let ids = [mid, rid, absSendTime, transportSequenceNumber, audioLevel, absCaptureTime].compactMap { $0 }
        return ids.allSatisfy { (1...14).contains($0) } && Set(ids).count == ids.count
    }
}
