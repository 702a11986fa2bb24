import Foundation
import FuzzEntryPoints
import Testing

/// Replays Fuzz/Corpus/rtx (RTP packets with and without CSRCs, extensions
/// and padding, RTX packets, a padding-only probe, and malformed ones) and
/// 3,000 seeded mutations of each seed through `FuzzEntryPoints.rtx`,
/// whose preconditions check that wrap and unwrap round-trip.
@Suite struct RTXCorpusTests {
    static let target = FuzzTarget(
        name: "rtx", entry: { FuzzEntryPoints.rtx($0) },
        interesting: [0x80, 0x90, 0xA0, 0xBE, 0xDE, 0x10, 0x00, 0x01, 0x02, 0x0F, 0xFF])

    @Test func everySeedReplays() throws {
        let seeds = try Self.target.seeds()
        #expect(seeds.count >= 5)
        for seed in seeds { Self.target.run(seed) }
    }

    @Test func seededMutationsNeverTrap() throws {
        var rng = XorShift64(seed: 0x5254_5846_555A_5A31)
        var runs = 0
        for seed in try Self.target.seeds() {
            for _ in 0..<3000 {
                var bytes = seed
                for _ in 0...rng.below(4) { CorpusReplayTests.mutate(&bytes, Self.target.interesting, &rng) }
                Self.target.run(bytes)
                runs += 1
            }
        }
        #expect(runs == 3000 * 11)
    }
}
