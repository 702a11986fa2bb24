import Foundation
import FuzzEntryPoints
import Testing

/// Replays Fuzz/Corpus/vp8KeyframeHeader and seeded mutations of each seed
/// through `FuzzEntryPoints.vp8KeyframeHeader`: nothing may trap.
@Suite struct VP8KeyframeHeaderCorpusTests {
    static let target = FuzzTarget(
        name: "vp8KeyframeHeader", entry: { FuzzEntryPoints.vp8KeyframeHeader($0) },
        interesting: [0x00, 0x01, 0x10, 0x50, 0x80, 0x90, 0x9D, 0x2A, 0x3F, 0xC0, 0xFF])

    @Test func everySeedReplays() throws {
        let seeds = try Self.target.seeds()
        #expect(seeds.count >= 5)
        for seed in seeds { Self.target.run(seed) }
    }

    @Test func seededMutationsNeverTrap() throws {
        var rng = XorShift64(seed: 0x5650_384B_4559_4652)
        for seed in try Self.target.seeds() {
            for _ in 0..<3000 {
                var bytes = seed
                for _ in 0...rng.below(4) { CorpusReplayTests.mutate(&bytes, Self.target.interesting, &rng) }
                Self.target.run(bytes)
            }
        }
    }
}
