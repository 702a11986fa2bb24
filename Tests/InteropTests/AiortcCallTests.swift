import Foundation
import MediaWorker
import RoomProtocol
import Rooms
import Testing

/// A one-to-one call with independent clients: two aiortc peers in an SFU
/// lobby; one calls the other by participant id, the other answers, both
/// move to the private call room, publish there and decode each other
/// through the SFU; then the caller hangs up and both return to the lobby.
/// Scripts/interop/aiortc_call.py drives the clients.
@Suite(.serialized) struct AiortcCallTests {
    @Test(.timeLimit(.minutes(1)))
    func twoAiortcClientsCallEachOtherThroughTheServer() throws {
        let swiftlet = try LoopbackSwiftlet()
        defer { swiftlet.stop() }
        let result = try swiftlet.runScript(
            "aiortc_call.py", tokens: swiftlet.tokens(for: ["ann", "ben"], room: "lobby"), timeout: .seconds(40))
        #expect((result["errors"] as? [Any])?.isEmpty == true, "\(result["errors"] ?? "")")
        let clients = try #require(result["clients"] as? [[String: Any]])
        try #require(clients.count == 2)
        let caller = try #require(clients[0]["id"] as? String)
        let callee = try #require(clients[1]["id"] as? String)
        let steps = try #require(result["steps"] as? [String: Any])

        // Both in the lobby, an SFU room; the callee sees the caller there.
        let lobby = try #require(steps["lobby"] as? [[String: Any]])
        #expect(lobby.map { $0["room"] as? String } == ["lobby", "lobby"])
        #expect(lobby.map { $0["mode"] as? String } == ["sfu", "sfu"])
        #expect(lobby.map { $0["others"] as? [String] } == [[], [caller]])

        // Calling an id nobody has is refused.
        let unknown = try #require(steps["unknownCall"] as? [String: Any])
        #expect(unknown["type"] as? String == "error")
        #expect(unknown["code"] as? String == "unknown_participant", "\(unknown)")

        // Ringing, answering, and both told the private room.
        let incoming = try #require(steps["incoming"] as? [String: Any])
        let callID = try #require(incoming["callId"] as? String)
        #expect(callID.hasPrefix("CA_") && callID.count == 15, "\(callID)")
        #expect(incoming["from"] as? String == caller)
        #expect(incoming["identity"] as? String == "ann")
        let started = try #require(steps["started"] as? [[String: Any]])
        #expect(started.map { $0["callId"] as? String } == [callID, callID])
        #expect(started.map { $0["room"] as? String } == ["call/\(callID)", "call/\(callID)"])
        #expect(started.map { $0["peer"] as? String } == [callee, caller])

        // Each decodes the other's tone: one remote track, ~50 frames a
        // second for 3 s.
        for client in clients {
            let frames = client["frames"] as? [String: Int] ?? [:]
            #expect(frames.count == 1, "\(client)")
            for (track, count) in frames { #expect(count >= 60, "\(client["id"] ?? "?") got \(count) frames of \(track)") }
            #expect((client["leftover"] as? [Any])?.isEmpty == true, "unexpected messages: \(client)")
            // No subscriber offer for the call room after call-ended.
            #expect(client["lateOffers"] as? Int == 0, "\(client)")
        }

        // The hangup ends the call for both, and each gets the lobby back.
        let ended = try #require(steps["ended"] as? [[String: Any]])
        #expect(ended.map { $0["callId"] as? String } == [callID, callID])
        #expect(ended.map { $0["reason"] as? String } == ["hangup", "hangup"])
        let back = try #require(steps["back"] as? [[String: Any]])
        #expect(back.map { $0["room"] as? String } == ["lobby", "lobby"])
        #expect(back.map { $0["resumed"] as? Bool } == [true, true])
        // The caller returns first (the callee is still in the call room).
        #expect(back.map { $0["others"] as? [String] } == [[], [caller]])

        // Media went through the SFU, and only in the call room: nobody
        // published in the lobby. Each side had a publisher and a
        // subscriber transport there.
        let opened = swiftlet.commands.compactMap(\.openedTransportRoom)
        #expect(opened == Array(repeating: "call/\(callID)", count: 4), "\(opened)")
        let released = swiftlet.commands.compactMap { command -> String? in
            if case .releaseParticipant(let room, let participant) = command, room == "call/\(callID)" {
                return participant.rawValue
            }
            return nil
        }
        #expect(Set(released) == [caller, callee])
        let counters = swiftlet.media.counters()
        #expect(counters.first.map { $0.forwarded > 0 } == true, "\(counters)")
    }
}
