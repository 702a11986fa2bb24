/// The client side of the WebSocket opening handshake (RFC 6455 section
/// 4.1): the upgrade request, and the checks on the server's answer.
///
/// The 16-byte nonce comes from the caller (this target reads no random
/// source); section 4.1 asks for a fresh random one per connection.
package struct WebSocketClientHandshake: Equatable, Sendable {
    package enum Failure: Error, Equatable, Sendable {
        /// The server answered with another status than 101; a server that
        /// refuses the upgrade says why in the body, which we do not read.
        case notSwitchingProtocols(status: Int)
        /// `Upgrade` lacks `websocket` (section 4.1, client step 2).
        case missingUpgrade
        /// `Connection` lacks the `upgrade` token (step 3).
        case missingConnectionUpgrade
        /// `Sec-WebSocket-Accept` absent, repeated, or not the value for
        /// our key (step 4).
        case acceptMismatch
        /// A subprotocol we did not offer (step 6).
        case unexpectedSubprotocol(String)
        /// An extension we did not offer: we offer none (step 5).
        case unexpectedExtension(String)
        case malformedResponse(HTTPResponseParseError)
    }

    /// `Host` header value: `host` or `host:port`.
    package let host: String
    /// The request target, `/rtc` say, with any query.
    package let path: String
    /// `Sec-WebSocket-Key`: base64 of the caller's 16-byte nonce.
    package let key: String
    package let subprotocols: [String]
    /// More request headers, sent after the handshake's own (a node that
    /// proxies a client names itself in one: docs/CLUSTER.md).
    package let headers: HTTPHeaders

    /// `nonce` should be 16 random bytes (section 4.1 step 7); other
    /// lengths are encoded as given and a strict server refuses them.
    package init(
        host: String, path: String, nonce: [UInt8], subprotocols: [String] = [], headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.host = host
        self.path = path.isEmpty ? "/" : path
        self.key = Base64.encode(nonce, .standard)
        self.subprotocols = subprotocols
        self.headers = headers
    }

    /// The value the server must send in `Sec-WebSocket-Accept` (section
    /// 4.2.2 step 5.4).
    package var expectedAccept: String { WebSocketHandshake.acceptValue(forKey: key) }

    /// The GET upgrade request (section 4.1 steps 1 to 10), CR and LF
    /// removed from the caller's strings so none can inject a header.
    package var requestBytes: [UInt8] {
        func clean(_ s: String) -> String {
            String(String.UnicodeScalarView(s.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }))
        }
        var lines = [
            "GET \(clean(path)) HTTP/1.1", "Host: \(clean(host))", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)", "Sec-WebSocket-Version: \(WebSocketHandshake.version)",
        ]
        if !subprotocols.isEmpty { lines.append("Sec-WebSocket-Protocol: \(clean(subprotocols.joined(separator: ", ")))") }
        for field in headers.fields { lines.append("\(clean(field.name)): \(clean(field.value))") }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Checks the server's response head (section 4.1, the client's
    /// steps 1 to 6 on receiving it).
    package func validate(_ response: HTTPResponseHead) throws(Failure) {
        guard response.status == 101 else { throw .notSwitchingProtocols(status: response.status) }
        guard response.headers.tokens("Upgrade").contains("websocket") else { throw .missingUpgrade }
        guard response.headers.tokens("Connection").contains("upgrade") else { throw .missingConnectionUpgrade }
        let accepts = response.headers.values("Sec-WebSocket-Accept")
        guard accepts.count == 1, accepts[0] == expectedAccept else { throw .acceptMismatch }
        if let chosen = response.headers["Sec-WebSocket-Protocol"], !subprotocols.contains(chosen) {
            throw .unexpectedSubprotocol(chosen)
        }
        if let ext = response.headers["Sec-WebSocket-Extensions"], !ext.isEmpty { throw .unexpectedExtension(ext) }
    }

    /// Parses and validates the response at the start of `bytes`: nil while
    /// it is incomplete, else the number of bytes the head took (what
    /// follows already belongs to the WebSocket).
    package func receiveResponse(_ bytes: RawSpan) throws(Failure) -> Int? {
        let parsed: (head: HTTPResponseHead, length: Int)?
        do {
            parsed = try HTTPResponseHead.parse(bytes)
        } catch {
            throw .malformedResponse(error)
        }
        guard let parsed else { return nil }
        try validate(parsed.head)
        return parsed.length
    }
}
