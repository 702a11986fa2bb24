import Testing
import Wire

@testable import RoomBot

/// Subscribers read abs-capture-time under the id the subscriber offer
/// maps it to, per mid, like the other extension ids.
@Suite struct RoomBotAbsCaptureTimeTests {
    private func offer(audioExtmap: String?, videoExtmap: String?) -> String {
        var lines = ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1"]
        lines += ["m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:0"]
        if let audioExtmap { lines.append(audioExtmap) }
        lines += ["a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid", "a=sendonly", "a=rtpmap:111 opus/48000/2"]
        lines += ["m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:1"]
        if let videoExtmap { lines.append(videoExtmap) }
        lines += ["a=sendonly", "a=rtpmap:96 VP8/90000"]
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    @Test func idsComeFromEachSectionsExtmap() throws {
        let ids = try #require(
            absCaptureTimeIDs(
                sdp: offer(
                    audioExtmap: "a=extmap:9 http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time",
                    videoExtmap: "a=extmap:12 http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time")))
        #expect(ids == ["0": 9, "1": 12])
    }

    @Test func sectionWithoutTheExtmapHasNoID() throws {
        let ids = try #require(
            absCaptureTimeIDs(
                sdp: offer(
                    audioExtmap: "a=extmap:9 http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time",
                    videoExtmap: nil)))
        #expect(ids == ["0": 9])
        #expect(try #require(absCaptureTimeIDs(sdp: offer(audioExtmap: nil, videoExtmap: nil))).isEmpty)
    }

    @Test func unparsableSDPGivesNil() {
        #expect(absCaptureTimeIDs(sdp: "not sdp") == nil)
    }
}
