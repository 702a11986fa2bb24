import Signaling

extension FuzzEntryPoints {
    /// The client side of a WebSocket (roombot): the bytes are a server's
    /// answer to our upgrade request, head then frames. The head is parsed
    /// whole and must give the same result from every prefix that holds
    /// it; a head that passes validation is then followed by server frames
    /// decoded by a client connection, whole and split in two, giving the
    /// same events; masked frames always close it.
    public static func websocketClient(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let handshake = WebSocketClientHandshake(host: "fuzz", path: "/rtc", nonce: Array("the sample nonce".utf8))
        let parsed = try? HTTPResponseHead.parse(bytes.span.bytes)
        if let parsed {
            precondition(parsed.length >= 4 && parsed.length <= bytes.count, "head length outside the input")
            precondition(parsed.head.status >= 100 && parsed.head.status <= 999)
            // The head decides alone: bytes after it change nothing.
            let again = try? HTTPResponseHead.parse(Array(bytes[0..<parsed.length]).span.bytes)
            precondition(again?.head == parsed.head && again?.length == parsed.length, "head depends on what follows")
        }
        let frames: [UInt8]
        do {
            guard let length = try handshake.receiveResponse(bytes.span.bytes) else { return }
            precondition(parsed?.head.status == 101)
            frames = Array(bytes[length...])
        } catch {
            // Not a valid 101: decode the bytes as frames anyway, so the
            // fuzzer reaches the server-frame decoder without a head.
            frames = bytes
        }
        let whole = clientEvents(frames, splits: [])
        if let first = frames.first, frames.count > 1 {
            precondition(clientEvents(frames, splits: [Int(first) % frames.count]) == whole, "split feeding differs")
        }
        if frames.count >= 2, frames[1] & 0x80 != 0 {
            precondition(whole.last.map { if case .closed = $0 { true } else { false } } ?? false, "masked server frame")
        }
    }

    private static func clientEvents(_ bytes: [UInt8], splits: [Int]) -> [WebSocketEvent] {
        var connection = WebSocketClientConnection(maxMessageBytes: 4096, maskingKey: { 0x0102_0304 })
        var events: [WebSocketEvent] = []
        var from = 0
        for end in splits + [bytes.count] where end >= from {
            events += connection.receive(Array(bytes[from..<end]))
            from = end
        }
        let closed = events.filter { if case .closed = $0 { true } else { false } }
        precondition(closed.count <= 1 && connection.isClosed == !closed.isEmpty)
        // Everything we send is masked: the second byte's high bit.
        let out = connection.takeOutput()
        if out.count >= 2 { precondition(out[1] & 0x80 != 0, "client frame not masked") }
        return events
    }
}
