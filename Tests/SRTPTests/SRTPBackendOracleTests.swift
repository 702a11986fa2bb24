import SRTP
import Testing
import Wire

/// libsrtp2 as the oracle for the OpenSSL backend: the same key and packets
/// give the same bytes from both (protection is deterministic per index),
/// each unprotects what the other protected, and both refuse the same
/// packets with the same errors.
@Suite struct SRTPBackendOracleTests {
    struct Direction: CustomTestStringConvertible, Sendable {
        let sender: SRTPBackend
        let receiver: SRTPBackend
        var testDescription: String { "\(sender) -> \(receiver)" }
    }
    static let directions = [Direction(sender: .openssl, receiver: .libsrtp2), Direction(sender: .libsrtp2, receiver: .openssl)]

    /// Sequence numbers across a ROC wrap (65535 -> 0), with neighbours
    /// swapped so the receiver sees them out of order.
    static let sequences: [UInt16] = [65530, 65531, 65533, 65532, 65534, 0, 65535, 1, 3, 2, 4, 5]

    @Test(arguments: SRTPProfile.allCases, directions)
    func rtpAcrossARolloverWithReorderingReplayAndTampering(profile: SRTPProfile, direction: Direction) throws {
        let key = try masterKey(profile, seed: 9)
        var sender = try SRTPSession(profile: profile, masterKey: key, direction: .outbound, backend: direction.sender)
        var mirror = try SRTPSession(profile: profile, masterKey: key, direction: .outbound, backend: direction.receiver)
        var receiver = try SRTPSession(profile: profile, masterKey: key, direction: .inbound, backend: direction.receiver)
        // Protect in sequence order first (as a sender would), deliver reordered.
        var secured: [UInt16: [UInt8]] = [:]
        for seq in Self.sequences.sorted(by: { ($0 < 0x8000 ? 1 : 0, $0) < ($1 < 0x8000 ? 1 : 0, $1) }) {
            let plain = rtpPacket(sequence: seq, payloadLength: 60 + Int(seq % 7))
            let out = try #require(inPlace(plain) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value)
            let other = inPlace(plain) { b, n throws(SRTPError) in try mirror.protectRTP(b, length: n) }.value
            #expect(out == other, "seq \(seq): both backends give the same bytes")
            secured[seq] = out
        }
        for seq in Self.sequences {
            let plain = rtpPacket(sequence: seq, payloadLength: 60 + Int(seq % 7))
            var tampered = try #require(secured[seq])
            tampered[tampered.count - 3] ^= 0x20
            #expect(
                inPlace(tampered) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.error == .authFailure,
                "seq \(seq)")
            #expect(
                inPlace(secured[seq]!) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.value == plain,
                "seq \(seq)")
            #expect(
                inPlace(secured[seq]!) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.error == .replayFail,
                "seq \(seq)")
        }
        // Both senders refuse a second protect of an index already used.
        #expect(
            inPlace(rtpPacket(sequence: 1)) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.error == .replayFail
        )
        #expect(
            inPlace(rtpPacket(sequence: 1)) { b, n throws(SRTPError) in try mirror.protectRTP(b, length: n) }.error == .replayFail
        )
    }

    @Test(arguments: SRTPProfile.allCases, directions)
    func rtcpIndicesCountUpAndCrossBackends(profile: SRTPProfile, direction: Direction) throws {
        let key = try masterKey(profile, seed: 4)
        var sender = try SRTPSession(profile: profile, masterKey: key, direction: .outbound, backend: direction.sender)
        var mirror = try SRTPSession(profile: profile, masterKey: key, direction: .outbound, backend: direction.receiver)
        var receiver = try SRTPSession(profile: profile, masterKey: key, direction: .inbound, backend: direction.receiver)
        var secured: [[UInt8]] = []
        for i in 0..<6 {
            let plain = rtcpPacket(ssrc: 0x0102_0300 + UInt32(i % 2))  // two senders, two index counters
            let out = try #require(inPlace(plain) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value)
            #expect(inPlace(plain) { b, n throws(SRTPError) in try mirror.protectRTCP(b, length: n) }.value == out, "packet \(i)")
            let indexAt = profile == .aesCM128HMACSHA1_80 ? plain.count : out.count - 4
            #expect(Array(out[indexAt..<indexAt + 4]) == [0x80, 0, 0, UInt8(i / 2 + 1)], "packet \(i)")
            secured.append(out)
        }
        for (i, packet) in secured.enumerated().reversed() {
            var tampered = packet
            tampered[9] ^= 0x01
            #expect(
                inPlace(tampered) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .authFailure)
            #expect(
                inPlace(packet) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.value
                    == rtcpPacket(ssrc: 0x0102_0300 + UInt32(i % 2)))
            #expect(inPlace(packet) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .replayFail)
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func bothBackendsDropTheSameLatePackets(profile: SRTPProfile) throws {
        let key = try masterKey(profile, seed: 2)
        var sender = try SRTPSession(profile: profile, masterKey: key, direction: .outbound, backend: .libsrtp2)
        var ours = try SRTPSession(profile: profile, masterKey: key, direction: .inbound, replayWindow: 64, backend: .openssl)
        var oracle = try SRTPSession(profile: profile, masterKey: key, direction: .inbound, replayWindow: 64, backend: .libsrtp2)
        var packets: [[UInt8]] = []
        for seq in UInt16(1)...80 {
            packets.append(
                try #require(
                    inPlace(rtpPacket(sequence: seq)) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value))
        }
        for order in [Array(10..<80), [9, 15, 5, 16, 0]] {
            for i in order {
                let mine = inPlace(packets[i]) { b, n throws(SRTPError) in try ours.unprotectRTP(b, length: n) }.error
                let theirs = inPlace(packets[i]) { b, n throws(SRTPError) in try oracle.unprotectRTP(b, length: n) }.error
                #expect(mine == theirs, "packet \(i)")
            }
        }
    }
}

/// RFC 3711 appendix B.2 (AES-CM keystream) and B.3 (key derivation).
@Suite struct SRTPRFC3711VectorTests {
    @Test func aesCMKeystreamMatchesAppendixB2() throws {
        let stream = try SRTPKeyDerivation.keystream(
            key: hex("2B7E151628AED2A6ABF7158809CF4F3C"), counter: hex("F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000"), length: 48)
        #expect(
            stream == hex("E03EAD0935C95E80E166B16DD92B4EB4 D23513162B02D0F72A43A2FE4A5F97AB 41E95B3BB0A2E8DD477901E4FCA894C0"))
    }

    @Test func keyDerivationMatchesAppendixB3() throws {
        let key = try SRTPMasterKey(
            key: hex("E1F97A0D3E018BE0D64FA32C06DE4139"), salt: hex("0EC675AD498AFEEBB6960B3AABE6"), profile: .aesCM128HMACSHA1_80
        )
        #expect(try SRTPKeyDerivation.derive(masterKey: key, label: 0, length: 16) == hex("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(try SRTPKeyDerivation.derive(masterKey: key, label: 2, length: 14) == hex("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(
            try SRTPKeyDerivation.derive(masterKey: key, label: 1, length: 20) == hex("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
    }
}
