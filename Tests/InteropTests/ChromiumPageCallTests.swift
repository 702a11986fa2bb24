import Foundation
import Testing

extension ChromiumSuite {
    /// Swiftlet's own call page (`/call`) in two headless Chromium tabs,
    /// showing names, never raw ids: A is refused calling itself; A clicks
    /// B's lobby tile and cancels while it rings, B's dialog closes; then A
    /// calls B's participant id, B answers, both decode each other; A hangs
    /// up and both see the end; a third call, by name, is declined. Saves
    /// screenshots of A's lobby and of A during the call (.build/artifacts).
    @Suite struct ChromiumPageCallTests {
        @Test(.timeLimit(.minutes(1)))
        func callPagesCancelConnectDecodeBothWaysHangUpAndDecline() throws {
            let swiftlet = try LoopbackSwiftlet()
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_page_call.py", tokens: swiftlet.tokens(for: ["alice", "bob"], room: "call-lobby"),
                timeout: .seconds(58))
            #expect(result["errors"] == nil, "\(result)")
            #expect(result["consoleErrors"] as? [String] == [], "\(result["consoleErrors"] ?? "missing")")
            let ids = try #require(result["ids"] as? [String], "\(result)")
            try #require(ids.count == 2)
            // The cancelled call: A saw it ring with its id, B saw it come and go.
            let cancel = try #require(result["cancel"] as? [String: Any], "\(result)")
            let ringing = try #require(cancel["ringing"] as? [String: Any], "\(cancel)")
            #expect((ringing["id"] as? String ?? "").hasPrefix("CA_"), "\(ringing)")
            // Names, not PA_ ids.
            #expect(cancel["ringingText"] as? String == "Ringing bob…", "\(cancel)")
            #expect(cancel["callerText"] as? String == "Incoming call from alice", "\(cancel)")
            let lobby = try #require(result["lobby"] as? [String: Any], "\(result)")
            #expect(lobby["ownName"] as? String == "alice", "\(lobby)")
            let selfCall = try #require(result["self"] as? [String: Any], "\(result)")
            #expect(selfCall["byId"] as? Bool == false && selfCall["byName"] as? Bool == false, "\(selfCall)")
            #expect(selfCall["message"] as? String == "You can't call yourself: pick someone else.", "\(selfCall)")
            #expect((selfCall["call"] as? [String: Any])?["state"] as? String == "idle", "\(selfCall)")
            let inCall = try #require(result["inCall"] as? [String: String], "\(result)")
            #expect(inCall == ["a": "In a call with bob", "b": "In a call with alice"], "\(inCall)")
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
            print("call page screenshots: \(lobby["screenshot"] ?? ""), \(screenshot)")
        }
    }
}
