import Foundation
import RTCP
import Testing

/// The fuzz seeds named valid-* must parse and invalid-* must be rejected,
/// so the corpus starts the fuzzer on both sides of every check.
@Test func corpusSeedsParseAsTheirNamesSay() throws {
    let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let folder = root.appendingPathComponent("Fuzz/Corpus/rtcp")
    let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
    #expect(files.count >= 10)
    for file in files {
        let bytes = [UInt8](try Data(contentsOf: file))
        let name = file.lastPathComponent
        let parsed = try? parseCompound(bytes)
        if name.hasPrefix("valid-") {
            #expect(parsed != nil, "\(name) should parse")
            // Parsed transport-cc feedback serializes only once expanded.
            let expanded = parsed?.expandedPackets(bytes.span.bytes) ?? []
            #expect(!RTCPCompoundPacket.serialize(expanded).isEmpty)
        } else {
            #expect(parsed == nil, "\(name) should be rejected")
        }
    }
}
