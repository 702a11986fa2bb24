import Foundation
import Testing

@testable import FuzzEntryPoints

/// Replays Fuzz/Corpus/codecs/ through `FuzzEntryPoints.codecs`, then seeded
/// pseudo-random mutations of each seed; passing means nothing trapped.
@Suite struct CodecsCorpusTests {
    private static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus/codecs")

    private static func seeds() throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        return try names.map { [UInt8](try Data(contentsOf: corpus.appendingPathComponent($0))) }
    }

    private static func run(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { FuzzEntryPoints.codecs($0) }
    }

    @Test func replaysEverySeed() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count >= 5)
        for seed in seeds { Self.run(seed) }
    }

    @Test func survivesSeededMutations() throws {
        var rng = CodecsXorShift(state: 0x9E37_79B9_7F4A_7C15)
        for seed in try Self.seeds() {
            for _ in 0..<2000 {
                var b = seed
                for _ in 0..<1 + Int(rng.next() % 4) {
                    switch rng.next() % 5 {
                    case 0 where !b.isEmpty:
                        b[Int(rng.next() % UInt64(b.count))] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
                    case 1 where !b.isEmpty: b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next())
                    case 2 where !b.isEmpty: b.removeLast(Int(rng.next() % UInt64(b.count)) + 1)
                    case 3: b.insert(UInt8(truncatingIfNeeded: rng.next()), at: Int(rng.next() % UInt64(b.count + 1)))
                    default: b.append(contentsOf: (0..<rng.next() % 8).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
                    }
                }
                Self.run(b)
            }
        }
    }
}

/// xorshift64, so the mutations are the same on every run.
private struct CodecsXorShift {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
