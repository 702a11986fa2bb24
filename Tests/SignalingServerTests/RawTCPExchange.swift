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

/// A response as `rawHTTPRequest` read it: field names lower-cased.
struct RawHTTPResponse {
    var status: Int
    var headers: [String: String]
    var body: String
    /// Every `Link` header, in order (the dictionary keeps one).
    var links: [String] = []

    /// The first response in `raw`; what follows its head is the body.
    init(parsing raw: String) {
        let parts = raw.components(separatedBy: "\r\n\r\n")
        let head = parts[0].components(separatedBy: "\r\n")
        status = Int(head[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        headers = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[line[..<colon].lowercased()] = value
            if line[..<colon].lowercased() == "link" { links.append(value) }
        }
        body = parts.dropFirst().joined(separator: "\r\n\r\n")
    }
}

/// The text of one request with a Content-Length when it has a body (or
/// is a POST or PATCH).
func rawHTTPRequestText(
    _ method: String, _ path: String, headers: [(String, String)] = [], body: String = "", keepAlive: Bool = false
) -> String {
    var text = "\(method) \(path) HTTP/1.1\r\nHost: x\r\n" + (keepAlive ? "" : "Connection: close\r\n")
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    if !body.isEmpty || method == "POST" || method == "PATCH" { text += "Content-Length: \(body.utf8.count)\r\n" }
    return text + "\r\n" + body
}

/// One request on a fresh connection (`Connection: close`) to `target`.
func rawHTTPRequest(
    _ target: SocketAddress, _ method: String, _ path: String, headers: [(String, String)] = [], body: String = ""
) throws -> RawHTTPResponse {
    let text = rawHTTPRequestText(method, path, headers: headers, body: body)
    return RawHTTPResponse(parsing: try rawTCPExchange(target, sending: text).response)
}
