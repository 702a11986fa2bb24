import Foundation
import Testing

extension ChromiumSuite {
    /// Issue #18, H.264: the room page's publisher forced to H.264
    /// (`?codec=h264`: setCodecPreferences puts the mode-1 42e01f entry
    /// first; Debian's Chromium encodes it with OpenH264) sends three
    /// simulcast layers through the server; three Chromium subscribers ask
    /// for low, medium and high and decode H.264 at 320x180, 640x360 and
    /// 1280x720 (FFmpeg); two layer switches happen on IDRs without a
    /// freeze.
    @Suite struct ChromiumH264Tests {
        @Test(.timeLimit(.minutes(1)))
        func chromiumSubscribersDecodeAnH264SimulcastPublisherAndSwitchLayers() throws {
            let swiftlet = try LoopbackSwiftlet()
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_simulcast.py",
                tokens: swiftlet.tokens(for: ["publisher", "sub-low", "sub-medium", "sub-high"], room: "h264"),
                arguments: ["--codec", "h264", "--room", "h264", "--switches", "2", "--rise-seconds", "25", "--deadline", "56"],
                timeout: .seconds(58))
            #expect(result["errors"] == nil, "\(result)")
            let encodings = (result["publisherAtEnd"] as? [String: Any])?["encodings"] as? [[String: Any]] ?? []
            #expect(!encodings.isEmpty && encodings.allSatisfy { $0["codec"] as? String == "video/H264" }, "\(encodings)")
            let rise = try #require(result["riseSeconds"] as? [String: Any], "\(result)")
            #expect(Set(rise.keys) == ["low", "medium", "high"], "layers not reached: \(result["notReached"] ?? "")")

            let steady = try #require(result["steady"] as? [String: [String: Any]], "\(result)")
            for (preference, size) in [("low", (320, 180)), ("medium", (640, 360)), ("high", (1280, 720))] {
                let page = try #require(steady[preference], "\(steady)")
                let codec = page["codec"] as? String ?? ""
                #expect(codec.hasPrefix("video/H264"), "\(preference): \(page)")
                #expect(codec.contains("packetization-mode=1"), "\(preference): \(page)")
                #expect(page["frameWidth"] as? Int == size.0, "\(preference): \(page)")
                #expect(page["frameHeight"] as? Int == size.1, "\(preference): \(page)")
                #expect(page["framesRising"] as? Bool == true, "\(preference): \(page)")
                #expect(page["newFreezes"] as? Int == 0, "\(preference): \(page)")
            }

            let switches = try #require(result["switches"] as? [[String: Any]], "\(result)")
            #expect(switches.count == 2, "\(result)")
            for change in switches {
                let latency = try #require(change["latencyMs"] as? Int, "no new width within 2 s: \(change)")
                #expect(latency <= 2000, "\(change)")
                let before = change["framesDecodedBefore"] as? Int ?? 0
                #expect((change["framesDecodedAfter"] as? Int ?? 0) > before, "\(change)")
                ChromiumSuite.expectNoFreeze(during: change)
            }
            print("chromium h264: rise \(rise), switch latency \(result["switchLatencyMs"] ?? "")")
        }
    }
}
