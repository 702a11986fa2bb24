import FuzzEntryPoints
import Testing

/// Replays Fuzz/Corpus/websocket-client and seeded mutations of every seed
/// through `FuzzEntryPoints.websocketClient` (roombot's WebSocket: the
/// server's 101 head, then server frames). Nothing may trap.
@Suite struct WebSocketClientCorpusTests {
    static let target = FuzzTarget(
        name: "websocket-client", entry: { FuzzEntryPoints.websocketClient($0) },
        interesting: Array(" :\r\n01HTw".utf8) + [0x00, 0x7E, 0x7F, 0x80, 0x81, 0x88, 0x89, 0xFF])

    @Test func everySeedReplays() throws {
        let seeds = try Self.target.seeds()
        #expect(seeds.count >= 5)
        for seed in seeds { Self.target.run(seed) }
    }

    @Test func seededMutationsNeverTrap() throws {
        var rng = XorShift64(seed: 0x574B_434C_4945_4E54)
        for seed in try Self.target.seeds() {
            for _ in 0..<2000 {
                var bytes = seed
                for _ in 0...rng.below(4) { CorpusReplayTests.mutate(&bytes, Self.target.interesting, &rng) }
                Self.target.run(bytes)
            }
        }
    }
}
