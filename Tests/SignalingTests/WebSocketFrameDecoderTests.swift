import Testing

@testable import Signaling

/// A client frame as a browser sends it: masked with `key`.
private func clientFrame(
    _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, key: UInt32 = 0x3712_A5C4
)
    -> [UInt8]
{
    WebSocketFrame(fin: fin, opcode: opcode, payload: payload).serialize(maskingKey: key)
}

private func decodeAll(_ bytes: [UInt8], max: Int = 1 << 20) -> ([WebSocketMessage], WebSocketProtocolError?) {
    var decoder = WebSocketFrameDecoder(maxMessageBytes: max)
    decoder.feed(bytes)
    var out: [WebSocketMessage] = []
    do {
        while let m = try decoder.nextMessage() { out.append(m) }
        return (out, nil)
    } catch {
        return (out, error)
    }
}

@Suite struct WebSocketFrameDecoderTests {
    /// RFC 6455 section 5.7: a masked "Hello" from a client.
    @Test func decodesRFC6455MaskedHello() {
        let bytes: [UInt8] = [
            0x81,  // FIN, text
            0x85,  // MASK, length 5
            0x37, 0xFA, 0x21, 0x3D,  // masking key
            0x7F, 0x9F, 0x4D, 0x51, 0x58,  // "Hello" masked
        ]
        let (messages, error) = decodeAll(bytes)
        #expect(messages == [.text("Hello")])
        #expect(error == nil)
        #expect(clientFrame(.text, Array("Hello".utf8), key: 0x37FA_213D) == bytes)
    }

    /// RFC 6455 section 5.7: the unmasked form is what the server sends.
    @Test func serverFramesAreUnmasked() {
        #expect(
            WebSocketFrame(opcode: .text, payload: Array("Hello".utf8)).serialize() == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(
            WebSocketFrame(opcode: .ping, payload: Array("Hello".utf8)).serialize() == [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
    }

    @Test func lengthsUseSevenSixteenAndSixtyFourBits() {
        let short = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 1, count: 125)).serialize()
        #expect(Array(short.prefix(2)) == [0x82, 125])
        let medium = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 1, count: 256)).serialize()
        #expect(Array(medium.prefix(4)) == [0x82, 126, 0x01, 0x00])
        let long = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 1, count: 65536)).serialize()
        #expect(Array(long.prefix(10)) == [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0])
        for size in [0, 125, 126, 65535, 65536] {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
            #expect(decodeAll(clientFrame(.binary, payload)).0 == [.binary(payload)], "size \(size)")
        }
    }

    @Test func nonMinimalLengthEncodingIsAccepted() {
        // 5 bytes sent in the 16-bit form.
        let bytes: [UInt8] = [0x82, 0xFE, 0x00, 0x05, 0, 0, 0, 0, 1, 2, 3, 4, 5]
        #expect(decodeAll(bytes).0 == [.binary([1, 2, 3, 4, 5])])
    }

    @Test func splitsAtEveryByteGiveTheSameMessages() throws {
        let stream =
            clientFrame(.text, Array("héllo".utf8), fin: false) + clientFrame(.ping, [9])
            + clientFrame(.continuation, Array(" world".utf8))
            + clientFrame(.binary, [UInt8](repeating: 0xAB, count: 300)) + clientFrame(.close, [0x03, 0xE8] + Array("bye".utf8))
        let expected: [WebSocketMessage] = [
            .ping([9]), .text("héllo world"), .binary([UInt8](repeating: 0xAB, count: 300)),
            .close(code: .normalClosure, reason: "bye"),
        ]
        #expect(decodeAll(stream).0 == expected)
        // Byte by byte.
        var decoder = WebSocketFrameDecoder()
        var got: [WebSocketMessage] = []
        for b in stream {
            decoder.feed([b])
            while let m = try decoder.nextMessage() { got.append(m) }
        }
        #expect(got == expected)
        #expect(decoder.consumedByteCount == stream.count)
        // Every two-way split.
        for split in 0...stream.count {
            var d = WebSocketFrameDecoder()
            var messages: [WebSocketMessage] = []
            d.feed(Array(stream[..<split]))
            while let m = try d.nextMessage() { messages.append(m) }
            d.feed(Array(stream[split...]))
            while let m = try d.nextMessage() { messages.append(m) }
            #expect(messages == expected, "split at \(split)")
        }
    }

    @Test func unmaskedClientFrameIs1002() {
        let (messages, error) = decodeAll(WebSocketFrame(opcode: .text, payload: Array("hi".utf8)).serialize())
        #expect(messages.isEmpty)
        #expect(error == .unmaskedFrame)
        #expect(error?.closeCode == .protocolError)
    }

    @Test(arguments: [UInt8(0x40), 0x20, 0x10])
    func reservedBitsAre1002(bit: UInt8) {
        var frame = clientFrame(.text, [0x61])
        frame[0] |= bit
        #expect(decodeAll(frame).1 == .reservedBitsSet)
    }

    @Test(arguments: [UInt8(3), 4, 5, 6, 7, 11, 12, 13, 14, 15])
    func reservedOpcodesAre1002(opcode: UInt8) {
        let (_, error) = decodeAll([0x80 | opcode, 0x80, 0, 0, 0, 0])
        #expect(error == .reservedOpcode(opcode))
        #expect(error?.closeCode.rawValue == 1002)
    }

    @Test func sixtyFourBitLengthWithMSBSetIs1002() {
        let bytes: [UInt8] = [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
        #expect(decodeAll(bytes).1 == .invalidPayloadLength)
    }

    @Test func oversizedControlFrameIs1002() {
        // 126 bytes in a ping, refused from the length byte alone.
        let (_, error) = decodeAll(Array(clientFrame(.ping, [UInt8](repeating: 0, count: 126)).prefix(2)))
        #expect(error == .invalidControlFrame)
        #expect(decodeAll(clientFrame(.ping, [UInt8](repeating: 0, count: 125))).0.count == 1)
    }

    @Test func fragmentedControlFrameIs1002() {
        #expect(decodeAll(clientFrame(.ping, [1], fin: false)).1 == .invalidControlFrame)
    }

    @Test func fragmentedMessageWithPingInTheMiddle() {
        let stream =
            clientFrame(.binary, [1, 2], fin: false) + clientFrame(.continuation, [3], fin: false)
            + clientFrame(.ping, Array("p".utf8))
            + clientFrame(.continuation, [4, 5])
        #expect(decodeAll(stream).0 == [.ping(Array("p".utf8)), .binary([1, 2, 3, 4, 5])])
    }

    @Test func continuationWithoutAMessageIs1002() {
        #expect(decodeAll(clientFrame(.continuation, [1])).1 == .unexpectedFragment)
    }

    @Test func newDataFrameInsideAFragmentedMessageIs1002() {
        let stream = clientFrame(.text, [0x61], fin: false) + clientFrame(.text, [0x62])
        #expect(decodeAll(stream).1 == .unexpectedFragment)
    }

    @Test func invalidUTF8TextIs1007() {
        for bad: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]] {
            let (_, error) = decodeAll(clientFrame(.text, bad))
            #expect(error == .invalidUTF8)
            #expect(error?.closeCode.rawValue == 1007)
        }
        // A code point split across fragments is fine.
        let split = clientFrame(.text, [0xE2, 0x82], fin: false) + clientFrame(.continuation, [0xAC])
        #expect(decodeAll(split).0 == [.text("€")])
    }

    @Test func messageOverTheLimitIs1009BeforeItsPayloadArrives() {
        let max = 1 << 20
        // Only the header of a 1 MiB + 1 frame: refused already.
        let header = Array(clientFrame(.binary, [UInt8](repeating: 0, count: max + 1)).prefix(14))
        let (_, error) = decodeAll(header)
        #expect(error == .messageTooBig)
        #expect(error?.closeCode.rawValue == 1009)
        #expect(decodeAll(clientFrame(.binary, [UInt8](repeating: 0, count: max))).0.count == 1)
    }

    @Test func fragmentsAddingUpOverTheLimitAre1009() {
        let stream =
            clientFrame(.binary, [UInt8](repeating: 0, count: 600), fin: false)
            + clientFrame(.continuation, [UInt8](repeating: 0, count: 425), fin: false)
            + Array(clientFrame(.continuation, [UInt8](repeating: 0, count: 1)).prefix(6))
        #expect(decodeAll(stream, max: 1025).1 == .messageTooBig)
        #expect(decodeAll(stream, max: 1026).1 == nil)
    }

    @Test func closePayloads() {
        #expect(decodeAll(clientFrame(.close, [])).0 == [.close(code: nil, reason: "")])
        #expect(decodeAll(clientFrame(.close, [0x0F, 0xA0])).0 == [.close(code: WebSocketCloseCode(4000), reason: "")])
        #expect(decodeAll(clientFrame(.close, [0x03])).1 == .invalidClosePayload)
        #expect(decodeAll(clientFrame(.close, [0x03, 0xE8, 0xFF])).1 == .invalidUTF8)
    }

    @Test(arguments: [UInt16(0), 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535])
    func invalidCloseCodesAre1002(code: UInt16) {
        let (_, error) = decodeAll(clientFrame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))
        #expect(error == .invalidClosePayload)
        #expect(error?.closeCode.rawValue == 1002)
    }

    @Test(arguments: [UInt16(1000), 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4999])
    func validCloseCodesAreAccepted(code: UInt16) {
        #expect(
            decodeAll(clientFrame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)])).0 == [
                .close(code: WebSocketCloseCode(code), reason: "")
            ])
    }

    @Test func errorsStick() {
        var decoder = WebSocketFrameDecoder()
        decoder.feed(WebSocketFrame(opcode: .text, payload: []).serialize())
        #expect(throws: WebSocketProtocolError.unmaskedFrame) { try decoder.nextMessage() }
        decoder.feed(clientFrame(.text, [0x61]))
        #expect(throws: WebSocketProtocolError.unmaskedFrame) { try decoder.nextMessage() }
    }
}
