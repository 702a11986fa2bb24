import DTLS
import Foundation
import MediaWorker
import NetIO
import Rooms
import Signaling
import SignalingServer
import Testing

/// The whole SFU path with independent clients: three aiortc peers join one
/// room over the WebSocket protocol, each publishes an Opus tone, and each
/// decodes the other two through the server (publisher offers answered by
/// Negotiation, subscriber offers with a=ssrc, forwarding in the worker).
@Suite(.serialized) struct AiortcRoomTests {
    @Test(.timeLimit(.minutes(1)))
    func threeAiortcClientsInOneRoomEachDecodeTheOtherTwo() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let python = root.appendingPathComponent(".venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "run Scripts/setup: \(python.path) is missing")

        let certificate = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970))
        let media = try MediaPlane(count: 1, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        defer { media.stop() }
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: media.endpoint), media: { media.post($0) })
        defer { server.stop() }

        let now = Int64(Date().timeIntervalSince1970)
        let tokens = ["ann", "ben", "cal"].map {
            AccessToken.mint(
                claims: AccessTokenClaims(
                    issuer: "k", subject: $0, notBefore: now - 5, expiresAt: now + 600, room: "room",
                    grants: AccessTokenGrants(publish: true, subscribe: true)),
                secret: "s")
        }
        let peers = try JSONLineProcess(
            executable: python,
            arguments: [
                root.appendingPathComponent("Scripts/interop/aiortc_room.py").path,
                "--url", "ws://127.0.0.1:\(server.localAddress.port)/rtc",
                "--tokens", String(decoding: try JSONEncoder().encode(tokens), as: UTF8.self),
            ],
            workingDirectory: root)
        let result = try peers.receive("the room result", timeout: .seconds(50))
        #expect((result["errors"] as? [Any])?.isEmpty == true, "\(result["errors"] ?? "")")
        let clients = try #require(result["clients"] as? [[String: Any]])
        #expect(clients.count == 3)
        for client in clients {
            let frames = client["frames"] as? [String: Int] ?? [:]
            // Two remote tracks, each decoding ~50 frames a second for 3 s.
            #expect(frames.count == 2, "\(client)")
            for (track, count) in frames { #expect(count >= 60, "\(client["id"] ?? "?") got \(count) frames of \(track)") }
            #expect((client["errors"] as? [Any])?.isEmpty == true, "\(client)")
        }
        let counters = media.counters()
        #expect(counters.first.map { $0.forwarded > 0 } == true)
    }
}

/// Video through the SFU: two aiortc clients each publish Opus and VP8
/// (aiortc's test pattern) and decode the other's audio and video.
@Suite(.serialized) struct AiortcVideoRoomTests {
    @Test(.timeLimit(.minutes(1)))
    func twoAiortcClientsExchangeAudioAndVP8VideoThroughTheServer() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let python = root.appendingPathComponent(".venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "run Scripts/setup: \(python.path) is missing")
        let certificate = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970))
        let media = try MediaPlane(count: 1, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        defer { media.stop() }
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: media.endpoint), media: { media.post($0) })
        defer { server.stop() }
        let now = Int64(Date().timeIntervalSince1970)
        let tokens = ["vic", "val"].map {
            AccessToken.mint(
                claims: AccessTokenClaims(
                    issuer: "k", subject: $0, notBefore: now - 5, expiresAt: now + 600, room: "video",
                    grants: AccessTokenGrants(publish: true, subscribe: true)),
                secret: "s")
        }
        let peers = try JSONLineProcess(
            executable: python,
            arguments: [
                root.appendingPathComponent("Scripts/interop/aiortc_room.py").path, "--video",
                "--url", "ws://127.0.0.1:\(server.localAddress.port)/rtc",
                "--tokens", String(decoding: try JSONEncoder().encode(tokens), as: UTF8.self),
            ],
            workingDirectory: root)
        let result = try peers.receive("the room result", timeout: .seconds(50))
        #expect((result["errors"] as? [Any])?.isEmpty == true, "\(result["errors"] ?? "")")
        let clients = try #require(result["clients"] as? [[String: Any]])
        #expect(clients.count == 2)
        for client in clients {
            let frames = client["frames"] as? [String: Int] ?? [:]
            let kinds = client["kinds"] as? [String: String] ?? [:]
            #expect(frames.count == 2, "\(client)")
            for (track, count) in frames {
                // aiortc's pattern runs at 30 fps; Opus at 50 frames a second.
                let minimum = kinds[track] == "video" ? 30 : 60
                #expect(count >= minimum, "\(client["id"] ?? "?") got \(count) \(kinds[track] ?? "?") frames")
            }
            #expect(Set(kinds.values) == ["audio", "video"], "\(client)")
        }
    }
}
