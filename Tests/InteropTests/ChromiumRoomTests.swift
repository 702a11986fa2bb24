import Foundation
import Testing

extension ChromiumSuite {
    /// Headless Chromium through the SFU: one page, two room clients. The first
    /// publishes the fake camera (VP8) and microphone; the second receives them
    /// on its subscriber transport and decodes them (getStats).
    @Suite struct ChromiumRoomTests {
        /// Also with the media on the dual-stack wildcard announcing
        /// 127.0.0.1: Chromium against the per-datagram local addresses,
        /// the ::ffff: mapping and IP_PKTINFO sources. (On loopback the
        /// kernel's own choice of source is right too, so this does not
        /// show the wrong-source failure: WildcardNamespaceTests does.)
        @Test(.timeLimit(.minutes(1)), arguments: [("127.0.0.1", nil), ("::", "127.0.0.1")] as [(String, String?)])
        func chromiumPublishesCameraAndMicrophoneAndChromiumDecodesThem(mediaBind: String, announcedIP: String?) throws {
            let swiftlet = try LoopbackSwiftlet(mediaBind: mediaBind, announcedIP: announcedIP)
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_room.py", tokens: swiftlet.tokens(for: ["camera", "viewer"], room: "browsers"), timeout: .seconds(55))
            #expect(result["errors"] == nil, "\(result)")
            #expect(result["publisher"] as? String == "connected", "\(result)")
            #expect(result["subscriber"] as? String == "connected", "\(result)")
            let video = try #require(result["video"] as? [String: Any], "no inbound video: \(result)")
            // The fake camera runs at about 20-30 fps; the page waits 4 s.
            #expect((video["framesDecoded"] as? Int ?? 0) >= 30, "\(video)")
            #expect(video["frameWidth"] as? Int == 640)
            #expect(video["frameHeight"] as? Int == 360)
            let audio = try #require(result["audio"] as? [String: Any], "no inbound audio: \(result)")
            #expect((audio["packetsReceived"] as? Int ?? 0) >= 100, "\(audio)")
        }
    }
}
