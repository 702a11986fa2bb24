import SRTP
import Wire

/// Protect and unprotect cost of 1200-byte RTP packets for one profile on
/// one SRTP backend.
///
/// Packets go through in chunks: a chunk of plaintext packets (fresh
/// sequence numbers, so the receiver's replay window accepts every one) is
/// laid out untimed, then protected in a timed loop, then unprotected in a
/// second timed loop. Only the SRTP calls (and our checks around them)
/// are inside the timed loops.
struct SRTPBench {
    struct Result {
        var protectNanoseconds: Double
        var unprotectNanoseconds: Double
    }

    static let payloadLength = 1200 - 12
    static let chunk = 1024
    /// Room per slot: the packet plus libsrtp's maximum trailer, rounded up.
    static let slotSize = 1408

    let profile: SRTPProfile
    let backend: SRTPBackend
    let packetsPerRun: Int

    func run(runs: Int) throws -> [Result] {
        let key = try SRTPMasterKey(
            key: (0..<16).map { UInt8($0 &* 11 &+ 3) },
            salt: (0..<profile.masterSaltLength).map { UInt8($0 &* 5 &+ 1) },
            profile: profile)
        var sender = try SRTPSession(profile: profile, masterKey: key, direction: .outbound, backend: backend)
        var receiver = try SRTPSession(profile: profile, masterKey: key, direction: .inbound, backend: backend)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunk * Self.slotSize, alignment: 64)
        defer { buffer.deallocate() }
        var lengths = [Int](repeating: 0, count: Self.chunk)
        var sequence: UInt16 = 0
        var results: [Result] = []
        let clock = ContinuousClock()

        for _ in 0..<runs {
            var protectTime = Duration.zero, unprotectTime = Duration.zero
            var done = 0
            while done < packetsPerRun {
                let n = min(Self.chunk, packetsPerRun - done)
                for i in 0..<n {
                    sequence &+= 1
                    Self.writePlainPacket(slot(buffer, i), sequence: sequence)
                }
                var start = clock.now
                for i in 0..<n {
                    lengths[i] = try sender.protectRTP(slot(buffer, i), length: 12 + Self.payloadLength)
                }
                protectTime += clock.now - start
                start = clock.now
                for i in 0..<n {
                    lengths[i] = try receiver.unprotectRTP(slot(buffer, i), length: lengths[i])
                }
                unprotectTime += clock.now - start
                precondition(lengths[n - 1] == 1200, "benchmark packet did not round-trip")
                done += n
            }
            results.append(
                Result(
                    protectNanoseconds: nanoseconds(protectTime) / Double(packetsPerRun),
                    unprotectNanoseconds: nanoseconds(unprotectTime) / Double(packetsPerRun)))
        }
        return results
    }

    private func slot(_ buffer: UnsafeMutableRawBufferPointer, _ i: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: buffer[i * Self.slotSize..<(i + 1) * Self.slotSize])
    }

    /// V=2, PT 96, the sequence number, timestamp, SSRC 0x0badcafe, then a
    /// payload that is not all zeros.
    private static func writePlainPacket(_ slot: UnsafeMutableRawBufferPointer, sequence: UInt16) {
        let header: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0x10, 0, 0x0B, 0xAD, 0xCA, 0xFE)
        withUnsafeBytes(of: header) { slot.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 12) }
        for i in stride(from: 12, to: 1200, by: 8) {
            slot.storeBytes(of: UInt64(truncatingIfNeeded: i &* 0x9E37_79B9), toByteOffset: i, as: UInt64.self)
        }
    }
}

func nanoseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    guard !s.isEmpty else { return 0 }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}
