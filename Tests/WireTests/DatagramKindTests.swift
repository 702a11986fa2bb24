import Testing
import Wire

@Suite struct DatagramKindTests {
    private func kind(_ bytes: [UInt8]) -> DatagramKind { bytes.withUnsafeBytes { DatagramKind.classify($0) } }

    @Test func classifiesByFirstByte() {
        #expect(kind([0x00, 0x01]) == .stun)  // Binding request
        #expect(kind([0x01, 0x01]) == .stun)  // Binding success
        #expect(kind([0x16, 0xFE, 0xFD]) == .dtls)  // handshake record, DTLS 1.2
        #expect(kind([0x17, 0xFE, 0xFD]) == .dtls)  // application data
        #expect(kind([0x80, 0x60]) == .rtp)  // PT 96
        #expect(kind([0x80, 0xE0]) == .rtp)  // PT 96 with marker
        #expect(kind([0x81, 0xC8]) == .rtcp)  // SR (200)
        #expect(kind([0x81, 0xCD]) == .rtcp)  // RTPFB (205)
        #expect(kind([0x8F, 0xCE]) == .rtcp)  // PSFB (206) FMT 15
    }

    @Test func dropsEverythingElse() {
        #expect(kind([]) == .unknown)
        #expect(kind([0x80]) == .unknown)  // RTP range but no second byte
        #expect(kind([0x10]) == .unknown)  // ZRTP
        #expect(kind([0x40]) == .unknown)  // TURN channel
        #expect(kind([0xFF, 0xFF]) == .unknown)
        #expect(kind([0x04]) == .unknown)
    }
}
