/// The RTP header-extension ids (RFC 8285) negotiated for a session, one
/// per extension the SFU or roombot reads or writes, each nil when not
/// negotiated. The answer echoes the offered ids (RFC 8285 section 6), so
/// one id means one extension in both directions and across every bundled
/// m-section. The SDP lines they came from are the negotiation's business,
/// not part of this value.
package struct HeaderExtensionIDs: Equatable, Sendable {
    /// `HeaderExtensionURI.mid` (RFC 9143 section 15).
    package var mid: UInt8?
    /// `HeaderExtensionURI.rtpStreamID` (RFC 8852 section 3.1).
    package var rtpStreamID: UInt8?
    /// `HeaderExtensionURI.repairedRTPStreamID` (RFC 8852 section 3.2).
    package var repairedRTPStreamID: UInt8?
    /// `HeaderExtensionURI.absoluteSendTime`: 24-bit 6.18 fixed-point seconds.
    package var absoluteSendTime: UInt8?
    /// `HeaderExtensionURI.transportWideSequenceNumber`: 16-bit transport-wide
    /// sequence number (draft-holmer-rmcat-transport-wide-cc-extensions-01).
    package var transportWideSequenceNumber: UInt8?
    /// `HeaderExtensionURI.audioLevel` (RFC 6464): audio only.
    package var audioLevel: UInt8?
    /// `HeaderExtensionURI.videoOrientation` (3GPP TS 26.114): video only.
    package var videoOrientation: UInt8?
    /// `HeaderExtensionURI.absoluteCaptureTime`: the 8-byte form, an NTP
    /// UQ32.32 capture timestamp.
    package var absoluteCaptureTime: UInt8?

    package init(
        mid: UInt8? = nil, rtpStreamID: UInt8? = nil, repairedRTPStreamID: UInt8? = nil, absoluteSendTime: UInt8? = nil,
        transportWideSequenceNumber: UInt8? = nil, audioLevel: UInt8? = nil, videoOrientation: UInt8? = nil,
        absoluteCaptureTime: UInt8? = nil
    ) {
        self.mid = mid
        self.rtpStreamID = rtpStreamID
        self.repairedRTPStreamID = repairedRTPStreamID
        self.absoluteSendTime = absoluteSendTime
        self.transportWideSequenceNumber = transportWideSequenceNumber
        self.audioLevel = audioLevel
        self.videoOrientation = videoOrientation
        self.absoluteCaptureTime = absoluteCaptureTime
    }

    /// Records `id` for `uri` when `uri` is one of the fields above and has
    /// no id yet: the first mapping of a URI wins (RFC 8285 section 6:
    /// one id per URI for the whole bundle). False for an unknown URI or
    /// one already mapped. Whether `id` is taken by another URI is the
    /// caller's check.
    @discardableResult
    package mutating func assign(_ id: UInt8, to uri: String) -> Bool {
        guard let field = Self.field(for: uri), self[keyPath: field] == nil else { return false }
        self[keyPath: field] = id
        return true
    }

    /// The id negotiated for `uri`; nil when none is, or `uri` is not one
    /// of the fields above.
    package func id(for uri: String) -> UInt8? {
        Self.field(for: uri).flatMap { self[keyPath: $0] }
    }

    /// Every configured id is 1...14 and no two are equal: what the
    /// one-byte form can carry (RFC 8285 section 4.2; 15 is reserved).
    package var isValidForOneByteForm: Bool {
        let ids = [
            mid, rtpStreamID, repairedRTPStreamID, absoluteSendTime, transportWideSequenceNumber, audioLevel,
            videoOrientation, absoluteCaptureTime,
        ].compactMap { $0 }
        return ids.allSatisfy { (1...14).contains($0) } && Set(ids).count == ids.count
    }

    private static func field(for uri: String) -> WritableKeyPath<Self, UInt8?>? {
        switch uri {
        case HeaderExtensionURI.mid: \.mid
        case HeaderExtensionURI.rtpStreamID: \.rtpStreamID
        case HeaderExtensionURI.repairedRTPStreamID: \.repairedRTPStreamID
        case HeaderExtensionURI.absoluteSendTime: \.absoluteSendTime
        case HeaderExtensionURI.transportWideSequenceNumber: \.transportWideSequenceNumber
        case HeaderExtensionURI.audioLevel: \.audioLevel
        case HeaderExtensionURI.videoOrientation: \.videoOrientation
        case HeaderExtensionURI.absoluteCaptureTime: \.absoluteCaptureTime
        default: nil
        }
    }
}
