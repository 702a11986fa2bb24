import Foundation
import Testing

extension ChromiumSuite {
    /// Swiftlet's own call page (`/call`) in two headless Chromium tabs: A
    /// calls B and cancels while it rings, B's dialog closes; then A calls
    /// B's participant id, B answers, both decode each other; A hangs up and
    /// both see the end; a third call is declined. Saves a screenshot of A
    /// during the call (.build/artifacts).
    @Suite struct ChromiumPageCallTests {
        @Test(.timeLimit(.minutes(1)))
        func callPagesCancelConnectDecodeBothWaysHangUpAndDecline() throws {
            let swiftlet = try LoopbackSwiftlet()
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_page_call.py", tokens: swiftlet.tokens(for: ["alice", "bob"], room: "call-lobby"),
                timeout: .seconds(58))
            #expect(result["errors"] == nil, "\(result)")
            let ids = try #require(result["ids"] as? [String], "\(result)")
            try #require(ids.count == 2)
            // The cancelled call: A saw it ring with its id, B saw it come and go.
            let cancel = try #require(result["cancel"] as? [String: Any], "\(result)")
            let ringing = try #require(cancel["ringing"] as? [String: Any], "\(cancel)")
            #expect((ringing["id"] as? String ?? "").hasPrefix("CA_"), "\(ringing)")
            #expect(cancel["ringingText"] as? String == "Ringing \(ids[1])…", "\(cancel)")
            #expect(cancel["sameCall"] as? Bool == true, "\(cancel)")
            #expect(cancel["incomingShown"] as? Bool == true, "\(cancel)")
            #expect(cancel["incomingHidden"] as? Bool == true, "\(cancel)")
            #expect((cancel["a"] as? [String: Any])?["state"] as? String == "ended", "\(cancel)")
            #expect((cancel["a"] as? [String: Any])?["reason"] as? String == "cancelled", "\(cancel)")
            #expect((cancel["b"] as? [String: Any])?["reason"] as? String == "cancelled", "\(cancel)")
            let incoming = try #require(result["incoming"] as? [String: Any], "\(result)")
            #expect(incoming["peer"] as? String == ids[0])
            #expect(incoming["peerName"] as? String == "alice")
            for (side, peer, peerName) in [("a", ids[1], "bob"), ("b", ids[0], "alice")] {
                let info = try #require(result[side] as? [String: Any], "\(result)")
                let tiles = try #require(info["tiles"] as? [[String: Any]], "\(info)")
                #expect(tiles.count == 1)
                #expect(tiles.first?["participantId"] as? String == peer, "\(side): \(tiles)")
                // Named as in the lobby, not by id.
                #expect(tiles.first?["identity"] as? String == peerName, "\(side): \(tiles)")
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
