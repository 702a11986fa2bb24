import RTP
import SDP

/// The RTP header extensions (RFC 8285) we accept in one m-section, with
/// the ids the client chose. The answer echoes the offered ids (RFC 8285
/// section 6), so one id means one extension in both directions and across
/// every bundled m-section.
package struct HeaderExtensionIDs: Equatable, Sendable {
    package var mid: UInt8?
    package var rtpStreamID: UInt8?
    package var repairedRTPStreamID: UInt8?
    package var absoluteSendTime: UInt8?
    package var transportWideSequenceNumber: UInt8?
    package var audioLevel: UInt8?
    package var videoOrientation: UInt8?
    package var absoluteCaptureTime: UInt8?
    /// The accepted `a=extmap` lines, in the offer's order.
    package var maps: [ExtensionMap]

    package init(maps: [ExtensionMap] = []) {
        self.maps = []
        for m in maps { add(m) }
    }

    /// The URIs the SFU reads or rewrites, by media kind: mid on both,
    /// rid and repaired rid (RFC 8852) on video, abs-send-time and
    /// transport-wide cc for congestion control on both, audio level
    /// (RFC 6464) on audio, video orientation (3GPP TS 26.114) on video,
    /// abs-capture-time on both (passed through to subscribers).
    package static func accepts(_ uri: String, for kind: MediaKind) -> Bool {
        switch uri {
        case HeaderExtensionURI.mid, HeaderExtensionURI.absoluteSendTime, HeaderExtensionURI.transportWideSequenceNumber,
            HeaderExtensionURI.absoluteCaptureTime:
            return true
        case HeaderExtensionURI.rtpStreamID, HeaderExtensionURI.repairedRTPStreamID, HeaderExtensionURI.videoOrientation:
            return kind == .video
        case HeaderExtensionURI.audioLevel:
            return kind == .audio
        default:
            return false
        }
    }

    /// Records `map` unless its URI or id is already taken (the first wins).
    mutating func add(_ map: ExtensionMap) {
        guard !maps.contains(where: { $0.uri == map.uri || $0.id == map.id }) else { return }
        maps.append(map)
        switch map.uri {
        case HeaderExtensionURI.mid: mid = map.id
        case HeaderExtensionURI.rtpStreamID: rtpStreamID = map.id
        case HeaderExtensionURI.repairedRTPStreamID: repairedRTPStreamID = map.id
        case HeaderExtensionURI.absoluteSendTime: absoluteSendTime = map.id
        case HeaderExtensionURI.transportWideSequenceNumber: transportWideSequenceNumber = map.id
        case HeaderExtensionURI.audioLevel: audioLevel = map.id
        case HeaderExtensionURI.videoOrientation: videoOrientation = map.id
        case HeaderExtensionURI.absoluteCaptureTime: absoluteCaptureTime = map.id
        default: break
        }
    }
}
