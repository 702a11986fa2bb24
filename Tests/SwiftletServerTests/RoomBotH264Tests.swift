import Foundation
import Negotiation
import Testing

@testable import RoomBot

/// roombot publishing and receiving H.264 (`--video-codec h264`) through
/// the real dev server: three simulcast layers encoded with libopenh264,
/// packetized per RFC 6184 mode 1, forwarded by the SFU, rebuilt and
/// decoded with libopenh264 by the subscriber, which sees the layer it
/// asked for in the decoded picture height.
///
/// The SFU starts a subscriber, and switches a simulcast layer, at the
/// packet of an IDR picture that carries its SPS and PPS (the STAP-A before
/// the IDR's FU-A fragments): this run caught it starting at the FU-A, which
/// cost every switch a keyframe wait (docs/SIMULCAST.md, "Codecs").
///
/// In RoomBotMediaTests's serialized suite: the VP8 room test and these
/// load the same two cores with real media and must not run at once.
extension RoomBotMediaTests {
    /// Runs roombot to its end (bounded by its own --duration, killed
    /// after `limit` seconds); returns its exit status, output and JSON.
    private func runH264Bot(_ arguments: [String], limit: Double = 60) throws -> (Int32, String, [String: Any]) {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-h264-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache")
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = arguments + ["--cache-dir", cache.path, "--json", json.path]
        let output = Pipe()
        bot.standardOutput = output
        bot.standardError = output
        try bot.run()
        let killer = DispatchWorkItem { if bot.isRunning { bot.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: killer)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bot.waitUntilExit()
        killer.cancel()
        let summary = (try? JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]) ?? [:]
        return (bot.terminationStatus, text, summary)
    }

    @Test func simulcastH264IsDecodedAtTheRequestedLayersHeight() throws {
        let (server, _, url) = try startDevServer()
        defer { server.terminate() }
        try #require(url.hasPrefix("ws://"))
        // maxLayer cycles 1, 2, 1, 0, 1 at 2, 4, 6, 8 and 10 s; the
        // subscribers' transport-cc feedback lets the server's estimate
        // grow to the 720p layer (1.1 Mbit/s) once it has probed.
        let (status, text, summary) = try runH264Bot([
            "--url", url, "--room", "ci-h264", "--dev", "--publishers", "1", "--subscribers", "2", "--duration", "12",
            "--video-codec", "h264", "--switch-every", "2", "--max-loss", "1",
        ])
        #expect(status == 0, "roombot output:\n\(text)")
        let groups = try #require(summary["groups"] as? [String: Any], "roombot output:\n\(text)")
        let subscribers = try #require(groups["subscriber"] as? [String: Any])
        #expect(subscribers["tracksFlowing"] as? Int == 4)
        // 2 subscribers x ~10 s at 30 fps, less the first keyframe wait.
        let frames = try #require(subscribers["videoFramesComplete"] as? Int)
        #expect(frames > 400, "roombot output:\n\(text)")
        // A switch that started after the parameter sets would cost a
        // keyframe wait (10 to 25 frames each); one at the SPS costs none.
        // A frame given up for a packet lost on a loaded machine costs a
        // wait of its own (this assembler does not wait for RTX): allowed
        // per frame given up, so only a switch's wait fails the test.
        let undecodable = subscribers["framesUndecodable"] as? Int ?? -1
        let givenUp = subscribers["framesIncomplete"] as? Int ?? 0
        #expect(undecodable >= 0 && undecodable <= 2 + 30 * givenUp, "roombot output:\n\(text)")
        #expect((subscribers["keyframes"] as? Int ?? 0) >= 2)
        // Each video track ends on a simulcast layer's height, decoded.
        let heights = try #require(subscribers["videoHeights"] as? [String: Int])
        #expect(heights.values.reduce(0, +) == 2 && heights.keys.allSatisfy { ["180", "360", "720"].contains($0) })
        // A switch is timed when the first frame of the requested height
        // decodes.
        let switchMs = try #require(subscribers["switchMs"] as? [String: Any])
        #expect((switchMs["count"] as? Int ?? 0) >= 2, "roombot output:\n\(text)")
        #expect(subscribers["switchesNotOnKeyframe"] as? Int == 0)
    }

    @Test func whipPublisherAndWHEPViewerUseH264() throws {
        let (server, _, url) = try startDevServer()
        defer { server.terminate() }
        let http = url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/rtc", with: "")
        let (status, text, summary) = try runH264Bot([
            "--url", http, "--room", "ci-h264-whip", "--dev", "--whip", "--whep", "--publishers", "1",
            "--subscribers", "1", "--duration", "6", "--video-codec", "h264", "--no-simulcast",
        ])
        #expect(status == 0, "roombot output:\n\(text)")
        let groups = try #require(summary["groups"] as? [String: Any], "roombot output:\n\(text)")
        let subscribers = try #require(groups["subscriber"] as? [String: Any])
        #expect((subscribers["videoFramesComplete"] as? Int ?? 0) > 100, "roombot output:\n\(text)")
        #expect(subscribers["videoHeights"] as? [String: Int] == ["360": 1])
        #expect(subscribers["framesIncomplete"] as? Int == 0)
        // At most one keyframe wait at the start: a viewer that joins a
        // single-layer publisher mid-stream is forwarded its delta frames
        // until the IDR its PLI brings (about 20 frames; 0 when it joins
        // before the publisher's first IDR).
        #expect((0..<45).contains(subscribers["framesUndecodable"] as? Int ?? -1), "roombot output:\n\(text)")
    }
}

@Suite struct RoomBotVideoCodecOptionTests {
    @Test func videoCodecOptionPicksTheOfferedCodec() throws {
        let base = ["--url", "ws://127.0.0.1:1/rtc", "--room", "r", "--dev"]
        #expect(try BotOptions.parse(base).videoCodec == .vp8)
        #expect(try BotOptions.parse(base).offeredVideoCodec == ClientOfferBuilder.vp8)
        let h264 = try BotOptions.parse(base + ["--video-codec", "h264"])
        #expect(h264.offeredVideoCodec == ClientOfferBuilder.h264)
        #expect(ClipLibrary.presets(h264).map(\.height) == [180, 360, 720])
        #expect(ClipLibrary.presets(h264).allSatisfy { $0.temporalLayers == 1 })
        #expect(ClipLibrary.fileName(ClipLibrary.presets(h264)[2], codec: .h264).hasPrefix("h264-1280x720-30fps-1125000bps-tl1"))
        #expect(throws: BotOptions.Invalid(description: "--video-codec wants vp8 or h264, got 'vp9'")) {
            try BotOptions.parse(base + ["--video-codec", "vp9"])
        }
    }
}
