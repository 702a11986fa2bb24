import Testing
import Wire

@testable import Signaling

/// RFC 6455 section 1.3: "the sample nonce" is the 16-byte nonce whose
/// base64 is `dGhlIHNhbXBsZSBub25jZQ==`.
private let sampleNonce = Array("the sample nonce".utf8)

private func handshake() -> WebSocketClientHandshake {
    WebSocketClientHandshake(host: "server.example.com", path: "/chat", nonce: sampleNonce)
}

private func failure(_ response: String) -> WebSocketClientHandshake.Failure? {
    do {
        _ = try handshake().receiveResponse(Array(response.utf8).span.bytes)
        return nil
    } catch {
        return error
    }
}

/// Fixed keys in order, so masked bytes are predictable.
private func keys(_ list: [UInt32]) -> () -> UInt32 {
    var i = 0
    return {
        defer { i += 1 }
        return list[i % list.count]
    }
}

@Suite struct WebSocketClientHandshakeTests {
    @Test func requestCarriesKeyOfNonceAndVersion13() {
        let text = String(decoding: handshake().requestBytes, as: UTF8.self)
        #expect(
            text == "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(handshake().expectedAccept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func requestIsAcceptedByTheServerSideHandshake() throws {
        var parser = HTTPRequestParser()
        parser.feed(handshake().requestBytes)
        let request = try #require(try parser.nextRequest())
        let response = try WebSocketHandshake.response(to: request)
        let bytes = response.serialize()
        let length = try handshake().receiveResponse(bytes.span.bytes)
        #expect(length == bytes.count)
    }

    @Test func acceptsRFCExampleResponseAndReportsHeadLength() throws {
        let head =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        // A server frame right after the head: not part of the head.
        let bytes = Array(head.utf8) + [0x81, 0x02, 0x68, 0x69]
        #expect(try handshake().receiveResponse(bytes.span.bytes) == head.utf8.count)
    }

    @Test func incompleteResponseNeedsMoreBytes() throws {
        #expect(try handshake().receiveResponse(Array("HTTP/1.1 101 Switching".utf8).span.bytes) == nil)
        #expect(try handshake().receiveResponse([UInt8]().span.bytes) == nil)
    }

    @Test func refusesWrongStatusUpgradeConnectionAndAccept() {
        let ok = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
        #expect(failure("HTTP/1.1 403 Forbidden\r\n\(ok)\r\n") == .notSwitchingProtocols(status: 403))
        #expect(
            failure("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n")
                == .missingUpgrade)
        #expect(
            failure("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: x\r\n\r\n")
                == .missingConnectionUpgrade)
        #expect(
            failure(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n") == .acceptMismatch)
        #expect(failure("HTTP/1.1 101 Switching Protocols\r\n\(ok)Sec-WebSocket-Accept: again\r\n\r\n") == .acceptMismatch)
        #expect(
            failure("HTTP/1.1 101 Switching Protocols\r\n\(ok)Sec-WebSocket-Protocol: chat\r\n\r\n")
                == .unexpectedSubprotocol("chat"))
        #expect(
            failure("HTTP/1.1 101 Switching Protocols\r\n\(ok)Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n")
                == .unexpectedExtension("permessage-deflate"))
    }

    @Test func refusesMalformedAndOversizedHeads() {
        #expect(failure("HTTP/2 101 x\r\n\r\n") == .malformedResponse(.malformedStatusLine))
        #expect(failure("HTTP/1.1 1x1 Switching\r\n\r\n") == .malformedResponse(.malformedStatusLine))
        #expect(failure("HTTP/1.1 101\r\nno colon here\r\n\r\n") == .malformedResponse(.malformedHeaderField))
        #expect(failure("HTTP/1.1 101\r\nBad Name: v\r\n\r\n") == .malformedResponse(.malformedHeaderField))
        #expect(failure("HTTP/1.1 101\r\nName: v\u{1}\r\n\r\n") == .malformedResponse(.malformedHeaderField))
        let endless = "HTTP/1.1 101 Switching Protocols\r\nX: " + String(repeating: "a", count: 17 * 1024)
        #expect(failure(endless) == .malformedResponse(.headTooLong))
    }

    @Test func parsesStatusReasonAndHeaders() throws {
        let bytes = Array("HTTP/1.0 201 Created\r\nLocation:  /whip/abc \r\nContent-Length: 0\r\n\r\n".utf8)
        let parsed = try #require(try HTTPResponseHead.parse(bytes.span.bytes))
        #expect(parsed.head.status == 201)
        #expect(parsed.head.version == .http1_0)
        #expect(parsed.head.reason == "Created")
        #expect(parsed.head.headers["location"] == "/whip/abc")
        #expect(parsed.length == bytes.count)
    }
}

@Suite struct WebSocketClientConnectionTests {
    /// RFC 6455 section 5.7: a masked "Hello" with key 37 fa 21 3d.
    @Test func textFrameIsMaskedWithTheGivenKey() {
        var c = WebSocketClientConnection(maskingKey: keys([0x37FA_213D]))
        c.send(text: "Hello")
        #expect(c.takeOutput() == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func everyFrameTakesAFreshKey() {
        var c = WebSocketClientConnection(maskingKey: keys([0x0102_0304, 0x0A0B_0C0D]))
        c.send(text: "a")
        c.send(binary: [0])
        // fin+text, mask bit + length 1, key 01 02 03 04, 'a' ^ 01
        // fin+binary, mask bit + length 1, key 0a 0b 0c 0d, 00 ^ 0a
        #expect(
            c.takeOutput() == [0x81, 0x81, 1, 2, 3, 4, 0x61 ^ 1, 0x82, 0x81, 0x0A, 0x0B, 0x0C, 0x0D, 0x0A])
    }

    @Test func unmaskedServerFramesAreDecoded() {
        var c = WebSocketClientConnection(maskingKey: keys([1]))
        // RFC 6455 section 5.7: an unmasked "Hello" from the server.
        #expect(c.receive([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]) == [.text("Hello")])
    }

    @Test func maskedServerFrameFailsTheConnectionWithProtocolError() {
        var c = WebSocketClientConnection(maskingKey: keys([0]))
        let events = c.receive([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        #expect(events == [.closed(code: .protocolError, reason: "server frames must not be masked")])
        #expect(c.isClosed)
        // A masked close frame (key 0) with code 1002 and the reason.
        let out = c.takeOutput()
        #expect(Array(out.prefix(8)) == [0x88, 0x80 | UInt8(2 + 32), 0, 0, 0, 0, 0x03, 0xEA])
    }

    @Test func pingIsAnsweredWithAMaskedPong() {
        var c = WebSocketClientConnection(maskingKey: keys([0xFFFF_FFFF]))
        #expect(c.receive([0x89, 0x01, 0x2A]).isEmpty)
        #expect(c.takeOutput() == [0x8A, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0x2A ^ 0xFF])
    }

    @Test func serverCloseIsEchoed() {
        var c = WebSocketClientConnection(maskingKey: keys([0]))
        #expect(c.receive([0x88, 0x02, 0x03, 0xE8]) == [.closed(code: .normalClosure, reason: "")])
        #expect(c.takeOutput() == [0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8])
        c.send(text: "late")
        #expect(c.takeOutput().isEmpty)
    }

    @Test func truncatedAndOversizedServerFrames() {
        var c = WebSocketClientConnection(maxMessageBytes: 200, maskingKey: keys([0]))
        // Only part of a 5-byte text frame: nothing yet.
        #expect(c.receive([0x81, 0x05, 0x48]).isEmpty)
        #expect(c.receive([0x65, 0x6C, 0x6C, 0x6F]) == [.text("Hello")])
        // A 16-bit length of 300 over the 200-byte limit.
        #expect(c.receive([0x82, 126, 0x01, 0x2C]) == [.closed(code: .messageTooBig, reason: "message too big")])
    }

    @Test func clientTalksToTheServerSideConnectionInMemory() {
        var client = WebSocketClientConnection(maskingKey: keys([0xDEAD_BEEF, 0x1234_5678]))
        var server = WebSocketConnection()
        client.send(text: #"{"type":"ping"}"#)
        client.sendPing([7])
        #expect(server.receive(client.takeOutput()) == [.text(#"{"type":"ping"}"#)])
        server.send(text: #"{"type":"pong"}"#)
        // The server's pong to our ping, then its text message.
        #expect(client.receive(server.takeOutput()) == [.pong([7]), .text(#"{"type":"pong"}"#)])
        client.close(code: .goingAway, reason: "bye")
        #expect(server.receive(client.takeOutput()) == [.closed(code: .goingAway, reason: "bye")])
        #expect(client.receive(server.takeOutput()) == [.closed(code: .goingAway, reason: "")])
        #expect(client.isClosed && server.isClosed)
    }
}
