import Foundation
import NetIO
import Signaling
import SignalingServer
import Testing

/// A room WebSocket client on a plain blocking socket (reads time out
/// after 5 s), for tests that must see exactly the frames a client gets.
final class BlockingWebSocket {
    private let fd: Int32
    private var connection = WebSocketClientConnection(maskingKey: { UInt32.random(in: 0...UInt32.max) })
    private var pending: [UInt8] = []
    private var events: [WebSocketEvent] = []
    /// The status line and headers when the upgrade was refused.
    private(set) var refusal: String?

    /// Connects and sends the opening handshake (with `headers` added);
    /// `refusal` holds the response when it is not 101.
    init(_ server: SignalingServer, from source: String? = nil, headers: [(String, String)] = []) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try bindClientSocket(fd, to: source)
        var address = server.localAddress.storage
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, server.localAddress.length) }
        }
        try #require(rc == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let handshake = WebSocketClientHandshake(
            host: "127.0.0.1", path: "/rtc", nonce: (0..<16).map { _ in UInt8.random(in: 0...255) })
        var request = handshake.requestBytes
        if !headers.isEmpty {
            request.removeLast(2)  // the blank line
            request += Array(headers.map { "\($0.0): \($0.1)\r\n" }.joined().utf8) + Array("\r\n".utf8)
        }
        write(request)
        var response: [UInt8] = []
        while true {
            let chunk = read()
            if chunk.isEmpty { break }
            response += chunk
            let length: Int?
            do { length = try handshake.receiveResponse(response.span.bytes) } catch {
                refusal = String(decoding: response, as: UTF8.self)
                return
            }
            if let length {
                pending = Array(response[length...])
                return
            }
        }
        refusal = String(decoding: response, as: UTF8.self)
    }

    deinit { close(fd) }

    func send(_ text: String) {
        connection.send(text: text)
        write(connection.takeOutput())
    }

    /// Bytes as they are, framing included (partial frames, for limits).
    func sendRaw(_ bytes: [UInt8]) { write(bytes) }

    /// The next event (text or close), or nil when the socket closed or
    /// 5 s passed without one.
    func next() -> WebSocketEvent? {
        while events.isEmpty {
            let bytes = pending.isEmpty ? read() : pending
            pending = []
            if bytes.isEmpty { return nil }
            events += connection.receive(bytes).filter { if case .pong = $0 { false } else { true } }
            write(connection.takeOutput())
        }
        return events.removeFirst()
    }

    /// The next text message, skipping others; nil on close or timeout.
    func nextText() -> String? {
        while let e = next() {
            if case .text(let t) = e { return t }
            if case .closed = e { return nil }
        }
        return nil
    }

    private func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, 0) }
    }

    private func read() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n > 0 ? Array(buffer[0..<n]) : []
    }
}
