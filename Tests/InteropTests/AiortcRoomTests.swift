import Foundation
import MediaWorker
import Testing

/// The whole SFU path with independent clients: three aiortc peers join one
/// room over the WebSocket protocol, each publishes an Opus tone, and each
/// decodes the other two through the server (publisher offers answered by
/// Negotiation, subscriber offers with a=ssrc, forwarding in the worker).
@Suite(.serialized) struct AiortcRoomTests {
    @Test(.timeLimit(.minutes(1)))
    func threeAiortcClientsInOneRoomEachDecodeTheOtherTwo() throws {
        let swiftlet = try LoopbackSwiftlet()
        defer { swiftlet.stop() }
        let result = try swiftlet.runScript(
            "aiortc_room.py", tokens: swiftlet.tokens(for: ["ann", "ben", "cal"], room: "room"), timeout: .seconds(50))
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
        #expect(swiftlet.media.counters().first.map { $0.forwarded > 0 } == true)
    }

    /// Video through the SFU: two aiortc clients each publish Opus and VP8
    /// (aiortc's test pattern) and decode the other's audio and video.
    @Test(.timeLimit(.minutes(1)))
    func twoAiortcClientsExchangeAudioAndVP8VideoThroughTheServer() throws {
        let swiftlet = try LoopbackSwiftlet()
        defer { swiftlet.stop() }
        let result = try swiftlet.runScript(
            "aiortc_room.py", tokens: swiftlet.tokens(for: ["vic", "val"], room: "video"), arguments: ["--video"],
            timeout: .seconds(50))
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

    /// A room over four media workers (issue #13): with
    /// `--room-spread-after 1` each of the four participants is placed on
    /// its own worker, so the publisher's audio and VP8 reach each of the
    /// three subscribe-only clients through a ring to another worker.
    /// Every subscriber decodes both tracks; /metrics, read while the room
    /// is up, shows transports on every worker, relayed packets and no
    /// ring drop.
    @Test(.timeLimit(.minutes(1)))
    func onePublisherAndThreeSubscribersOnFourWorkersAllDecode() throws {
        let swiftlet = try LoopbackSwiftlet(workers: 4, roomSpreadAfter: 1)
        defer { swiftlet.stop() }
        let result = try swiftlet.runScript(
            "aiortc_room.py", tokens: swiftlet.tokens(for: ["pub", "sub-1", "sub-2", "sub-3"], room: "four-workers"),
            arguments: ["--video", "--publishers", "1"], timeout: .seconds(50))
        #expect((result["errors"] as? [Any])?.isEmpty == true, "\(result["errors"] ?? "")")
        let clients = try #require(result["clients"] as? [[String: Any]])
        #expect(clients.count == 4)
        for client in clients.dropFirst() {
            let frames = client["frames"] as? [String: Int] ?? [:]
            let kinds = client["kinds"] as? [String: String] ?? [:]
            #expect(Set(kinds.values) == ["audio", "video"], "\(client)")
            for (track, count) in frames {
                // Counted for 3 s: aiortc's pattern at 30 fps, Opus at 50.
                let minimum = kinds[track] == "video" ? 30 : 60
                #expect(count >= minimum, "\(client["id"] ?? "?") got \(count) \(kinds[track] ?? "?") frames")
            }
            #expect((client["errors"] as? [Any])?.isEmpty == true, "\(client)")
        }
        let metrics = try #require(result["metrics"] as? [String: Double], "\(result)")
        for w in 0..<4 {
            #expect((metrics["swiftlet_worker_transports{worker=\"\(w)\"}"] ?? 0) > 0, "worker \(w): \(metrics)")
        }
        #expect((metrics["swiftlet_relay_packets_sent_total"] ?? 0) > 0, "\(metrics)")
        #expect(metrics["swiftlet_relay_ring_drops_total"] == 0, "\(metrics)")
        // What the workers dropped (unknown_relay: relayed packets that beat the
        // relay command to a worker), for the log.
        let drops = metrics.filter { $0.key.hasPrefix("swiftlet_dropped_packets_total") && $0.value > 0 }
        print("aiortc on four workers: \(metrics.filter { $0.key.hasPrefix("swiftlet_worker_") }), drops \(drops)")
    }
}
