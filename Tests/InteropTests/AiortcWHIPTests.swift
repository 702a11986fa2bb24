import DTLS
import Foundation
import MediaWorker
import NetIO
import RoomProtocol
import Rooms
import Signaling
import SignalingServer
import Testing

/// WHIP and WHEP with independent clients: aiortc publishes an Opus tone and
/// VP8 (or H.264) video by WHIP, a second aiortc plays both by WHEP (with RTX for
/// video), and a WebSocket participant in the same room sees the WHIP
/// publisher and decodes its media; then both sessions are DELETEd.
@Suite(.serialized) struct AiortcWHIPTests {
    @Test(.timeLimit(.minutes(1)))
    func aiortcPublishesByWHIPAndPlaysByWHEPBesideAWebSocketParticipant() throws {
        try Self.run()
    }

    /// The same with H.264 (issue #18): the WHIP publisher offers only
    /// H.264 (mode 1, 42001f and 42e01f), the answer takes 42e01f, the
    /// WebSocket participant is offered it, and the WHEP viewer, whose
    /// offer lists 42001f first, gets it on its 42e01f entry and decodes.
    @Test(.timeLimit(.minutes(1)))
    func aiortcPublishesH264ByWHIPAndPlaysItByWHEP() throws {
        let result = try Self.run(extra: ["--video-codec", "h264"])
        let h264 = "H264 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"
        #expect(result["whip_video_codec"] as? String == h264, "\(result)")
        #expect(result["ws_offered_video"] as? [String] == [h264], "\(result)")
        #expect(result["whep_video_codec"] as? String == h264, "\(result)")
    }

    @discardableResult
    static func run(extra: [String] = []) throws -> [String: Any] {
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
        media.onTransportFailed { participant, _ in server.service.transportFailed(participant, now: MonotonicClock.now()) }

        let now = Int64(Date().timeIntervalSince1970)
        func token(_ identity: String) -> String {
            AccessToken.mint(
                claims: AccessTokenClaims(
                    issuer: "k", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: "stage",
                    grants: AccessTokenGrants(publish: true, subscribe: true)),
                secret: "s")
        }
        let peers = try JSONLineProcess(
            executable: python,
            arguments: [
                root.appendingPathComponent("Scripts/interop/aiortc_whip.py").path,
                "--base", "http://127.0.0.1:\(server.localAddress.port)", "--room", "stage",
                "--whip-token", token("encoder"), "--whep-token", token("viewer"), "--ws-token", token("watcher"),
            ] + extra,
            workingDirectory: root)
        let result = try peers.receive("the WHIP/WHEP result", timeout: .seconds(40))
        #expect((result["errors"] as? [Any])?.isEmpty == true, "\(result)")
        #expect(result["whip_status"] as? Int == 201)
        #expect(result["whep_status"] as? Int == 201)
        #expect((result["whip_location"] as? String)?.hasPrefix("/whip/stage/SE_") == true)
        #expect((result["whep_location"] as? String)?.hasPrefix("/whep/stage/SE_") == true)
        #expect((result["whip_etag"] as? String)?.hasPrefix("\"") == true)
        // ~50 Opus frames a second for 3 s.
        #expect((result["whep_frames"] as? Int ?? 0) >= 60, "\(result)")
        // aiortc offers RTX for VP8: the answer pairs our media and RTX
        // SSRCs (the viewer's NACKs are repaired on RTX), and aiortc
        // accepts it and decodes the video (~30 frames a second).
        #expect(result["whep_answer_fid"] as? Int == 1, "\(result)")
        #expect((result["whep_video_frames"] as? Int ?? 0) >= 30, "\(result)")
        #expect((result["ws_frames"] as? Int ?? 0) >= 60, "\(result)")
        #expect(result["ws_track_published"] as? Int == 2)
        #expect(result["ws_participant_joined"] as? [String] == ["encoder", "viewer"])
        #expect(result["delete"] as? [Int] == [200, 200])
        #expect(result["ws_participant_left"] as? Int == 2)
        #expect((result["ws_errors"] as? [Any])?.isEmpty == true)
        // The WebSocket participant closed with 1000 at the end: a leave,
        // not a grace period (docs/PROTOCOL.md); the WHIP/WHEP sessions
        // were deleted. Nobody is left.
        #expect(server.service.snapshot.participants == 0)
        return result
    }
}
