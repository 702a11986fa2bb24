import Foundation
import Testing

@testable import FuzzEntryPoints

/// Replays Fuzz/Corpus/rtcp through the fuzz entry point, then thousands of
/// deterministic mutations of each seed; any trap fails the run.
@Test func rtcpCorpusAndMutationsDoNotTrap() throws {
    let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let folder = root.appendingPathComponent("Fuzz/Corpus/rtcp")
    let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        .sorted { $0.lastPathComponent < $1.lastPathComponent }
    #expect(files.count >= 5)

    var state: UInt64 = 0xD1B5_4A32_D192_ED03
    func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    func run(_ bytes: [UInt8]) { bytes.withUnsafeBytes { FuzzEntryPoints.rtcp($0) } }

    for file in files {
        let seed = [UInt8](try Data(contentsOf: file))
        run(seed)
        for _ in 0..<3000 {
            var bytes = seed
            for _ in 0..<Int(next() % 4) + 1 {
                let position = bytes.isEmpty ? 0 : Int(next() % UInt64(bytes.count))
                switch next() % 7 {
                case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1) << UInt8(next() % 8)
                case 1 where !bytes.isEmpty: bytes[position] = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0x20][Int(next() % 6)]
                case 2 where !bytes.isEmpty: bytes.removeSubrange(position...)
                case 3: bytes.insert(UInt8(truncatingIfNeeded: next()), at: position)
                case 4 where !bytes.isEmpty: bytes[position] = UInt8(truncatingIfNeeded: next())
                case 5: bytes += bytes.prefix(Int(next() % 16))
                default:
                    // Rewrite a length field at a 4-byte boundary.
                    let at = position & ~3
                    if at + 3 < bytes.count {
                        bytes[at + 2] = UInt8(truncatingIfNeeded: next() % 3)
                        bytes[at + 3] = UInt8(truncatingIfNeeded: next())
                    }
                }
            }
            run(bytes)
        }
    }
}
