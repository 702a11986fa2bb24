import NetIO
import Signaling
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 request and its response on a connection of its own
/// (`Connection: close`), plain or over TLS (`https://`): WHIP and WHEP POSTs and DELETEs. Driven by the
/// bot loop's epoll like `SignalingClient`; `handleReady` returns the
/// outcome once the whole response (head and Content-Length body) is in.
package final class HTTPExchange {
    package enum Outcome: Equatable {
        case response(HTTPResponseHead, body: [UInt8])
        case failed(String)
    }

    package let stream: ClientStream
    private var inbound: [UInt8] = []
    package private(set) var outcome: Outcome?
    package static let maxBody = 256 * 1024

    package init(
        to endpoint: ServerEndpoint, method: String, path: String, headers: [(String, String)], body: [UInt8]
    )
        throws(SocketError)
    {
        stream = try ClientStream(to: endpoint)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        // Waits in the stream until TCP (and TLS) are up.
        stream.write(Array(head.utf8) + body)
    }

    package var descriptor: Int32 { stream.descriptor }
    package var wantsWritable: Bool { outcome == nil && (!stream.connected || stream.hasUnsent) }

    package func handleReady(readable: Bool, writable: Bool, hangup: Bool) -> Outcome? {
        guard outcome == nil else { return nil }
        if !stream.connected, writable || hangup {
            switch stream.finishConnect() {
            case .inProgress: return nil
            case .connected: break
            case .failed(let e): return finish(.failed("connect \(stream.socket.remote): \(String(cString: strerror(e)))"))
            }
        }
        stream.flush()
        if readable || hangup { return read() }
        return nil
    }

    private func read() -> Outcome? {
        let result = stream.read()
        guard inbound.count + result.plaintext.count <= Self.maxBody + 64 * 1024 else {
            return finish(.failed("response too long"))
        }
        inbound += result.plaintext
        if let done = complete(atEnd: false) { return finish(done) }
        guard let ended = result.ended else { return nil }
        guard ended == ClientStream.peerClosed else { return finish(.failed(ended)) }
        return finish(complete(atEnd: true) ?? .failed("response cut short"))
    }

    /// The response once its body is complete: Content-Length bytes, or
    /// everything up to the end of the stream without one.
    private func complete(atEnd: Bool) -> Outcome? {
        let data = inbound
        let parsed: (head: HTTPResponseHead, length: Int)?
        do {
            parsed = try HTTPResponseHead.parse(data.span.bytes)
        } catch {
            return .failed("bad response: \(error)")
        }
        guard let parsed else { return atEnd ? .failed("response cut short") : nil }
        let body = data[parsed.length...]
        if let text = parsed.head.headers["Content-Length"] {
            guard let length = Int(text), length >= 0, length <= Self.maxBody else { return .failed("bad Content-Length") }
            guard body.count >= length else { return atEnd ? .failed("body cut short") : nil }
            return .response(parsed.head, body: Array(body.prefix(length)))
        }
        guard body.count <= Self.maxBody else { return .failed("body too long") }
        return atEnd ? .response(parsed.head, body: Array(body)) : nil
    }

    private func finish(_ o: Outcome) -> Outcome {
        outcome = o
        return o
    }
}
