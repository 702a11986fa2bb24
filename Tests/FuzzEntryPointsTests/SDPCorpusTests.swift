import Foundation
import FuzzEntryPoints
import Testing

@Suite struct SDPCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus/sdp")

    static func seeds() throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        return try names.map { [UInt8](try Data(contentsOf: corpus.appendingPathComponent($0))) }
    }

    @Test func corpusHasSeeds() throws {
        #expect(try Self.seeds().count >= 5)
    }

    @Test func replaysEverySeed() throws {
        for seed in try Self.seeds() {
            seed.withUnsafeBytes { FuzzEntryPoints.sdp($0) }
        }
    }

    /// Seeded xorshift mutations: byte flips, SDP-significant bytes
    /// inserted, truncation. Nothing may trap.
    @Test func replaysDeterministicMutations() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        let interesting: [UInt8] = Array(" :;,/=~\r\n0a*".utf8) + [0, 0xFF, 0xCC, 0x81]
        for seed in try Self.seeds() where !seed.isEmpty {
            for _ in 0..<2000 {
                var m = seed
                for _ in 0..<Int(next() % 4) + 1 {
                    let i = Int(next() % UInt64(m.count))
                    switch next() % 4 {
                    case 0: m[i] = UInt8(truncatingIfNeeded: next())
                    case 1: m[i] = interesting[Int(next() % UInt64(interesting.count))]
                    case 2: m.insert(interesting[Int(next() % UInt64(interesting.count))], at: i)
                    default: if m.count > 1 { m.remove(at: i) }
                    }
                }
                if next() % 8 == 0 { m = Array(m.prefix(Int(next() % UInt64(m.count + 1)))) }
                m.withUnsafeBytes { FuzzEntryPoints.sdp($0) }
            }
        }
    }
}
