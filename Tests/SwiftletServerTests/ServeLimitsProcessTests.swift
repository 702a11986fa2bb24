import Foundation
import SFUTesting
import Testing

/// The limits of docs/SECURITY.md against the real server and its media
/// worker: refused offers leave no transport on the worker, no participant
/// and no room, as /metrics shows.
@Suite(.serialized) struct ServeLimitsProcessTests {
    private static func fixture(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../SDPTests/Fixtures/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The value of an unlabelled gauge in a /metrics response.
    private static func gauge(_ metrics: String, _ name: String) -> Int? {
        metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    /// `text` in a temporary file, for curl's `--data-binary @FILE` (one
    /// argument may not exceed 128 KiB).
    private static func bodyFile(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "swiftlet-limits-\(UUID().uuidString).sdp"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(.timeLimit(.minutes(1)))
    func offersOverTheLimitsLeaveNothingOnTheWorker() throws {
        let (process, output, url) = try startDevServer()
        defer { if process.isRunning { process.terminate() } }
        let port = try #require(url.split(separator: ":").last.flatMap { UInt16($0.prefix { $0.isNumber }) }, "\(output.text)")
        let http = "http://127.0.0.1:\(port)"

        // Alice publishes one audio track; Bob receives it: two transports
        // on the worker (her publisher's, his subscriber's).
        let alice = try ProcessTestClient(port: port)
        try #require(try alice.joinAndPublishAudio(room: "r", identity: "alice"), "\(output.text)")
        let bob = try ProcessTestClient(port: port)
        try #require(bob.join(room: "r", identity: "bob"))
        _ = bob.run(for: .milliseconds(300))
        let before = try curl(["\(http)/metrics"])
        #expect(Self.gauge(before, "swiftlet_media_transports") == 2, "\(before)")

        let base = try Self.fixture("aiortc-offer.sdp")
        let seventeen = try Self.bodyFile(OfferBuilders.repeatingFirstSection(of: base, count: 17))
        let big = try Self.bodyFile(String(repeating: "x", count: 200_000))
        defer { for path in [seventeen, big] { try? FileManager.default.removeItem(atPath: path) } }
        let whip = try curl([
            "-X", "POST", "-H", "Content-Type: application/sdp",
            "-H", "Authorization: Bearer \(ProcessTestClient.devToken(identity: "whip", room: "r"))",
            "--data-binary", "@\(seventeen)", "\(http)/whip/r",
        ])
        #expect(whip.hasPrefix("HTTP/1.1 400"), "\(whip)")
        let oversize = try curl([
            "-X", "POST", "-H", "Content-Type: application/sdp",
            "-H", "Authorization: Bearer \(ProcessTestClient.devToken(identity: "whip", room: "r"))",
            "--data-binary", "@\(big)", "\(http)/whip/r",
        ])
        #expect(oversize.hasPrefix("HTTP/1.1 413"), "\(oversize.prefix(200))")

        // A room publish with nine tracks: an error with its code.
        bob.send(["type": "publish", "sdp": OfferBuilders.repeatingFirstSection(of: base, count: 9)])
        #expect(bob.run(for: .seconds(5)) { bob.message("error") != nil })
        #expect(bob.message("error")?["code"] as? String == "too_many_tracks")

        _ = alice.run(for: .milliseconds(300))
        let after = try curl(["\(http)/metrics"])
        #expect(Self.gauge(after, "swiftlet_media_transports") == 2, "\(after)")
        #expect(Self.gauge(after, "swiftlet_participants") == 2)
        #expect(Self.gauge(after, "swiftlet_rooms") == 1)
        #expect(output.text.contains("WHIP request refused") && output.text.contains("status=400"))
    }
}
