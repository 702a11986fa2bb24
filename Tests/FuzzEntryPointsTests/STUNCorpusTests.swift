import Foundation
import Testing

@testable import FuzzEntryPoints

/// Replays the STUN seed corpus, and deterministic mutations of each seed,
/// through the fuzz entry point: nothing may trap.
@Suite struct STUNCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus/stun")

    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: corpus.appendingPathComponent($0)))) }
    }

    @Test func everySeedReplaysWithoutTrapping() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count >= 5)
        for seed in seeds { seed.bytes.withUnsafeBytes { FuzzEntryPoints.stun($0) } }
    }

    @Test func mutationsOfEverySeedReplayWithoutTrapping() throws {
        var rng = XorShift64(seed: 0x5354_554E_2112_A442)
        for seed in try Self.seeds() {
            for _ in 0..<2000 {
                var bytes = seed.bytes
                Self.mutate(&bytes, &rng)
                bytes.withUnsafeBytes { FuzzEntryPoints.stun($0) }
            }
        }
    }

    /// One to four byte flips, truncations, insertions or field overwrites;
    /// half the time the header length is then made consistent so that the
    /// mutation reaches the attribute parser.
    static func mutate(_ bytes: inout [UInt8], _ rng: inout XorShift64) {
        for _ in 0...rng.next(below: 4) {
            switch rng.next(below: 6) {
            case 0 where !bytes.isEmpty:
                bytes[rng.next(below: bytes.count)] ^= UInt8(truncatingIfNeeded: 1 << rng.next(below: 8))
            case 1 where !bytes.isEmpty:
                bytes[rng.next(below: bytes.count)] = UInt8(truncatingIfNeeded: rng.next(below: 256))
            case 2:
                bytes.removeLast(min(bytes.count, rng.next(below: 9)))
            case 3:
                let at = rng.next(below: bytes.count + 1)
                bytes.insert(
                    contentsOf: [UInt8](
                        repeating: UInt8(truncatingIfNeeded: rng.next(below: 256)),
                        count: rng.next(below: 9)), at: at)
            case 4 where bytes.count >= 24:
                // Overwrite an attribute-aligned 16-bit field (type or length).
                let at = 20 + 2 * rng.next(below: (bytes.count - 20) / 2)
                let v = rng.next(below: 0x1_0000)
                bytes[at] = UInt8(truncatingIfNeeded: v >> 8)
                if at + 1 < bytes.count { bytes[at + 1] = UInt8(truncatingIfNeeded: v) }
            default:
                bytes.append(contentsOf: [0x80, 0x28, 0x00, 0x04, 0, 0, 0, 0])
            }
        }
        if rng.next(below: 2) == 0, bytes.count >= 20, bytes.count - 20 <= 0xFFFF {
            bytes[2] = UInt8(truncatingIfNeeded: (bytes.count - 20) >> 8)
            bytes[3] = UInt8(truncatingIfNeeded: bytes.count - 20)
        }
    }

    /// Seeded xorshift64 generator: the same mutations on every run.
    struct XorShift64 {
        var state: UInt64
        init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        /// Uniform enough for mutation: `next() % bound`, bound > 0.
        mutating func next(below bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
    }
}
