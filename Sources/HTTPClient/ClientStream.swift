import NetIO
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// Where the bots connect: the resolved address, the Host header, and for
/// `wss://`/`https://` the TLS client context and the name its
/// certificate must carry.
package struct ServerEndpoint {
    package let address: SocketAddress
    /// `host[:port]` as the URL gave it (RFC 9110 section 7.2).
    package let hostHeader: String
    /// The URL's host, for SNI and certificate verification.
    package let serverName: String
    package let tls: TLSContext?

    package init(address: SocketAddress, hostHeader: String, serverName: String, tls: TLSContext?) {
        self.address = address
        self.hostHeader = hostHeader
        self.serverName = serverName
        self.tls = tls
    }

    /// The first of `addresses` that accepts a TCP connection (within
    /// `timeoutMilliseconds` each), tried in order; nil if none does.
    /// `localhost` may resolve to ::1 first while a server listens on
    /// 127.0.0.1 only: every bot then uses the address that works. Blocks:
    /// call before the loop starts.
    package static func firstReachable(_ addresses: [SocketAddress], timeoutMilliseconds: Int32 = 3000) -> SocketAddress? {
        for address in addresses {
            guard let socket = try? TCPClientSocket(connectingTo: address) else { continue }
            var progress = socket.initialProgress
            var entry = pollfd(fd: socket.descriptor, events: Int16(POLLOUT), revents: 0)
            if progress == .inProgress, poll(&entry, 1, timeoutMilliseconds) > 0 { progress = socket.finishConnect() }
            if progress == .connected { return address }
        }
        return nil
    }
}

/// One bot's TCP connection, plain or TLS: a non-blocking connect, the
/// bytes the kernel has not taken yet, and (for TLS) the stream engine
/// between them and the caller, who reads and writes plaintext only. The
/// TLS handshake starts once TCP connects; what the caller writes before
/// it ends waits inside the TLS stream.
package final class ClientStream {
    /// What one `read()` found: the plaintext, and whether the stream
    /// ended (with the reason).
    package struct ReadOutcome {
        package var plaintext: [UInt8] = []
        package var ended: String?
    }

    /// `ReadOutcome.ended` for an orderly end (FIN or close_notify).
    package static let peerClosed = "server closed the connection"

    package let socket: TCPClientSocket
    package private(set) var connected: Bool
    private let tls: TLSBox?
    private var outbound: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    package init(to endpoint: ServerEndpoint) throws(SocketError) {
        socket = try TCPClientSocket(connectingTo: endpoint.address)
        connected = socket.initialProgress == .connected
        if let context = endpoint.tls {
            do {
                let box = TLSBox(stream: try TLSStream(client: context, serverName: endpoint.serverName))
                tls = box
                outbound = box.stream.takeOutput()  // the ClientHello
            } catch {
                throw SocketError(operation: "TLS setup: \(error)", errno: 0)
            }
        } else {
            tls = nil
        }
        if connected { flush() }
    }

    package var descriptor: Int32 { socket.descriptor }
    package var hasUnsent: Bool { !outbound.isEmpty }

    /// After epoll reported the connecting socket writable.
    package func finishConnect() -> TCPConnectProgress {
        let progress = socket.finishConnect()
        if progress == .connected {
            connected = true
            flush()
        }
        return progress
    }

    package func write(_ plaintext: [UInt8]) {
        if let tls {
            do { try tls.stream.send(plaintext) } catch { return }
            outbound += tls.stream.takeOutput()
        } else {
            outbound += plaintext
        }
        flush()
    }

    /// Everything readable now, decrypted.
    package func read() -> ReadOutcome {
        var outcome = ReadOutcome()
        while outcome.ended == nil {
            let result = buffer.withUnsafeMutableBytes { socket.stream.receive(into: $0) }
            switch result {
            case .bytes(let n):
                guard let tls else {
                    outcome.plaintext += buffer[0..<n]
                    continue
                }
                do {
                    outcome.plaintext += try buffer.withUnsafeBytes { bytes throws(TLSError) in
                        try tls.stream.receive(UnsafeRawBufferPointer(rebasing: bytes[0..<n]))
                    }
                } catch {
                    // "connect:" so that a bad certificate counts as a failed connect.
                    outcome.ended = "connect: \(error)"
                }
                outbound += tls.stream.takeOutput()
                if tls.stream.receivedCloseNotify { outcome.ended = outcome.ended ?? Self.peerClosed }
            case .wouldBlock: break
            case .endOfStream: outcome.ended = Self.peerClosed
            case .failed(let e): outcome.ended = "read: errno \(e)"
            }
            if case .wouldBlock = result { break }
        }
        flush()
        return outcome
    }

    package func flush() {
        guard connected else { return }
        while !outbound.isEmpty {
            let r = outbound.withUnsafeBytes { socket.stream.send($0) }
            switch r {
            case .bytes(let n): outbound.removeFirst(n)
            case .wouldBlock, .endOfStream: return
            case .failed:
                outbound = []
                return
            }
        }
    }

    /// close_notify before the caller closes (RFC 8446 section 6.1).
    package func shutdown() {
        guard let tls else { return }
        tls.stream.shutdown()
        outbound += tls.stream.takeOutput()
        flush()
    }
}

/// Holds the non-copyable TLS stream inside the class.
private final class TLSBox {
    var stream: TLSStream
    init(stream: consuming TLSStream) { self.stream = stream }
}
