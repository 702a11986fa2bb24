import Testing

@testable import Signaling

@Suite struct HTTPResponseTests {
    @Test func serializesStatusHeadersContentLengthAndBody() {
        let response = HTTPResponse(
            status: 201, headers: HTTPHeaders([("Content-Type", "application/sdp"), ("Location", "/whip/r/1")]),
            body: Array("v=0\r\n".utf8))
        let expected =
            "HTTP/1.1 201 Created\r\n" + "Content-Type: application/sdp\r\n" + "Location: /whip/r/1\r\n"
            + "Content-Length: 5\r\n" + "\r\n" + "v=0\r\n"
        #expect(String(decoding: response.serialize(), as: UTF8.self) == expected)
    }

    @Test func contentLengthIsAlwaysTheBodyLength() {
        let response = HTTPResponse(status: 200, headers: HTTPHeaders([("content-length", "99")]))
        #expect(String(decoding: response.serialize(), as: UTF8.self) == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func dateIsWrittenOnlyWhenPassedIn() {
        let bytes = HTTPResponse(status: 204).serialize(date: "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(
            String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 204 No Content\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n")
    }

    @Test func switchingProtocolsHasNoContentLength() {
        let bytes = HTTPResponse(status: 101, headers: HTTPHeaders([("Upgrade", "websocket")])).serialize()
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
    }

    @Test func crAndLFInHeaderValuesCannotInjectHeaders() {
        let bytes = HTTPResponse(status: 200, headers: HTTPHeaders([("X", "a\r\nSet-Cookie: evil")])).serialize()
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 200 OK\r\nX: aSet-Cookie: evil\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func serializedRequestParsesBack() throws {
        // A response parsed as if it were a request is not meaningful; check
        // instead that the parser reads what a client would send for it.
        var parser = HTTPRequestParser()
        parser.feed(Array("PATCH /whip/r/1 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nab".utf8))
        let request = try #require(try parser.nextRequest())
        #expect(
            request
                == HTTPRequest(
                    method: "PATCH", target: "/whip/r/1", headers: HTTPHeaders([("Host", "h"), ("Content-Length", "2")]),
                    body: [0x61, 0x62]))
    }
}
