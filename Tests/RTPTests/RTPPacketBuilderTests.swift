import Testing
import Wire

@testable import RTP

@Suite struct RTPPacketBuilderTests {
    @Test func buildsMinimalPacketByteForByte() throws {
        let p = try RTPPacketBuilder(
            marker: true, payloadType: PayloadType(masking: 96), sequenceNumber: 0x1234, timestamp: 0xDEAD_BEEF,
            ssrc: SSRC(0x0102_0304)
        ).build(payload: [0xAA])
        #expect(p == [0x80, 0xE0, 0x12, 0x34, 0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04, 0xAA])
    }

    @Test func choosesOneByteFormWhenAllElementsFit() throws {
        let p = try RTPPacketBuilder(
            payloadType: PayloadType(masking: 96), sequenceNumber: 1, timestamp: 1, ssrc: SSRC(1),
            extensions: [.init(id: 1, value: [0x30]), .init(id: 14, value: [UInt8](repeating: 9, count: 16))]
        ).build()
        #expect(p[0] == 0x90)
        #expect(Array(p[12..<16]) == [0xBE, 0xDE, 0x00, 0x05])  // 2 + 17 = 19 -> 20 bytes
        #expect(Array(p[16..<18]) == [0x10, 0x30])
        #expect(p[18] == 0xEF)
        #expect(p.count == 36)
        #expect(Array(p[35...]) == [0])
    }

    @Test func choosesTwoByteFormForLargeIDsLongOrEmptyValues() throws {
        for ext in [
            RTPPacketBuilder.Extension(id: 15, value: [1]), .init(id: 1, value: []),
            .init(id: 1, value: [UInt8](repeating: 1, count: 17)),
        ] {
            let b = RTPPacketBuilder(
                payloadType: PayloadType(masking: 96), sequenceNumber: 1, timestamp: 1, ssrc: SSRC(1),
                extensions: [.init(id: 2, value: [7]), ext], twoByteAppBits: 3)
            #expect(try b.rfc8285Form() == .twoByte(appBits: 3))
            let p = try b.build()
            #expect(Array(p[12..<14]) == [0x10, 0x03])
            #expect(Array(p[16..<19]) == [0x02, 0x01, 0x07])
            let h = try parse(p)
            #expect(h.extensionValueBytes(id: ext.id, in: p) == ext.value)
        }
    }

    @Test func writesPaddingWithCountInLastByte() throws {
        let p = try RTPPacketBuilder(
            payloadType: PayloadType(masking: 0), sequenceNumber: 1, timestamp: 1, ssrc: SSRC(1), paddingLength: 4
        ).build(payload: [0xAA])
        #expect(p[0] == 0xA0)
        #expect(Array(p[12...]) == [0xAA, 0, 0, 0, 4])
        let h = try parse(p)
        #expect(h.payloadLength == 1)
    }

    @Test func writesOpaqueExtensionVerbatim() throws {
        let p = try RTPPacketBuilder(
            payloadType: PayloadType(masking: 0), sequenceNumber: 1, timestamp: 1, ssrc: SSRC(1),
            opaqueExtension: .init(profile: 0x1234, data: [1, 2, 3, 4])
        ).build()
        #expect(Array(p[12...]) == [0x12, 0x34, 0x00, 0x01, 1, 2, 3, 4])
    }

    @Test func writesIntoCallerBufferAndReportsShortBuffer() throws {
        let b = RTPPacketBuilder(
            payloadType: PayloadType(masking: 96), sequenceNumber: 5, timestamp: 6, ssrc: SSRC(7),
            csrcs: [SSRC(8)], extensions: [.init(id: 1, value: [1, 2])])
        let payload: [UInt8] = [1, 2, 3]
        var buffer = [UInt8](repeating: 0xFF, count: 64)
        let n = try write(b, payload, into: &buffer).get()
        #expect(n == 12 + 4 + 8 + 3)
        #expect(Array(buffer[..<n]) == (try b.build(payload: payload)))
        #expect(buffer[n] == 0xFF)
        var small = [UInt8](repeating: 0, count: n - 1)
        #expect(throws: RTPPacketBuilder.BuildError.bufferTooSmall(needed: n)) {
            try write(b, payload, into: &small).get()
        }
    }

    func write(_ b: RTPPacketBuilder, _ payload: [UInt8], into buffer: inout [UInt8]) -> Result<Int, RTPPacketBuilder.BuildError>
    {
        buffer.withUnsafeMutableBytes { raw in
            do throws(RTPPacketBuilder.BuildError) {
                return .success(try b.write(payload: payload.span.bytes, into: MutableBytes(raw)))
            } catch {
                return .failure(error)
            }
        }
    }

    @Test func rejectsInvalidConfigurations() {
        func builder(_ change: (inout RTPPacketBuilder) -> Void) -> RTPPacketBuilder {
            var b = RTPPacketBuilder(payloadType: PayloadType(masking: 0), sequenceNumber: 0, timestamp: 0, ssrc: SSRC(0))
            change(&b)
            return b
        }
        #expect(throws: RTPPacketBuilder.BuildError.tooManyCSRCs) {
            try builder { $0.csrcs = (0..<16).map { SSRC(UInt32($0)) } }.build()
        }
        #expect(throws: RTPPacketBuilder.BuildError.invalidExtensionID(0)) {
            try builder { $0.extensions = [.init(id: 0, value: [1])] }.build()
        }
        #expect(throws: RTPPacketBuilder.BuildError.extensionValueTooLong(id: 4)) {
            try builder { $0.extensions = [.init(id: 4, value: [UInt8](repeating: 0, count: 256))] }.build()
        }
        #expect(throws: RTPPacketBuilder.BuildError.invalidPadding) { try builder { $0.paddingLength = 256 }.build() }
        #expect(throws: RTPPacketBuilder.BuildError.invalidPadding) { try builder { $0.paddingLength = -1 }.build() }
        #expect(throws: RTPPacketBuilder.BuildError.invalidExtensionBlock) {
            try builder { $0.opaqueExtension = .init(profile: 1, data: [1, 2, 3]) }.build()
        }
    }

    @Test func roundTripsThroughParser() throws {
        let b = RTPPacketBuilder(
            marker: true, payloadType: PayloadType(masking: 100), sequenceNumber: 65000, timestamp: 90000,
            ssrc: SSRC(42), csrcs: [SSRC(1), SSRC(2), SSRC(3)],
            extensions: [.init(id: 5, value: [1, 2, 3, 4, 5])], paddingLength: 7)
        let p = try b.build(payload: [9, 8, 7, 6])
        let h = try parse(p)
        #expect(h.marker && h.payloadType == b.payloadType && h.sequenceNumber == 65000)
        #expect(h.timestamp == 90000 && h.ssrc == SSRC(42) && h.csrcCount == 3)
        #expect(h.csrc(at: 2, in: p) == SSRC(3))
        #expect(h.extensionValueBytes(id: 5, in: p) == [1, 2, 3, 4, 5])
        #expect(Array(p[h.payloadRange]) == [9, 8, 7, 6])
        #expect(h.paddingLength == 7)
    }
}
