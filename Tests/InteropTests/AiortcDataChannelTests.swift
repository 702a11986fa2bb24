import Foundation
import MediaWorker
import Testing

/// Data channels through the SFU with an independent SCTP and DCEP
/// (aiortc's own, in Python): three clients in one room, messages relayed
/// on a reliable ordered channel and an unordered channel without
/// retransmissions, with the sender's identity attached by the server; a
/// message to one named identity; a message over the size limit refused
/// with an error over the room WebSocket and the session kept.
@Suite(.serialized) struct AiortcDataChannelTests {
    @Test(.timeLimit(.minutes(1)))
    func aiortcClientsExchangeDataChannelMessagesThroughTheServer() throws {
        // Two workers with one participant each, so the relay crosses
        // workers (the rooms layer sends each recipient's copy to its own).
        let swiftlet = try LoopbackSwiftlet(workers: 2, roomSpreadAfter: 1)
        defer { swiftlet.stop() }
        let identities = ["ann", "ben", "cal"]
        let result = try swiftlet.runScript(
            "aiortc_data.py", tokens: swiftlet.tokens(for: identities, room: "data"),
            arguments: ["--identities", #"["ann","ben","cal"]"#, "--api-token", swiftlet.adminToken(room: "data")],
            timeout: .seconds(40))
        #expect((result["errors"] as? [Any])?.isEmpty == true, "\(result["errors"] ?? "")")
        let clients = try #require(result["clients"] as? [[String: Any]])
        try #require(clients.count == 3)
        func received(_ client: Int, _ label: String) -> [[String]] {
            ((clients[client]["received"] as? [String: Any])?[label] as? [[String]]) ?? []
        }
        // The server API's message reached all three, sent by nobody.
        #expect((result["api"] as? [String: Any])?["sent"] as? Int == 3, "\(result["api"] ?? "")")
        for client in 0..<3 {
            #expect(received(client, "chat").filter { $0[0].isEmpty }.map { $0[1] } == ["from the server"])
        }
        let chat = (0..<10).map { "chat \($0)" }
        // Reliable and ordered: every message, in order, from each sender.
        #expect(received(1, "chat").filter { $0[0] == "ann" }.map { $0[1] } == chat + ["only for you", "after the refusal"])
        #expect(received(0, "chat").filter { $0[0] == "ben" }.map { $0[1] } == chat)
        #expect(received(2, "chat").filter { $0[0] == "ann" }.map { $0[1] } == chat + ["after the refusal"])
        #expect(received(2, "chat").filter { $0[0] == "ben" }.map { $0[1] } == chat)
        // Unordered without retransmission: on loopback nothing is lost,
        // order is not promised.
        #expect(Set(received(1, "lossy").filter { $0[0] == "ann" }.map { $0[1] }) == Set((0..<10).map { "lossy \($0)" }))
        #expect(Set(received(0, "lossy").filter { $0[0] == "ben" }.map { $0[1] }) == Set((0..<10).map { "lossy \($0)" }))
        // The oversized message: one error to its sender, nothing relayed,
        // everyone still connected with both channels open.
        let annErrors = clients[0]["errors"] as? [[String: Any]] ?? []
        #expect(annErrors.count == 1 && annErrors.first?["code"] as? String == "too_large", "\(annErrors)")
        for client in clients {
            #expect(client["publisher"] as? String == "connected", "\(client)")
            #expect(client["channels"] as? [String: String] == ["chat": "open", "lossy": "open"], "\(client)")
            #expect(client["answerHasSCTP"] as? Bool == true)
        }
        #expect((clients[1]["errors"] as? [Any])?.isEmpty == true)
    }
}
