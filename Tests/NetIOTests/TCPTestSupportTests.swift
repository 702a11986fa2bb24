import Synchronization
import Testing
import Wire

@testable import NetIO

#if canImport(Glibc)
    import Glibc
#endif

// Helpers for the TCP tests: a blocking client on a plain socket, a
// scripted handler, and a recorder the handlers report to.

struct ClientError: Error, Equatable { let errno: Int32 }

/// A blocking TCP client; every receive gives up after 5 s so a broken
/// server fails the test instead of hanging it.
final class BlockingClient {
    let descriptor: Int32

    /// `source`: an address to bind first (every 127/8 address works on
    /// lo, so one test can be several clients).
    init(connectingTo address: SocketAddress, receiveBufferSize: Int32? = nil, from source: String? = nil) throws(ClientError) {
        let fd = socket(address.family == .v4 ? AF_INET : AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError(errno: errno) }
        if let source, let local = SocketAddress(ip: source, port: 0) {
            var storage = local.storage
            let rc = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, local.length) }
            }
            guard rc == 0 else {
                let e = errno
                close(fd)
                throw ClientError(errno: e)
            }
        }
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var storage = address.storage
        let rc = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, address.length) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw ClientError(errno: e)
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Sends everything; false if the connection failed.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// One recv: bytes, or [] at EOF; nil on error or timeout (errno kept).
    func receiveOnce(max: Int = 65536) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            return Array(buffer[0..<n])
        }
    }

    /// Reads until `count` bytes, EOF, error or timeout.
    func receive(count: Int) -> [UInt8] {
        var out: [UInt8] = []
        while out.count < count {
            guard let chunk = receiveOnce(max: min(count - out.count, 65536)), !chunk.isEmpty else { break }
            out += chunk
        }
        return out
    }

    func receiveString(count: Int) -> String { String(decoding: receive(count: count), as: UTF8.self) }

    /// True when the next recv sees EOF or a reset (the server closed).
    func seesClose() -> Bool {
        guard let chunk = receiveOnce() else { return errno == ECONNRESET }
        return chunk.isEmpty
    }

    func shutdownWrite() { _ = shutdown(descriptor, Int32(SHUT_WR)) }
}

/// What the handlers of one test saw, shared with the test thread.
final class Recorder: Sendable {
    struct State {
        var created: [TCPConnectionID] = []
        var peers: [SocketAddress?] = []
        var closed: [TCPConnectionID: TCPCloseReason] = [:]
    }
    let state = Mutex(State())

    var created: [TCPConnectionID] { state.withLock { $0.created } }
    func closedReason(_ id: TCPConnectionID) -> TCPCloseReason? { state.withLock { $0.closed[id] } }
    var closedCount: Int { state.withLock { $0.closed.count } }
}

/// Polls `condition` every millisecond until it holds or `timeout` passes.
func eventually(within timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let end = MonotonicClock.now() + timeout
    while MonotonicClock.now() < end {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// Echoes input, with a few commands for the tests (each must arrive in
/// one read; the tests send them alone and wait for their effect):
/// "close" answers "bye" then closes after send; "abort" closes at once
/// (its "lost" answer discarded); "big" answers
/// `bigResponseSize` pattern bytes then closes; "flood" answers 1 MiB.
/// With `idleTimeout`, "idle" is sent and the connection closed once no
/// input came for that long.
final class ScriptedHandler: TCPConnectionHandler {
    struct Options: Sendable {
        var idleTimeout: Duration?
        var bigResponseSize = 8 << 20
    }

    let id: TCPConnectionID
    let options: Options
    let recorder: Recorder
    var receivedBytes = 0
    var idleDeadline: Instant?

    init(id: TCPConnectionID, peer: SocketAddress?, now: Instant, options: Options, recorder: Recorder) {
        self.id = id
        self.options = options
        self.recorder = recorder
        if let idle = options.idleTimeout { idleDeadline = now + idle }
        recorder.state.withLock {
            $0.created.append(id)
            $0.peers.append(peer)
        }
    }

    /// `count` bytes repeating a 251-byte cycle: a prime length, so no
    /// read or write boundary lines up with it and a lost or repeated chunk
    /// shows. Built by whole-cycle appends: per-byte closures take seconds
    /// for 8 MiB in a debug build.
    static func pattern(_ count: Int) -> [UInt8] {
        let cycle = (0..<251).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count { out.append(contentsOf: cycle.prefix(count - out.count)) }
        return out
    }

    func received(_ bytes: UnsafeRawBufferPointer, now: Instant) -> TCPConnectionAction {
        receivedBytes += bytes.count
        if let idle = options.idleTimeout { idleDeadline = now + idle }
        switch String(decoding: bytes, as: UTF8.self) {
        case "close": return .sendThenClose(Array("bye".utf8))
        case "abort": return TCPConnectionAction(send: Array("lost".utf8), close: .now)
        case "big": return .sendThenClose(Self.pattern(options.bigResponseSize))
        case "flood": return .send([UInt8](repeating: 0x46, count: 1 << 20))
        default: return .send(Array(bytes))
        }
    }

    func timeout(now: Instant) -> TCPConnectionAction {
        idleDeadline = nil
        return .sendThenClose(Array("idle".utf8))
    }

    func nextDeadline() -> Instant? { idleDeadline }

    func closed(_ reason: TCPCloseReason) {
        recorder.state.withLock { $0.closed[id] = reason }
    }
}

func startServer(
    on ip: String = "127.0.0.1", configuration: TCPServerConfiguration = TCPServerConfiguration(),
    options: ScriptedHandler.Options = ScriptedHandler.Options(), recorder: Recorder
) throws -> TCPServer<ScriptedHandler> {
    try TCPServer(bindingTo: SocketAddress(ip: ip, port: 0)!, configuration: configuration) { id, peer, now in
        ScriptedHandler(id: id, peer: peer, now: now, options: options, recorder: recorder)
    }
}

@Suite struct TCPTestSupportTests {
    @Test func patternIsNotConstant() {
        let p = ScriptedHandler.pattern(5000)
        #expect(p.count == 5000)
        #expect(p[0] == 3 && p[1] == 10 && p[250] == 0xD9 && p[251] == 3)
    }
}
