import Foundation
import NetIO
import SignalingServer
import Testing

/// Connects to `server` with a plain blocking socket, sends `text` (nothing
/// if empty), and reads until the server closes or 5 s pass. Returns what
/// came back and how long that took: the tests see exactly the bytes a
/// client would, with no HTTP library in between.
func rawTCPExchange(
    _ server: SignalingServer, sending text: String, from source: String? = nil
) throws -> (response: String, seconds: Double) {
    try rawTCPExchange(server.localAddress, sending: text, from: source)
}

/// Binds `fd` to `ip` (port 0) before it connects: every 127/8 address
/// works on lo, so tests act as different clients.
func bindClientSocket(_ fd: Int32, to ip: String?) throws {
    guard let ip else { return }
    let local = try #require(SocketAddress(ip: ip, port: 0))
    var storage = local.storage
    let rc = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, local.length) }
    }
    try #require(rc == 0)
}

/// The same against any IPv4 address (the TLS listener, for one).
func rawTCPExchange(
    _ target: SocketAddress, sending text: String, from source: String? = nil
) throws -> (response: String, seconds: Double) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    try bindClientSocket(fd, to: source)
    var address = target.storage
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, target.length) }
    }
    try #require(rc == 0)
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let start = Date()
    let bytes = Array(text.utf8)
    if !bytes.isEmpty { _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } }
    var out = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 8192)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 { break }
        out += buffer[0..<n]
    }
    return (String(decoding: out, as: UTF8.self), Date().timeIntervalSince(start))
}
