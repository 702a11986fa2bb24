import Testing

@testable import Signaling

private func upgradeRequest(_ extra: [(String, String)] = [], drop: String? = nil, method: String = "GET") -> HTTPRequest {
    var fields: [(String, String)] = [
        ("Host", "server.example.com"), ("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
    ]
    fields.removeAll { $0.0 == drop }
    return HTTPRequest(method: method, target: "/ws", headers: HTTPHeaders(fields + extra))
}

private func rejection(_ request: HTTPRequest) -> WebSocketHandshake.Rejection? {
    do {
        _ = try WebSocketHandshake.response(to: request)
        return nil
    } catch {
        return error
    }
}

@Suite struct WebSocketHandshakeTests {
    /// RFC 6455 section 1.3: the sample nonce and its accept value, as the RFC
    /// prints it (28 characters: base64 of a 20-byte SHA-1).
    @Test func acceptValueMatchesRFC6455Example() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func validUpgradeGets101WithAcceptKey() throws {
        let response = try WebSocketHandshake.response(to: upgradeRequest())
        #expect(response.status == 101)
        #expect(response.headers["Upgrade"] == "websocket")
        #expect(response.headers["Connection"] == "Upgrade")
        #expect(response.headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(response.headers["Sec-WebSocket-Protocol"] == nil)
        let text = String(decoding: response.serialize(), as: UTF8.self)
        #expect(
            text == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
    }

    @Test func headerValuesAreCaseInsensitiveTokens() throws {
        var request = upgradeRequest(drop: "Upgrade")
        request.headers.replaceOrAdd(name: "upgrade", value: "WebSocket")
        request.headers.replaceOrAdd(name: "connection", value: "UPGRADE")
        #expect(try WebSocketHandshake.response(to: request).status == 101)
    }

    @Test func selectsTheFirstSupportedSubprotocol() throws {
        let request = upgradeRequest([("Sec-WebSocket-Protocol", "chat, swiftlet.v1")])
        let response = try WebSocketHandshake.response(to: request, subprotocols: ["swiftlet.v1", "chat"])
        #expect(response.headers["Sec-WebSocket-Protocol"] == "swiftlet.v1")
    }

    @Test func rejectsEachMissingOrWrongRequirement() {
        #expect(rejection(upgradeRequest(method: "POST")) == .methodNotGet)
        var old = upgradeRequest()
        old.version = .http1_0
        #expect(rejection(old) == .httpVersionTooOld)
        #expect(rejection(upgradeRequest(drop: "Upgrade")) == .missingUpgrade)
        #expect(rejection(upgradeRequest(drop: "Connection")) == .missingConnectionUpgrade)
        #expect(rejection(upgradeRequest(drop: "Sec-WebSocket-Version")) == .unsupportedVersion)
        #expect(rejection(upgradeRequest([("Sec-WebSocket-Version", "8")], drop: "Sec-WebSocket-Version")) == .unsupportedVersion)
        #expect(rejection(upgradeRequest(drop: "Sec-WebSocket-Key")) == .invalidKey)
    }

    @Test(arguments: [
        "dGhlIHNhbXBsZSBub25jZQ", "dGhlIHNhbXBsZQ==", "not base64!!!!!!!!!!!!==", "dGhlIHNhbXBsZSBub25jZSE=",
        "dGhlIHNhbXBsZSBub25jZR==",
    ])
    func keyMustBeBase64OfSixteenBytes(key: String) {
        let request = upgradeRequest([("Sec-WebSocket-Key", key)], drop: "Sec-WebSocket-Key")
        #expect(rejection(request) == .invalidKey)
    }

    @Test func rejectionsMapTo400Or426() {
        #expect(WebSocketHandshake.Rejection.invalidKey.status == 400)
        #expect(WebSocketHandshake.Rejection.methodNotGet.status == 400)
        let r = WebSocketHandshake.Rejection.unsupportedVersion.response
        #expect(r.status == 426)
        #expect(r.reason == "Upgrade Required")
        #expect(r.headers["Sec-WebSocket-Version"] == "13")
        #expect(WebSocketHandshake.Rejection.missingUpgrade.status == 426)
    }

    @Test func parsedRequestFromTheWireIsAccepted() throws {
        var parser = HTTPRequestParser()
        parser.feed(
            Array(
                ("GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://example.com\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n").utf8))
        let request = try #require(try parser.nextRequest())
        #expect(try WebSocketHandshake.response(to: request).headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}

@Suite struct Base64Tests {
    /// RFC 4648 section 10 test vectors.
    @Test func rfc4648Vectors() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8), .standard) == encoded)
            #expect(Base64.decode(encoded, .standard) == Array(plain.utf8))
            let url = String(encoded.filter { $0 != "=" })
            #expect(Base64.encode(Array(plain.utf8), .url) == url)
            #expect(Base64.decode(url, .url) == Array(plain.utf8))
        }
    }

    @Test func urlAlphabetUsesDashAndUnderscore() {
        #expect(Base64.encode([0xFB, 0xFF], .url) == "-_8")
        #expect(Base64.decode("-_8", .url) == [0xFB, 0xFF])
        #expect(Base64.decode("+/8", .url) == nil)
        #expect(Base64.decode("-_8=", .url) == nil)
    }

    @Test func nonCanonicalEncodingsAreRefused() {
        #expect(Base64.decode("Zh==", .standard) == nil)  // low bits set
        #expect(Base64.decode("Zm9=", .url) == nil)
        #expect(Base64.decode("Zm9vY", .url) == nil)  // one leftover char
        #expect(Base64.decode("Zg", .standard) == nil)  // padding missing
        #expect(Base64.decode("Z===", .standard) == nil)
        #expect(Base64.decode("Zg=a", .standard) == nil)
        #expect(Base64.decode("Zm 9v", .url) == nil)
    }
}
