import SRTP
import Wire

/// Hex fixture to bytes; whitespace ignored. Test input only.
func hex(_ s: String) -> [UInt8] {
    let digits = s.filter { !$0.isWhitespace }.map { UInt8(String($0), radix: 16)! }
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

/// Copies `packet` into a buffer with `room` free bytes after it, runs `op`
/// in place, and returns the bytes it left (its returned length) or its error.
func inPlace(
    _ packet: [UInt8], room: Int = SRTPSession.rtcpTrailerRoom,
    _ op: (UnsafeMutableRawBufferPointer, Int) throws(SRTPError) -> Int
) -> Result<[UInt8], SRTPError> {
    var buffer = packet + [UInt8](repeating: 0, count: room)
    let result: Result<Int, SRTPError> = buffer.withUnsafeMutableBytes { bytes in
        do throws(SRTPError) { return .success(try op(bytes, packet.count)) } catch { return .failure(error) }
    }
    return result.map { Array(buffer[0..<$0]) }
}

extension Result {
    var value: Success? { if case .success(let v) = self { v } else { nil } }
    var error: Failure? { if case .failure(let e) = self { e } else { nil } }
}

/// An RTP packet (RFC 3550 section 5.1): V=2, no padding/extension/CSRC,
/// PT 96, the given sequence number, timestamp 0x00010203, SSRC, then
/// `payloadLength` bytes counting up from 0.
func rtpPacket(sequence: UInt16, ssrc: UInt32 = 0x1122_3344, payloadLength: Int = 100) -> [UInt8] {
    [
        0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF),
        0x00, 0x01, 0x02, 0x03,
        UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF),
    ]
        + (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0) }
}

/// An RTCP receiver report with no blocks plus 16 bytes of an APP-like tail:
/// V=2, RC=0, PT=201, length 1 word, sender SSRC; then a second packet
/// (PT=204 APP, length 3) so the compound has an encrypted part.
func rtcpPacket(ssrc: UInt32 = 0x5566_7788) -> [UInt8] {
    [
        0x80, 201, 0x00, 0x01,
        UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF),
        0x80, 204, 0x00, 0x03,
        UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF),
        0x54, 0x45, 0x53, 0x54,  // name "TEST"
        0xDE, 0xAD, 0xBE, 0xEF,
    ]
}

/// A fixed master key and salt per profile, different per `seed`.
func masterKey(_ profile: SRTPProfile, seed: UInt8 = 1) throws -> SRTPMasterKey {
    try SRTPMasterKey(
        key: (0..<profile.masterKeyLength).map { UInt8($0) &* 7 &+ seed },
        salt: (0..<profile.masterSaltLength).map { UInt8($0) &* 13 &+ seed },
        profile: profile)
}
