import BotMedia
import Testing
import Wire

@testable import RoomBot

/// issue #14's roombot options: `--light`/`--decode-every`,
/// `--video-kbps`/`--fps`, `--threads`, and what they decide.
@Suite struct RoomBotLoadOptionsTests {
    private let base = "--url ws://127.0.0.1:7880/rtc --room r --dev"

    private func parse(_ extra: String) throws(BotOptions.Invalid) -> BotOptions {
        try BotOptions.parse((base + " " + extra).split(separator: " ").map(String.init))
    }

    private func invalid(_ extra: String) -> String? {
        do {
            _ = try parse(extra)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func defaultsAndValues() throws {
        let d = try parse("")
        #expect(!d.light && d.decodeEvery == 20 && d.threads == 1 && d.videoKbps == nil && d.framesPerSecond == nil)
        let o = try parse("--light --decode-every 0 --threads 4 --video-kbps 6000 --fps 60")
        #expect(o.light && o.decodeEvery == 0 && o.threads == 4 && o.videoKbps == 6000 && o.framesPerSecond == 60)
    }

    @Test func badValuesAreRefused() {
        #expect(invalid("--decode-every 5")?.contains("--light") == true)
        #expect(invalid("--light --decode-every -1")?.contains("--decode-every") == true)
        #expect(invalid("--threads 0")?.contains("--threads") == true)
        #expect(invalid("--threads 65")?.contains("at most 64") == true)
        #expect(invalid("--video-kbps 10")?.contains("--video-kbps") == true)
        #expect(invalid("--video-kbps 100001")?.contains("--video-kbps") == true)
        #expect(invalid("--fps 0")?.contains("--fps") == true)
        #expect(invalid("--fps 121")?.contains("at most 120") == true)
        #expect(invalid("--video-kbps 500 --audio-only")?.contains("--audio-only") == true)
        #expect(invalid("--fps 15 --video-codec h264")?.contains("VP8") == true)
        #expect(invalid("--threads")?.contains("needs a value") == true)
    }

    /// The first subscriber of every `decodeEvery` decodes; the rest are
    /// light; 0 makes all light; without --light none are.
    @Test func theDecodedSample() throws {
        let o = try parse("--light --decode-every 3")
        #expect((0..<7).map { o.isLight(subscriberIndex: $0) } == [false, true, true, false, true, true, false])
        let none = try parse("--light --decode-every 0")
        #expect((0..<4).allSatisfy { none.isLight(subscriberIndex: $0) })
        let off = try parse("")
        #expect(!(0..<4).contains { off.isLight(subscriberIndex: $0) })
    }

    /// Top layer at K, the others K/3 and K/10, every layer at F with a
    /// keyframe every 2 s in whole temporal cycles; defaults untouched.
    @Test func pacedPresets() throws {
        let o = try parse("--video-kbps 6000 --fps 25")
        let p = ClipLibrary.presets(o)
        #expect(p.map(\.targetBitrate) == [.kbps(600), .kbps(2000), .kbps(6000)])
        #expect(p.allSatisfy { $0.framesPerSecond == 25 && $0.keyframeInterval == 52 && $0.grain > 0 })
        let single = ClipLibrary.presets(try parse("--no-simulcast --video-kbps 3000"))
        #expect(single.map(\.targetBitrate) == [.kbps(3000)] && single[0].framesPerSecond == 30)
        #expect(ClipLibrary.presets(try parse("")) == VideoClipPreset.simulcast)
        // Paced clips are cached apart from the default ones.
        #expect(ClipLibrary.fileName(p[2], codec: .vp8).contains("-g"))
        #expect(!ClipLibrary.fileName(.high, codec: .vp8).contains("-g"))
    }

    /// Bots dealt round robin: every loop gets a share, none twice.
    @Test func dealingBotsOverLoops() {
        #expect(BotLoopGroup.deal(5, over: 2) == [[0, 2, 4], [1, 3]])
        #expect(BotLoopGroup.deal(3, over: 3) == [[0], [1], [2]])
        #expect(BotLoopGroup.deal(4, over: 1) == [[0, 1, 2, 3]])
    }

    @Test func progressSamplesMerge() {
        let a = LiveProgress.Sample(
            joined: 2, bots: 3, connected: 2, announced: 4, flowing: 4, mbps: 3, lossPercent: 0, errors: 1)
        var b = LiveProgress.Sample(
            joined: 1, bots: 1, connected: 1, announced: 2, flowing: 1, mbps: 1, lossPercent: 4, errors: 0)
        b.publishing = true
        b.sentMbps = 2
        let m = LiveProgress.Sample.merged([a, b])
        #expect(m.joined == 3 && m.bots == 4 && m.connected == 3 && m.announced == 6 && m.flowing == 5 && m.errors == 1)
        #expect(m.mbps == 4 && m.publishing && m.sentMbps == 2)
        #expect(abs(m.lossPercent - 1) < 1e-6)
    }
}
