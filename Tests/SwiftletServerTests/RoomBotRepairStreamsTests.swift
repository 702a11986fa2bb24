import Negotiation
import RTP
import Testing
import Wire

@testable import RoomBot

/// A subscribing bot restores the server's RTX repairs (RFC 4588 section
/// 4) with the shared `RTXPacket.unwrap`: the packet the server first
/// sent, byte for byte, with the payload type the server announced.
@Suite struct RoomBotRepairStreamsTests {
    static let media = SSRC(0x1111_1111)
    static let rtx = SSRC(0x2222_2222)
    /// Not ClientOfferBuilder's 96/97: the server's offer sets them.
    static let payloadType = PayloadType(masking: 100)
    static let rtxPayloadType = PayloadType(masking: 101)

    /// As the server sends media: marker, a one-byte-form extension
    /// (transport-wide sequence number, RFC 8285), a payload.
    static let original: [UInt8] = [
        0x90,  // V=2, P=0, X=1, CC=0
        0xE4,  // M=1, PT=100
        0x12, 0x34,  // sequence number
        0x00, 0x01, 0x5F, 0x90,  // timestamp
        0x11, 0x11, 0x11, 0x11,  // SSRC
        0xBE, 0xDE, 0x00, 0x01,  // one-byte form, 1 word
        0x31, 0x00, 0x2A, 0x00,  // ID 3, L=1: 0x002A; 1 padding byte
        0x10, 0x02, 0x03, 0x04,  // payload
    ]

    func streams() -> RepairStreams {
        var s = RepairStreams()
        s.announce([
            AnnouncedTrack(
                mid: "1", kind: .video, streamID: "p", trackID: "v",
                codec: .vp8(payloadType: Self.payloadType, rtxPayloadType: Self.rtxPayloadType), ssrc: Self.media,
                rtxSSRC: Self.rtx)
        ])
        return s
    }

    /// What `restore` gives for `packet`: nil for `.media`, [] for
    /// `.nothing`, else the restored bytes and header.
    func restore(_ packet: [UInt8]) throws -> (bytes: [UInt8], header: RTPHeader?)? {
        var slot = packet
        return try slot.withUnsafeMutableBytes { buffer in
            let header = try RTPHeader(parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(buffer)))
            switch streams().restore(buffer, header: header) {
            case .media: return nil
            case .nothing: return ([], nil)
            case .original(let bytes, let h): return (Array(bytes), h)
            }
        }
    }

    func wrapped(_ packet: [UInt8], rtxPadding: Int = 0) throws -> [UInt8] {
        var slot = packet + [UInt8](repeating: 0, count: 2)
        let n = try #require(
            slot.withUnsafeMutableBytes {
                RTXPacket.wrap(
                    in: $0, length: packet.count, rtxSSRC: Self.rtx, rtxSequenceNumber: 7,
                    rtxPayloadType: Self.rtxPayloadType)
            })
        var rtx = Array(slot[0..<n])
        if rtxPadding > 0 {
            rtx[0] |= 0x20
            rtx += [UInt8](repeating: 0, count: rtxPadding - 1) + [UInt8(rtxPadding)]
        }
        return rtx
    }

    @Test func restoresTheServersPacketByteForByteWithTheAnnouncedPayloadType() throws {
        for padding in [0, 4] {
            let restored = try #require(try restore(try wrapped(Self.original, rtxPadding: padding)))
            #expect(restored.bytes == Self.original)
            let header = try #require(restored.header)
            #expect(header.ssrc == Self.media)
            #expect(header.payloadType == Self.payloadType)
            #expect(header.sequenceNumber == 0x1234)
            #expect(header.marker)
        }
    }

    @Test func mediaPassesAndProbesOrEmptyRepairsGiveNothing() throws {
        #expect(try restore(Self.original) == nil)
        var probe = [UInt8](repeating: 0, count: 12 + 200)
        let n = try #require(
            probe.withUnsafeMutableBytes {
                RTXPacket.makePadding(
                    in: $0, rtxSSRC: Self.rtx, sequenceNumber: 8, payloadType: Self.rtxPayloadType, timestamp: 1,
                    paddingBytes: 200)
            })
        #expect(try restore(Array(probe[0..<n]))?.bytes == [])
        // An OSN and no payload restores nothing a decoder could use.
        let headerOnly = Array(Self.original[0..<20])
        #expect(try restore(try wrapped(headerOnly))?.bytes == [])
    }
}
