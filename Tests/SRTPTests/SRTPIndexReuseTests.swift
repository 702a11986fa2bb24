import SRTP
import Testing
import Wire

/// RFC 7714 section 8.1 (and RFC 3711 section 9.1 for AES-CM): one SRTP
/// index protects one packet. The outbound session refuses a second
/// protect of an index it has used, whatever the bytes, so no caller can
/// reuse an AES-GCM IV or AES-CM keystream.
@Suite struct SRTPIndexReuseTests {
    @Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
    func aSecondProtectOfOneIndexIsRefused(profile: SRTPProfile, backend: SRTPBackend) throws {
        var sender = try SRTPSession(profile: profile, masterKey: try masterKey(profile), direction: .outbound, backend: backend)
        let first = rtpPacket(sequence: 7)
        var changed = first
        changed[20] ^= 0xFF  // a retransmission with other header/payload bytes
        #expect(inPlace(first) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value != nil)
        #expect(inPlace(changed) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.error == .replayFail)
        // The identical bytes are refused too: the rule is one index, one
        // protect, not a comparison of contents.
        #expect(inPlace(first) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.error == .replayFail)
        // Newer indices still go out, and an older one never used inside
        // the window too (a late packet forwarded out of order).
        #expect(inPlace(rtpPacket(sequence: 9)) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value != nil)
        #expect(inPlace(rtpPacket(sequence: 8)) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value != nil)
        // The same number on another SSRC is another stream.
        #expect(
            inPlace(rtpPacket(sequence: 7, ssrc: 0x0A0B_0C0D)) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }
                .value != nil)
    }

    /// SRTCP (RFC 3711 section 3.4): libsrtp numbers every protected
    /// compound itself, so the same compound three times goes out under
    /// three indices. Protection is deterministic per index (same key, IV
    /// and plaintext give the same bytes), so three distinct outputs mean
    /// three indices.
    @Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
    func everySRTCPPacketGetsANewIndex(profile: SRTPProfile, backend: SRTPBackend) throws {
        var sender = try SRTPSession(profile: profile, masterKey: try masterKey(profile), direction: .outbound, backend: backend)
        let rtcp = rtcpPacket()
        var outputs: [[UInt8]] = []
        for _ in 0..<3 {
            outputs.append(
                try #require(inPlace(rtcp) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value))
        }
        #expect(outputs[0] != outputs[1] && outputs[1] != outputs[2] && outputs[0] != outputs[2])
    }
}
