import Foundation
import Testing

extension ChromiumSuite {
    /// The room page's chat box (docs/WEB_CLIENT.md): two Chromium tabs,
    /// each a "chat" data channel on its publisher connection (Chromium's
    /// own SCTP, dcSCTP), exchange a line both ways through the server,
    /// which attaches the sender's identity.
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
        }
    }
}
