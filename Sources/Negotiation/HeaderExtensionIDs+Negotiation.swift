import RTP
import SDP

extension HeaderExtensionIDs {
    /// The ids of `maps` after `ExtensionMap.firstOfEach`: an `a=extmap`
    /// whose URI or id an earlier one took sets nothing.
    package init(maps: [ExtensionMap]) {
        self.init()
        for m in ExtensionMap.firstOfEach(maps) { assign(m.id, to: m.uri) }
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
}

extension ExtensionMap {
    /// `maps` in order without any line whose URI or id an earlier line
    /// already took: the first wins. One id names one extension and one
    /// extension has one id across the bundle (RFC 8285 section 6), so a
    /// later duplicate is dropped rather than answered.
    static func firstOfEach(_ maps: [ExtensionMap]) -> [ExtensionMap] {
        var kept: [ExtensionMap] = []
        for map in maps where !kept.contains(where: { $0.uri == map.uri || $0.id == map.id }) { kept.append(map) }
        return kept
    }
}
