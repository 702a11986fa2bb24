import Testing

@testable import Signaling

/// Feeds `text` to a fresh parser in one chunk and returns every request.
private func parseAll(
    _ bytes: [UInt8], limits: HTTPRequestParser.Limits = .init()
) throws(HTTPParseError)
    -> [HTTPRequest]
{
    var parser = HTTPRequestParser(limits: limits)
    parser.feed(bytes)
    var out: [HTTPRequest] = []
    while let r = try parser.nextRequest() { out.append(r) }
    return out
}

private func error(of bytes: [UInt8]) -> HTTPParseError? {
    do {
        _ = try parseAll(bytes)
        return nil
    } catch {
        return error
    }
}

private let whipOffer = Array(
    ("POST /whip/lobby?token=abc&x=1 HTTP/1.1\r\n" + "Host: sfu.example\r\n" + "Content-Type: application/sdp\r\n"
        + "Authorization: Bearer xyz\r\n" + "Content-Length: 12\r\n" + "\r\n" + "v=0\r\no=- 1\r\n").utf8)

@Suite struct HTTPRequestParserTests {
    @Test func parsesRequestLineHeadersAndBody() throws {
        let requests = try parseAll(whipOffer)
        try #require(requests.count == 1)
        let r = requests[0]
        #expect(r.method == "POST")
        #expect(r.target == "/whip/lobby?token=abc&x=1")
        #expect(r.path == "/whip/lobby")
        #expect(r.query == "token=abc&x=1")
        #expect(r.version == .http1_1)
        #expect(r.headers["content-type"] == "application/sdp")
        #expect(r.headers["AUTHORIZATION"] == "Bearer xyz")
        #expect(r.body == Array("v=0\r\no=- 1\r\n".utf8))
        #expect(r.keepAlive)
    }

    @Test func byteByByteFeedingGivesTheSameRequest() throws {
        let whole = try parseAll(whipOffer)
        var parser = HTTPRequestParser()
        var got: [HTTPRequest] = []
        for (i, b) in whipOffer.enumerated() {
            parser.feed([b])
            if let r = try parser.nextRequest() { got.append(r) }
            if i < whipOffer.count - 1 {
                #expect(got.isEmpty)
                #expect(parser.hasIncompleteRequest)
            }
        }
        #expect(got == whole)
        #expect(!parser.hasIncompleteRequest)
        #expect(parser.consumedByteCount == whipOffer.count)
    }

    @Test func everySplitPointGivesTheSameRequest() throws {
        let whole = try parseAll(whipOffer)
        for split in 0...whipOffer.count {
            var parser = HTTPRequestParser()
            parser.feed(Array(whipOffer[..<split]))
            var got: [HTTPRequest] = []
            if let r = try parser.nextRequest() { got.append(r) }
            parser.feed(Array(whipOffer[split...]))
            if let r = try parser.nextRequest() { got.append(r) }
            #expect(got == whole, "split at \(split)")
        }
    }

    @Test func repeatedHeadersAreKeptInOrder() throws {
        let r = try parseAll(Array("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nx-a:2\r\nX-A:  3 \r\n\r\n".utf8))
        #expect(r.first?.headers.values("x-a") == ["1", "2", "3"])
        #expect(r.first?.query == nil)
        #expect(r.first?.body == [])
    }

    @Test func pipelinedRequestsComeOutOneByOne() throws {
        let bytes = Array(
            ("GET /a HTTP/1.1\r\nHost: h\r\n\r\n" + "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                + "DELETE /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").utf8)
        let r = try parseAll(bytes)
        #expect(r.map(\.method) == ["GET", "POST", "DELETE"])
        #expect(r.map(\.path) == ["/a", "/b", "/c"])
        #expect(r[1].body == Array("abc".utf8))
        #expect(r.map(\.keepAlive) == [true, true, false])
    }

    @Test func noRequestIsParsedAfterConnectionClose() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(try parser.nextRequest()?.path == "/a")
        #expect(try parser.nextRequest() == nil)
        #expect(parser.isFinished)
        #expect(!parser.hasIncompleteRequest)
    }

    @Test func keepAliveFollowsVersionAndConnectionHeader() throws {
        func keepAlive(_ head: String) throws -> Bool? { try parseAll(Array((head + "\r\n\r\n").utf8)).first?.keepAlive }
        #expect(try keepAlive("GET / HTTP/1.1\r\nHost: h") == true)
        #expect(try keepAlive("GET / HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive, CLOSE") == false)
        #expect(try keepAlive("GET / HTTP/1.0") == false)
        #expect(try keepAlive("GET / HTTP/1.0\r\nConnection: keep-alive") == true)
    }

    @Test func leadingEmptyLinesAreIgnored() throws {
        let r = try parseAll(Array("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(r.count == 1)
    }

    @Test func incompleteBodyStaysPending() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc".utf8))
        #expect(try parser.nextRequest() == nil)
        #expect(parser.hasIncompleteRequest)
        #expect(parser.bufferedByteCount == 3)
        parser.feed(Array("defghij".utf8))
        #expect(try parser.nextRequest()?.body == Array("abcdefghij".utf8))
    }

    @Test func bodyLongerThanContentLengthIsReadAsTheNextRequest() throws {
        // "abcdef" with Content-Length 3: "def" starts a request line that
        // never becomes valid.
        let bytes = Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcdef\r\n\r\n".utf8)
        var parser = HTTPRequestParser()
        parser.feed(bytes)
        #expect(try parser.nextRequest()?.body == Array("abc".utf8))
        #expect(throws: HTTPParseError.malformedRequestLine) { try parser.nextRequest() }
        // Errors stick.
        #expect(throws: HTTPParseError.malformedRequestLine) { try parser.nextRequest() }
    }

    @Test func headerSectionAtTheLimitPassesAndOneByteMoreIs431() throws {
        func head(totalBytes: Int) -> [UInt8] {
            let prefix = "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: "
            let pad = totalBytes - prefix.utf8.count - 4
            return Array((prefix + String(repeating: "a", count: pad) + "\r\n\r\n").utf8)
        }
        #expect(head(totalBytes: 16384).count == 16384)
        #expect(try parseAll(head(totalBytes: 16384)).count == 1)
        #expect(error(of: head(totalBytes: 16385)) == .headerSectionTooLarge)
        #expect(HTTPParseError.headerSectionTooLarge.status == 431)
    }

    @Test func unterminatedHeaderSectionIs431AsSoonAsItPassesTheLimit() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array(("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 16384 - 20)).utf8))
        #expect(try parser.nextRequest() == nil)
        parser.feed(Array(repeating: UInt8(ascii: "a"), count: 30))
        #expect(throws: HTTPParseError.headerSectionTooLarge) { try parser.nextRequest() }
    }

    @Test func bodyOverOneMebibyteIs413BeforeTheBodyArrives() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1048577\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.contentTooLarge) { try parser.nextRequest() }
        #expect(HTTPParseError.contentTooLarge.status == 413)

        var exact = HTTPRequestParser()
        exact.feed(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1048576\r\n\r\n".utf8))
        exact.feed([UInt8](repeating: 7, count: 1_048_576))
        #expect(try exact.nextRequest()?.body.count == 1_048_576)
    }

    @Test func hugeContentLengthIs413NotATrap() {
        #expect(
            error(of: Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n".utf8))
                == .contentTooLarge)
    }

    @Test(arguments: [
        "Content-Length: -1", "Content-Length: abc", "Content-Length: 1.5", "Content-Length:", "Content-Length: +3",
        "Content-Length: 3\r\nContent-Length: 4", "Content-Length: 3, 4", "Content-Length: 0x10",
    ])
    func badContentLengthIs400(field: String) {
        let e = error(of: Array("POST / HTTP/1.1\r\nHost: h\r\n\(field)\r\n\r\nabcd".utf8))
        #expect(e == .invalidContentLength)
        #expect(e?.status == 400)
    }

    @Test func identicalRepeatedContentLengthsAreOneLength() throws {
        let r = try parseAll(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nab".utf8))
        #expect(r.first?.body == Array("ab".utf8))
    }

    @Test func chunkedBodyIs411AndOtherCodingsAre501() throws {
        let chunked = error(
            of: Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".utf8))
        #expect(chunked == .chunkedBodyNotSupported)
        #expect(chunked?.status == 411)
        let gzip = error(of: Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n".utf8))
        #expect(gzip?.status == 501)
        let both = error(of: Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(both == .transferEncodingWithContentLength)
        #expect(both?.status == 400)
    }

    @Test(arguments: [
        "GET / HTTP/1.1 extra", "GET  / HTTP/1.1", "GET /", "GET / HTTP/1", "GET / http/1.1", " GET / HTTP/1.1",
        "G(T / HTTP/1.1", "GET /a\u{7F}b HTTP/1.1", "GET / HTTP/1.1x", "GET / HTTP/a.b",
    ])
    func malformedRequestLineIs400(line: String) {
        let e = error(of: Array((line + "\r\nHost: h\r\n\r\n").utf8))
        #expect(e == .malformedRequestLine)
        #expect(e?.status == 400)
    }

    @Test func nonASCIIInTargetIs400() {
        #expect(
            error(of: [0x47, 0x45, 0x54, 0x20, 0x2F, 0xC3, 0xA9, 0x20] + Array("HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
                == .malformedRequestLine)
    }

    @Test(arguments: ["HTTP/2.0", "HTTP/1.2", "HTTP/0.9", "HTTP/3.0"])
    func otherVersionsAre505(version: String) {
        let e = error(of: Array("GET / \(version)\r\nHost: h\r\n\r\n".utf8))
        #expect(e == .versionNotSupported)
        #expect(e?.status == 505)
    }

    @Test(arguments: [
        "NoColon", "Bad Name: x", "Name : x", ": empty", " folded: x", "X: a\u{0}b", "X: a\rb", "X: a\nb",
        "X(y): z",
    ])
    func malformedHeaderFieldIs400(field: String) {
        let e = error(of: Array("GET / HTTP/1.1\r\nHost: h\r\n\(field)\r\n\r\n".utf8))
        #expect(e == .malformedHeaderField)
        #expect(e?.status == 400)
    }

    @Test func obsTextValuesSurviveAsLatin1() throws {
        let r = try parseAll(Array("GET / HTTP/1.1\r\nHost: h\r\nX: ".utf8) + [0xE9, 0xFF] + Array("\r\n\r\n".utf8))
        #expect(r.first?.headers["x"] == "\u{E9}\u{FF}")
    }

    @Test func http11NeedsExactlyOneHost() throws {
        #expect(error(of: Array("GET / HTTP/1.1\r\n\r\n".utf8)) == .invalidHost)
        #expect(error(of: Array("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".utf8)) == .invalidHost)
        #expect(try parseAll(Array("GET / HTTP/1.0\r\n\r\n".utf8)).count == 1)
    }

    @Test func errorResponseClosesTheConnection() {
        let response = HTTPParseError.headerSectionTooLarge.response
        #expect(response.status == 431)
        #expect(response.reason == "Request Header Fields Too Large")
        #expect(response.headers["Connection"] == "close")
    }
}

@Suite struct HTTPUpgradeHandoverTests {
    @Test func bytesAfterAnUpgradeRequestAreHandedOver() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n".utf8) + [0x81, 0x80])
        #expect(try parser.nextRequest()?.path == "/ws")
        #expect(parser.takeBufferedBytes() == [0x81, 0x80])
        parser.feed([1, 2, 3])
        #expect(try parser.nextRequest() == nil)
        #expect(parser.isFinished)
    }
}
