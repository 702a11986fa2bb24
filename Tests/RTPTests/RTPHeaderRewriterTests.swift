import Testing
import Wire

@testable import RTP

@Suite struct RTPHeaderRewriterTests {
    func packet() throws -> [UInt8] {
        try RTPPacketBuilder(
            marker: true, payloadType: PayloadType(masking: 96), sequenceNumber: 1, timestamp: 2, ssrc: SSRC(3),
            extensions: [.init(id: 3, value: [0x00, 0x01]), .init(id: 2, value: [0x00, 0x00, 0x00])]
        ).build(payload: [0xAA, 0xBB])
    }

    @Test func rewritesFixedFieldsAndKeepsMarker() throws {
        var p = try packet()
        let ok = p.withUnsafeMutableBytes { raw -> Bool in
            let m = MutableBytes(raw)
            return RTPHeaderRewriter.setSSRC(SSRC(0xCAFE_BABE), in: m)
                && RTPHeaderRewriter.setSequenceNumber(0xFFFF, in: m)
                && RTPHeaderRewriter.setTimestamp(0x0102_0304, in: m)
                && RTPHeaderRewriter.setPayloadType(PayloadType(masking: 111), in: m)
        }
        #expect(ok)
        let h = try parse(p)
        #expect(h.ssrc == SSRC(0xCAFE_BABE))
        #expect(h.sequenceNumber == 0xFFFF)
        #expect(h.timestamp == 0x0102_0304)
        #expect(h.payloadType == PayloadType(masking: 111))
        #expect(h.marker)
        #expect(Array(p[h.payloadRange]) == [0xAA, 0xBB])
    }

    @Test func setsMarkerAndKeepsPayloadType() throws {
        var p = try packet()
        p.withUnsafeMutableBytes { _ = RTPHeaderRewriter.setMarker(false, in: MutableBytes($0)) }
        #expect(p[1] == 96)
        p.withUnsafeMutableBytes { _ = RTPHeaderRewriter.setMarker(true, in: MutableBytes($0)) }
        #expect(p[1] == 0x80 | 96)
    }

    @Test func overwritesExtensionValuesOfSameLength() throws {
        var p = try packet()
        let h = try parse(p)
        let ok = p.withUnsafeMutableBytes { raw -> Bool in
            let m = MutableBytes(raw)
            return RTPHeaderRewriter.setTransportSequenceNumber(0xBEEF, id: 3, header: h, in: m)
                && RTPHeaderRewriter.setAbsoluteSendTime(AbsoluteSendTime(rawValue: 0x12_3456), id: 2, header: h, in: m)
        }
        #expect(ok)
        #expect(h.extensionValueBytes(id: 3, in: p) == [0xBE, 0xEF])
        #expect(h.extensionValueBytes(id: 2, in: p) == [0x12, 0x34, 0x56])
    }

    @Test func refusesExtensionRewriteOfWrongLengthOrMissingID() throws {
        var p = try packet()
        let before = p
        let h = try parse(p)
        let results = p.withUnsafeMutableBytes { raw -> [Bool] in
            let m = MutableBytes(raw)
            let three: [UInt8] = [1, 2, 3]
            return [
                RTPHeaderRewriter.overwriteExtensionValue(id: 3, uint24: 1, header: h, in: m),
                RTPHeaderRewriter.overwriteExtensionValue(id: 2, uint16: 1, header: h, in: m),
                RTPHeaderRewriter.overwriteExtensionValue(id: 9, uint16: 1, header: h, in: m),
                RTPHeaderRewriter.overwriteExtensionValue(id: 3, with: three.span.bytes, header: h, in: m),
                RTPHeaderRewriter.overwriteExtensionValue(id: 2, with: three.span.bytes, header: h, in: m),
            ]
        }
        #expect(results == [false, false, false, false, true])
        #expect(p[0..<16] == before[0..<16])
    }

    @Test func refusesExtensionRewriteInShorterBuffer() throws {
        var p = try packet()
        let h = try parse(p)
        p.removeLast(4)
        let ok = p.withUnsafeMutableBytes {
            RTPHeaderRewriter.setTransportSequenceNumber(7, id: 3, header: h, in: MutableBytes($0))
        }
        #expect(!ok)
    }

    @Test func refusesShortOrNonRTPBuffers() {
        var short: [UInt8] = [0x80, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0]
        var v1: [UInt8] = [0x40, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]
        var empty: [UInt8] = []
        for buffer in [short, v1, empty] {
            var b = buffer
            let results = b.withUnsafeMutableBytes { raw -> [Bool] in
                let m = MutableBytes(raw)
                return [
                    RTPHeaderRewriter.setSSRC(SSRC(1), in: m), RTPHeaderRewriter.setSequenceNumber(1, in: m),
                    RTPHeaderRewriter.setTimestamp(1, in: m), RTPHeaderRewriter.setMarker(true, in: m),
                    RTPHeaderRewriter.setPayloadType(PayloadType(masking: 1), in: m),
                ]
            }
            #expect(results == [false, false, false, false, false])
            #expect(b == buffer)
        }
        short[0] = 0; v1[0] = 0; empty = []
    }
}
