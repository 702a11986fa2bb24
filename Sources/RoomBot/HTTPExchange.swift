import NetIO
import Signaling
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 request and its response on a connection of its own
/// (`Connection: close`): WHIP and WHEP POSTs and DELETEs. Driven by the
/// bot loop's epoll like `SignalingClient`; `handleReady` returns the
/// outcome once the whole response (head and Content-Length body) is in.
final class HTTPExchange {
    enum Outcome: Equatable {
        case response(HTTPResponseHead, body: [UInt8])
        case failed(String)
    }

    let socket: TCPClientSocket
    private var connected = false
    private var outbound: [UInt8]
    private var inbound: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    private(set) var outcome: Outcome?
    static let maxBody = 256 * 1024

    init(to address: SocketAddress, method: String, path: String, headers: [(String, String)], body: [UInt8]) throws(SocketError)
    {
        socket = try TCPClientSocket(connectingTo: address)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        outbound = Array(head.utf8) + body
        if socket.initialProgress == .connected { connected = true }
    }

    var descriptor: Int32 { socket.descriptor }
    var wantsWritable: Bool { outcome == nil && (!connected || !outbound.isEmpty) }

    func handleReady(readable: Bool, writable: Bool, hangup: Bool) -> Outcome? {
        guard outcome == nil else { return nil }
        if !connected, writable || hangup {
            switch socket.finishConnect() {
            case .inProgress: return nil
            case .connected: connected = true
            case .failed(let e): return finish(.failed("connect \(socket.remote): \(String(cString: strerror(e)))"))
            }
        }
        if connected { flush() }
        if readable || hangup { return read() }
        return nil
    }

    private func flush() {
        while !outbound.isEmpty {
            switch outbound.withUnsafeBytes({ socket.stream.send($0) }) {
            case .bytes(let n): outbound.removeFirst(n)
            case .wouldBlock, .endOfStream: return
            case .failed: outbound = []; return
            }
        }
    }

    private func read() -> Outcome? {
        while true {
            switch buffer.withUnsafeMutableBytes({ socket.stream.receive(into: $0) }) {
            case .bytes(let n):
                inbound += buffer[0..<n]
                if let done = complete(atEnd: false) { return finish(done) }
            case .wouldBlock: return nil
            case .endOfStream: return finish(complete(atEnd: true) ?? .failed("response cut short"))
            case .failed(let e): return finish(.failed("read: errno \(e)"))
            }
        }
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
