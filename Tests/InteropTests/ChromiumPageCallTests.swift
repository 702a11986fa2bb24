import Foundation
import Testing

extension ChromiumSuite {
    /// Swiftlet's own call page (`/call`) in two headless Chromium tabs: A
    /// calls B's participant id, B answers, both decode each other; A hangs up
    /// and both see the end; a second call is declined. Saves a screenshot of
    /// A during the call (.build/artifacts).
    @Suite struct ChromiumPageCallTests {
        @Test(.timeLimit(.minutes(1)))
        func callPagesConnectDecodeBothWaysHangUpAndDecline() throws {
            let swiftlet = try LoopbackSwiftlet()
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_page_call.py", tokens: swiftlet.tokens(for: ["alice", "bob"], room: "call-lobby"),
                timeout: .seconds(58))
            #expect(result["errors"] == nil, "\(result)")
            let ids = try #require(result["ids"] as? [String], "\(result)")
            try #require(ids.count == 2)
            let incoming = try #require(result["incoming"] as? [String: Any], "\(result)")
            #expect(incoming["peer"] as? String == ids[0])
            #expect(incoming["peerName"] as? String == "alice")
            for (side, peer) in [("a", ids[1]), ("b", ids[0])] {
                let info = try #require(result[side] as? [String: Any], "\(result)")
                let tiles = try #require(info["tiles"] as? [[String: Any]], "\(info)")
                #expect(tiles.count == 1)
                #expect(tiles.first?["participantId"] as? String == peer, "\(side): \(tiles)")
                #expect((tiles.first?["framesDecoded"] as? Int ?? 0) > 0, "\(side): \(tiles)")
                #expect((tiles.first?["frameWidth"] as? Int ?? 0) > 0, "\(side): \(tiles)")
                let end = try #require(info["end"] as? [String: Any])
                #expect(end["state"] as? String == "ended")
            }
            let b = try #require(result["b"] as? [String: Any])
            #expect((b["end"] as? [String: Any])?["reason"] as? String == "hangup")
            #expect((result["declined"] as? [String: Any])?["state"] as? String == "declined")
            let screenshot = try #require(result["screenshot"] as? String)
            #expect(FileManager.default.fileExists(atPath: screenshot))
            print("call page screenshot: \(screenshot)")
        }
    }
}
