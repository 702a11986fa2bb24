import Testing
import Wire

@testable import RTP

@Suite struct EgressHeaderExtensionsTests {
    private let payload: [UInt8] = Array(0..<40)

    /// Writes `egress` into a copy of `packet` in a buffer with `room`
    /// spare bytes; returns the new packet, or nil.
    private func rewrite(_ packet: [UInt8], _ egress: EgressHeaderExtensions, room: Int = 32) throws -> [UInt8]? {
        let header = try RTPHeader(parsing: packet.span.bytes)
        var buffer = packet + Array(repeating: 0xEE, count: room)
        let length = buffer.withUnsafeMutableBytes { egress.write(into: $0, length: packet.count, header: header) }
        return length.map { Array(buffer[0..<$0]) }
    }

    @Test func thePublishersExtensionsAreReplacedByOursAndThePayloadAndPaddingKept() throws {
        // Publisher: two CSRCs, audio level (id 1) and mid (id 4), 3 bytes
        // of padding.
        let packet = try RTPPacketBuilder(
            marker: true, payloadType: PayloadType(masking: 111), sequenceNumber: 7, timestamp: 9, ssrc: SSRC(0xAABB_CCDD),
            csrcs: [SSRC(1), SSRC(2)],
            extensions: [.init(id: 1, value: [0x85]), .init(id: 4, value: Array("audio0".utf8))], paddingLength: 3
        ).build(payload: payload)
        let egress = EgressHeaderExtensions(
            transportSequenceNumber: (id: 3, value: 0x1234), absoluteSendTime: (id: 2, value: 0xAB_CDEF))
        let out = try #require(try rewrite(packet, egress))
        let header = try RTPHeader(parsing: out.span.bytes)
        #expect(header.marker)
        #expect(header.payloadType == PayloadType(masking: 111))
        #expect(header.sequenceNumber == 7)
        #expect(header.csrcCount == 2)
        #expect(header.paddingLength == 3)
        #expect(Array(out[header.payloadRange]) == payload)
        // Fixed header + 2 CSRCs, then BE DE 00 02, [0x31 12 34] [0x22 AB CD EF] 00.
        #expect(Array(out[20..<32]) == [0xBE, 0xDE, 0x00, 0x02, 0x31, 0x12, 0x34, 0x22, 0xAB, 0xCD, 0xEF, 0x00])
        let expectedLength = 12 + 8 + 12 + payload.count + 3
        #expect(out.count == expectedLength)
        let level = header.extensionValueRange(id: 1, in: out.span.bytes)
        let twccRange = header.extensionValueRange(id: 3, in: out.span.bytes)
        let sendTimeRange = header.extensionValueRange(id: 2, in: out.span.bytes)
        #expect(level == nil)
        let twcc = try #require(twccRange)
        let sendTime = try #require(sendTimeRange)
        #expect(Array(out[twcc]) == [0x12, 0x34])
        #expect(Array(out[sendTime]) == [0xAB, 0xCD, 0xEF])
    }

    @Test func aPacketWithoutExtensionsGetsABlockAndNoElementsRemovesIt() throws {
        let plain = try RTPPacketBuilder(payloadType: PayloadType(masking: 96), sequenceNumber: 1, timestamp: 2, ssrc: SSRC(3))
            .build(payload: payload)
        let withTWCC = try #require(
            try rewrite(plain, EgressHeaderExtensions(transportSequenceNumber: (id: 5, value: 0xFFFF))))
        #expect(withTWCC.count == plain.count + 8)
        #expect(withTWCC[0] & 0x10 != 0)
        #expect(Array(withTWCC[12..<20]) == [0xBE, 0xDE, 0x00, 0x01, 0x51, 0xFF, 0xFF, 0x00])
        let stripped = try #require(try rewrite(withTWCC, EgressHeaderExtensions()))
        #expect(stripped == plain)
    }

    @Test func noRoomBadIDsOrAMismatchedHeaderLeaveTheBufferAlone() throws {
        let plain = try RTPPacketBuilder(payloadType: PayloadType(masking: 96), sequenceNumber: 1, timestamp: 2, ssrc: SSRC(3))
            .build(payload: payload)
        let twcc = EgressHeaderExtensions(transportSequenceNumber: (id: 3, value: 1))
        #expect(try rewrite(plain, twcc, room: 7) == nil)
        #expect(try rewrite(plain, twcc, room: 8) != nil)
        #expect(try rewrite(plain, EgressHeaderExtensions(transportSequenceNumber: (id: 15, value: 1))) == nil)
        #expect(try rewrite(plain, EgressHeaderExtensions(absoluteSendTime: (id: 0, value: 1))) == nil)
        // A header parsed from another packet (length differs).
        let other = try RTPHeader(parsing: Array(plain.dropLast(4)).span.bytes)
        var buffer = plain + Array(repeating: 0, count: 16)
        let length = buffer.withUnsafeMutableBytes { twcc.write(into: $0, length: plain.count, header: other) }
        #expect(length == nil)
        #expect(Array(buffer[0..<plain.count]) == plain)
    }
}

/// `copy` builds, in one pass from the source packet, what a copy then
/// `write` builds in place.
@Suite struct EgressCopyTests {
    private func copied(_ packet: [UInt8], _ egress: EgressHeaderExtensions, room: Int) throws -> [UInt8]? {
        let header = try RTPHeader(parsing: packet.span.bytes)
        var buffer = [UInt8](repeating: 0xEE, count: packet.count + room)
        let length = packet.withUnsafeBytes { source in
            buffer.withUnsafeMutableBytes { egress.copy(source, header: header, into: $0) }
        }
        return length.map { Array(buffer[0..<$0]) }
    }

    private func written(_ packet: [UInt8], _ egress: EgressHeaderExtensions, room: Int) throws -> [UInt8]? {
        let header = try RTPHeader(parsing: packet.span.bytes)
        var buffer = packet + Array(repeating: 0xEE, count: room)
        let length = buffer.withUnsafeMutableBytes { egress.write(into: $0, length: packet.count, header: header) }
        return length.map { Array(buffer[0..<$0]) }
    }

    @Test func copyingOnceGivesWhatCopyingThenWritingGives() throws {
        let payload: [UInt8] = Array(0..<40)
        let packets = [
            try RTPPacketBuilder(
                marker: true, payloadType: PayloadType(masking: 111), sequenceNumber: 7, timestamp: 9,
                ssrc: SSRC(0xAABB_CCDD), csrcs: [SSRC(1), SSRC(2)],
                extensions: [.init(id: 1, value: [0x85]), .init(id: 4, value: Array("audio0".utf8))], paddingLength: 3
            ).build(payload: payload),
            try RTPPacketBuilder(payloadType: PayloadType(masking: 96), sequenceNumber: 1, timestamp: 2, ssrc: SSRC(3))
                .build(payload: payload),
            // A block longer than ours (the payload moves towards the header).
            try RTPPacketBuilder(
                payloadType: PayloadType(masking: 96), sequenceNumber: 1, timestamp: 2, ssrc: SSRC(3),
                extensions: [.init(id: 9, value: Array(repeating: 7, count: 16))]
            ).build(payload: payload),
        ]
        let egresses = [
            EgressHeaderExtensions(),
            EgressHeaderExtensions(transportSequenceNumber: (id: 3, value: 0x1234), absoluteSendTime: (id: 2, value: 0xAB_CDEF)),
            EgressHeaderExtensions(
                transportSequenceNumber: (id: 3, value: 1),
                absoluteCaptureTime: (id: 4, timestamp: 0x0102_0304_0506_0708, clockOffset: -2)),
        ]
        for packet in packets {
            for egress in egresses {
                let expected = try #require(try written(packet, egress, room: 40))
                #expect(try copied(packet, egress, room: 40) == expected)
            }
        }
        // No room, or a bad id: nil, as `write` says.
        let twcc = EgressHeaderExtensions(transportSequenceNumber: (id: 3, value: 1))
        #expect(try copied(packets[1], twcc, room: 7) == nil)
        #expect(try copied(packets[1], twcc, room: 8) != nil)
        #expect(try copied(packets[1], EgressHeaderExtensions(transportSequenceNumber: (id: 15, value: 1)), room: 40) == nil)
    }
}

@Suite struct EgressCaptureTimeTests {
    /// abs-capture-time passes through: 8 bytes (timestamp) or 16 (with the
    /// clock offset), one-byte header L = 7 or 15.
    @Test func captureTimeIsWrittenWithAndWithoutTheClockOffset() throws {
        let plain = try RTPPacketBuilder(payloadType: PayloadType(masking: 96), sequenceNumber: 1, timestamp: 2, ssrc: SSRC(3))
            .build(payload: [0xAA, 0xBB])
        for offset in [nil, Int64(-2)] as [Int64?] {
            let egress = EgressHeaderExtensions(
                absoluteCaptureTime: (id: 4, timestamp: 0x0102_0304_0506_0708, clockOffset: offset))
            let header = try RTPHeader(parsing: plain.span.bytes)
            var buffer = plain + Array(repeating: 0, count: 40)
            let length = try #require(
                buffer.withUnsafeMutableBytes { egress.write(into: $0, length: plain.count, header: header) })
            let out = Array(buffer[0..<length])
            let parsed = try RTPHeader(parsing: out.span.bytes)
            let range = parsed.extensionValueRange(id: 4, in: out.span.bytes)
            let r = try #require(range)
            let value = EgressHeaderExtensions.absoluteCaptureTime(in: out.span.bytes, range: r)
            #expect(value?.timestamp == 0x0102_0304_0506_0708)
            #expect(value?.clockOffset == offset)
            #expect(Array(out[parsed.payloadRange]) == [0xAA, 0xBB])
            // 4-byte block header + 1 + 8 (+ 8), padded to 32 bits.
            #expect(length == plain.count + (offset == nil ? 16 : 24))
        }
        // Other lengths are not abs-capture-time.
        let odd: [UInt8] = Array(repeating: 1, count: 12)
        #expect(EgressHeaderExtensions.absoluteCaptureTime(in: odd.span.bytes, range: 0..<12) == nil)
        #expect(EgressHeaderExtensions.absoluteCaptureTime(in: odd.span.bytes, range: 8..<16) == nil)
    }
}
