import Signaling

extension FuzzEntryPoints {
    /// Feeds the bytes to the HTTP request parser whole, byte by byte (for
    /// short inputs) and split at two points taken from the input. Every
    /// split must give the same requests and the same error; no request
    /// carries more body than its Content-Length; the parser never consumes
    /// more than it was fed. Requests also go through the WebSocket
    /// handshake and, when they carry a bearer token, the token verifier.
    public static func http(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let whole = parseHTTP(bytes, splits: [])
        if bytes.count <= 2048 {
            precondition(parseHTTP(bytes, splits: Array(0..<bytes.count)) == whole, "byte-by-byte feeding differs")
        }
        if let first = bytes.first, bytes.count > 2 {
            let a = Int(first) % bytes.count
            let b = (a + bytes.count / 2) % bytes.count
            precondition(parseHTTP(bytes, splits: [min(a, b), max(a, b)]) == whole, "split feeding differs")
        }
        let verifier = AccessTokenVerifier(keys: ["APIfuzz": "fuzz-secret"], leewaySeconds: 5)
        for request in whole.requests {
            let lengths = request.headers.values("Content-Length")
            if lengths.isEmpty {
                precondition(request.body.isEmpty, "body without Content-Length")
            } else {
                let first = lengths[0].split(separator: ",").first.map { String($0).filter { $0 != " " && $0 != "\t" } }
                precondition(first.flatMap { Int($0) } == request.body.count, "body length differs from Content-Length")
            }
            precondition(request.body.count <= HTTPRequestParser.Limits().maxBodyBytes)
            if let response = try? WebSocketHandshake.response(to: request) {
                precondition(response.status == 101 && response.headers["Sec-WebSocket-Accept"]?.utf8.count == 28)
            }
            if let auth = request.headers["Authorization"], auth.hasPrefix("Bearer ") {
                if let claims = try? verifier.verify(String(auth.dropFirst(7)), room: nil, required: nil, nowSeconds: 0) {
                    precondition(claims.issuer == "APIfuzz" && claims.notBefore <= 5 && claims.expiresAt > -5)
                }
            }
        }
    }

    private struct HTTPOutcome: Equatable {
        var requests: [HTTPRequest] = []
        var error: HTTPParseError?
        var consumed = 0
    }

    private static func parseHTTP(_ bytes: [UInt8], splits: [Int]) -> HTTPOutcome {
        var parser = HTTPRequestParser()
        var outcome = HTTPOutcome()
        var from = 0
        for end in splits + [bytes.count] where end >= from {
            parser.feed(Array(bytes[from..<end]))
            from = end
            do {
                while let request = try parser.nextRequest() { outcome.requests.append(request) }
            } catch {
                outcome.error = error
                break
            }
        }
        outcome.consumed = parser.consumedByteCount
        precondition(outcome.consumed <= bytes.count, "consumed more than fed")
        return outcome
    }

    /// Feeds the bytes (client frames) to the WebSocket frame decoder whole,
    /// byte by byte (for short inputs) and in two parts; every way gives the
    /// same messages and error. Messages respect the size limit and control
    /// frames their 125 bytes. The same bytes then drive a connection.
    public static func websocket(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let limit = 4096
        let whole = decodeWebSocket(bytes, splits: [], limit: limit)
        if bytes.count <= 2048 {
            precondition(decodeWebSocket(bytes, splits: Array(0..<bytes.count), limit: limit) == whole)
        }
        if let first = bytes.first, bytes.count > 1 {
            precondition(decodeWebSocket(bytes, splits: [Int(first) % bytes.count], limit: limit) == whole)
        }
        for message in whole.messages {
            switch message {
            case .text(let text): precondition(text.utf8.count <= limit)
            case .binary(let payload): precondition(payload.count <= limit)
            case .ping(let payload), .pong(let payload): precondition(payload.count <= 125)
            case .close(let code, let reason):
                precondition(code.map(\.isValidOnTheWire) ?? reason.isEmpty)
                precondition(reason.utf8.count <= 123)
            }
        }
        var connection = WebSocketConnection(maxMessageBytes: limit)
        let events = connection.receive(bytes)
        let closedEvents = events.filter { if case .closed = $0 { return true } else { return false } }
        precondition(closedEvents.count <= 1 && connection.isClosed == !closedEvents.isEmpty)
        if whole.error != nil { precondition(connection.isClosed) }
        _ = connection.takeOutput()
    }

    private struct WebSocketOutcome: Equatable {
        var messages: [WebSocketMessage] = []
        var error: WebSocketProtocolError?
    }

    private static func decodeWebSocket(_ bytes: [UInt8], splits: [Int], limit: Int) -> WebSocketOutcome {
        var decoder = WebSocketFrameDecoder(maxMessageBytes: limit)
        var outcome = WebSocketOutcome()
        var from = 0
        for end in splits + [bytes.count] where end >= from {
            decoder.feed(Array(bytes[from..<end]))
            from = end
            do {
                while let message = try decoder.nextMessage() { outcome.messages.append(message) }
            } catch {
                outcome.error = error
                break
            }
        }
        precondition(decoder.consumedByteCount <= bytes.count)
        return outcome
    }
}
