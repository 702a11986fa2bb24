import Foundation
import Testing

extension ChromiumSuite {
    /// The room page's chat box (docs/WEB_CLIENT.md): two Chromium tabs,
    /// each a "chat" data channel on its publisher connection (Chromium's
    /// own SCTP, dcSCTP), exchange a line both ways through the server,
    /// which attaches the sender's identity; then ten messages each way on
    /// an unordered channel without retransmissions, opened afterwards.
    @Suite struct ChromiumPageChatTests {
        @Test(.timeLimit(.minutes(1)))
        func twoRoomPagesChatBothWaysThroughTheServer() throws {
            let swiftlet = try LoopbackSwiftlet()
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_page_chat.py", tokens: swiftlet.tokens(for: ["dana", "eli"], room: "page-chat"),
                timeout: .seconds(55))
            #expect(result["errors"] == nil, "\(result)")
            let chats = try #require(result["chats"] as? [[[String: Any]]], "\(result)")
            try #require(chats.count == 2)
            for (i, name) in ["dana", "eli"].enumerated() {
                let other = i == 0 ? "eli" : "dana"
                #expect(
                    chats[i].contains { $0["from"] as? String == other && $0["text"] as? String == "hello from \(other)" },
                    "\(chats[i])")
                #expect(chats[i].contains { $0["own"] as? Bool == true && $0["text"] as? String == "hello from \(name)" })
            }
            // Unordered, no retransmission: all ten on loopback, any order.
            let unordered = try #require(result["unordered"] as? [[[String]]], "\(result)")
            for (i, other) in ["eli", "dana"].enumerated() {
                let texts = Set(unordered[i].filter { $0.first == other }.map { $0.last ?? "" })
                #expect(texts == Set(["first from \(other)"] + (1..<10).map { "\($0) from \(other)" }), "\(unordered[i])")
            }
        }
    }
}
