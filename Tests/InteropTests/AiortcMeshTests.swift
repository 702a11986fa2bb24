import Foundation
import MediaRouter
import MediaWorker
import RoomProtocol
import Rooms
import Testing

/// A mesh room with independent clients: three aiortc peers join a room
/// created with `"mode": "mesh"`, set up one direct PeerConnection per pair
/// through the server's `mesh-signal` relay, and each decodes the other
/// two's tones. The server carries signalling only: no media command, no
/// transport, no packet. Scripts/interop/aiortc_mesh.py drives the clients.
/// (The six-member limit, `room_full`, is covered by RoomDirectoryTests.)
@Suite(.serialized) struct AiortcMeshTests {
    @Test(.timeLimit(.minutes(1)))
    func threeAiortcClientsInAMeshRoomEachDecodeTheOtherTwoPeerToPeer() throws {
        let swiftlet = try LoopbackSwiftlet()
        defer { swiftlet.stop() }
        let result = try swiftlet.runScript(
            "aiortc_mesh.py", tokens: swiftlet.tokens(for: ["ann", "ben", "cal"], room: "mesh"), timeout: .seconds(40))
        #expect((result["errors"] as? [Any])?.isEmpty == true, "\(result["errors"] ?? "")")
        let clients = try #require(result["clients"] as? [[String: Any]])
        try #require(clients.count == 3)
        let ids = try clients.map { try #require($0["id"] as? String) }
        let mediaPort = Int(try #require(swiftlet.media.localAddresses.first).port)

        // Joined in order, each later member offered to the earlier ones:
        // ann answers two offers, ben one (and gets one answer), cal gets
        // two answers. No candidate is trickled (aiortc puts them all in
        // the SDP).
        let signals = clients.map { $0["signals"] as? [String: Int] ?? [:] }
        #expect(
            signals == [
                ["offer": 2, "answer": 0, "candidate": 0], ["offer": 1, "answer": 1, "candidate": 0],
                ["offer": 0, "answer": 2, "candidate": 0],
            ])
        for (index, client) in clients.enumerated() {
            let others = Set(ids.enumerated().filter { $0.offset != index }.map(\.element))
            #expect(client["mode"] as? String == "mesh")
            #expect((client["errors"] as? [Any])?.isEmpty == true, "\(client)")
            // One PeerConnection per other member, connected directly: its
            // ICE pair points at the peer, never at the server's media port.
            let connections = client["connections"] as? [String: String] ?? [:]
            #expect(connections == Dictionary(uniqueKeysWithValues: others.map { ($0, "connected") }), "\(client)")
            let ports = client["remotePorts"] as? [String: Int] ?? [:]
            #expect(Set(ports.keys) == others, "\(client)")
            #expect(!ports.values.contains(mediaPort), "\(client)")
            // ~50 frames a second from each of the two others for 3 s.
            let frames = client["frames"] as? [String: Int] ?? [:]
            #expect(Set(frames.keys) == others, "\(client)")
            for (peer, count) in frames { #expect(count >= 60, "\(ids[index]) got \(count) frames from \(peer)") }
        }

        // The server forwarded nothing and opened no transport.
        #expect(swiftlet.commands.isEmpty, "\(swiftlet.commands)")
        #expect(swiftlet.media.counters() == [RoomMediaCounters()])
    }
}
