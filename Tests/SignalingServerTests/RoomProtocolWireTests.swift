import Foundation
import NetIO
import RoomProtocol
import Rooms
import Signaling
import SignalingServer
import Testing

/// The room protocol's codec on both ends of a real server: what roombot
/// writes (`ClientMessage.json`) the server reads, and everything the
/// server sends decodes as `ServerMessage` (roombot's reader) to what the
/// exchange should produce.
@Suite(.serialized) struct RoomProtocolWireTests {
    private static let turn = [ICEServer(urls: ["turn:127.0.0.1:3478?transport=udp"], username: "1:x", credential: "c")]

    private func token(_ identity: String) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "k", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: "r",
                grants: AccessTokenGrants(publish: true, subscribe: true)),
            secret: "s")
    }

    private func receive(_ socket: BlockingWebSocket) throws -> ServerMessage {
        let text = try #require(socket.nextText(), "no message from the server")
        return try ServerMessage(json: text)
    }

    @Test func theServerReadsRoombotsMessagesAndRoombotReadsTheServers() throws {
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(), iceServers: { _ in Self.turn })
        defer { server.stop() }
        let alice = try BlockingWebSocket(server)
        let bob = try BlockingWebSocket(server)
        try #require(alice.refusal == nil && bob.refusal == nil)

        alice.send(try ClientMessage.join(token: token("alice"), mode: nil).json())
        guard case .joined(let aliceID, "r", .sfu, [], false) = try receive(alice) else {
            Issue.record("alice did not join")
            return
        }
        bob.send(try ClientMessage.join(token: token("bob"), mode: .sfu).json())
        guard case .joined(let bobID, "r", .sfu, let others, false) = try receive(bob) else {
            Issue.record("bob did not join")
            return
        }
        #expect(others == [ParticipantInfo(id: aliceID, identity: "alice")])
        #expect(try receive(alice) == .participantJoined(ParticipantInfo(id: bobID, identity: "bob")))

        alice.send(try ClientMessage.ping.json())
        #expect(try receive(alice) == .pong)

        alice.send(try ClientMessage.call(to: bobID).json())
        guard case .callRinging(let call, bobID, "bob") = try receive(alice) else {
            Issue.record("no ringing")
            return
        }
        #expect(try receive(bob) == .incomingCall(callID: call, from: aliceID, identity: "alice"))
        bob.send(try ClientMessage.declineCall(call).json())
        #expect(try receive(alice) == .callDeclined(callID: call))

        // The server's refusals are typed errors of the same codec.
        alice.send(#"{"type":"dance"}"#)
        #expect(
            try receive(alice) == .error(code: .badRequest, message: "not a room protocol message: unknown message type 'dance'"))
        alice.send(#"{"type":"publish"}"#)
        #expect(try receive(alice) == .error(code: .badRequest, message: "not a room protocol message: missing 'sdp'"))
        alice.send(#"{"type":"leave","x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}")
        #expect(
            try receive(alice)
                == .error(code: .badRequest, message: "not a room protocol message: nested deeper than 32 arrays or objects"))

        bob.send(try ClientMessage.leave.json())
        #expect(try receive(alice) == .participantLeft(bobID))
    }
}
