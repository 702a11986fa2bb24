import Testing

@testable import Signaling

private func clientFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
    WebSocketFrame(fin: fin, opcode: opcode, payload: payload).serialize(maskingKey: 0xA1B2_C3D4)
}

@Suite struct WebSocketConnectionTests {
    @Test func deliversMessagesAndSendsUnmaskedFrames() {
        var c = WebSocketConnection()
        let events = c.receive(clientFrame(.text, Array("hi".utf8)) + clientFrame(.binary, [1, 2]))
        #expect(events == [.text("hi"), .binary([1, 2])])
        c.send(text: "ok")
        c.send(binary: [9])
        #expect(c.takeOutput() == [0x81, 0x02, 0x6F, 0x6B, 0x82, 0x01, 0x09])
        #expect(c.takeOutput() == [])
    }

    @Test func answersPingWithPongOfTheSamePayload() {
        var c = WebSocketConnection()
        #expect(c.receive(clientFrame(.ping, [7, 8])) == [])
        #expect(c.takeOutput() == [0x8A, 0x02, 7, 8])
    }

    @Test func reportsPongs() {
        var c = WebSocketConnection()
        c.sendPing([1])
        #expect(c.takeOutput() == [0x89, 0x01, 1])
        #expect(c.receive(clientFrame(.pong, [1])) == [.pong([1])])
    }

    @Test func peerCloseIsEchoedThenClosed() {
        var c = WebSocketConnection()
        let events = c.receive(clientFrame(.close, [0x03, 0xE9] + Array("away".utf8)) + clientFrame(.text, [0x61]))
        #expect(events == [.closed(code: .goingAway, reason: "away")])
        #expect(c.isClosed)
        #expect(c.takeOutput() == [0x88, 0x02, 0x03, 0xE9])
        c.send(text: "late")
        #expect(c.takeOutput() == [])
        #expect(c.receive(clientFrame(.text, [0x61])) == [])
    }

    @Test func emptyCloseIsEchoedEmpty() {
        var c = WebSocketConnection()
        #expect(c.receive(clientFrame(.close, [])) == [.closed(code: nil, reason: "")])
        #expect(c.takeOutput() == [0x88, 0x00])
    }

    @Test func ourCloseWaitsForThePeersClose() {
        var c = WebSocketConnection()
        c.close(code: .normalClosure, reason: "done")
        #expect(c.state == .closing)
        #expect(c.takeOutput() == [0x88, 0x06, 0x03, 0xE8] + Array("done".utf8))
        // Data still arriving is delivered; pings are not answered any more.
        #expect(c.receive(clientFrame(.text, [0x61]) + clientFrame(.ping, [])) == [.text("a")])
        #expect(!c.isClosed)
        #expect(c.receive(clientFrame(.close, [0x03, 0xE8])) == [.closed(code: .normalClosure, reason: "")])
        #expect(c.isClosed)
        #expect(c.takeOutput() == [])
    }

    @Test func protocolErrorSendsCloseWithItsCode() {
        var c = WebSocketConnection()
        let events = c.receive(WebSocketFrame(opcode: .text, payload: [0x61]).serialize())
        #expect(events == [.closed(code: .protocolError, reason: "client frames must be masked")])
        #expect(c.isClosed)
        #expect(c.takeOutput() == [0x88, 0x1E, 0x03, 0xEA] + Array("client frames must be masked".utf8))
    }

    @Test func invalidUTF8Sends1007() {
        var c = WebSocketConnection()
        _ = c.receive(clientFrame(.text, [0xC3]))
        let out = c.takeOutput()
        #expect(Array(out.prefix(4)) == [0x88, UInt8(2 + "invalid UTF-8".utf8.count), 0x03, 0xEF])
    }

    @Test func oversizedMessageSends1009() {
        var c = WebSocketConnection(maxMessageBytes: 1000)
        let events = c.receive(Array(clientFrame(.binary, [UInt8](repeating: 0, count: 1001)).prefix(8)))
        #expect(events == [.closed(code: .messageTooBig, reason: "message too big")])
        #expect(Array(c.takeOutput().prefix(4)) == [0x88, 17, 0x03, 0xF1])
    }

    @Test func closeReasonIsCutToFitAControlFrame() {
        var c = WebSocketConnection()
        c.close(code: .goingAway, reason: String(repeating: "é", count: 100))
        let out = c.takeOutput()
        // 2 + 2 + 122 bytes: 61 two-byte characters fit in 123.
        #expect(out.count == 2 + 2 + 122)
        #expect(out[1] == 124)
    }
}
