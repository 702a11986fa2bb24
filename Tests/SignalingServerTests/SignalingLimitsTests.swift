import Foundation
import NetIO
import Rooms
import SFUTesting
import Signaling
import SignalingServer
import Synchronization
import Testing
import Wire

/// The limits of docs/SECURITY.md through the real protocol: HTTP and the
/// room WebSocket on a TCP port, clients on 127.0.0.1 and 127.0.0.2.
/// Media workers are a stand-in endpoint; the media commands that would
/// reach them are recorded, to show that a refusal sends none.
@Suite(.serialized) struct SignalingLimitsTests {
    private final class Commands: Sendable {
        let list = Mutex<[MediaCommand]>([])
        var count: Int { list.withLock { $0.count } }
    }

    private func startServer(
        limits: RoomLimits = RoomLimits(), connections: SignalingConnectionLimits = SignalingConnectionLimits(),
        timeouts: SignalingTimeouts = SignalingTimeouts(), commands: Commands = Commands()
    ) throws -> SignalingServer {
        let endpoint = MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[]])
        return try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: endpoint, limits: limits),
            media: { command in commands.list.withLock { $0.append(command) } }, timeouts: timeouts,
            connectionLimits: connections)
    }

    private func token(_ identity: String, room: String = "r") -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "k", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: room,
                grants: AccessTokenGrants(publish: true, subscribe: true)),
            secret: "s")
    }

    private static func fixture(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../SDPTests/Fixtures/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    private func whip(_ server: SignalingServer, room: String = "r", identity: String = "w", body: String) throws -> String {
        let text =
            "POST /whip/\(room) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/sdp\r\n"
            + "Authorization: Bearer \(token(identity, room: room))\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        return try rawTCPExchange(server, sending: text).response
    }

    private func join(_ server: SignalingServer, _ identity: String, room: String = "r") throws -> (BlockingWebSocket, String?) {
        let socket = try BlockingWebSocket(server)
        socket.send(#"{"type":"join","token":"\#(token(identity, room: room))"}"#)
        return (socket, socket.nextText())
    }

    private static func json(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }

    @Test func aWHIPOfferWithTooManySectionsIs400AndLeavesNothing() throws {
        let commands = Commands()
        let server = try startServer(commands: commands)
        defer { server.stop() }
        let offer = OfferBuilders.repeatingFirstSection(of: try Self.fixture("aiortc-offer.sdp"), count: 17)
        let response = try whip(server, body: offer)
        #expect(response.hasPrefix("HTTP/1.1 400 "), "\(response)")
        #expect(response.contains("more than 16 m-sections"))
        #expect(server.service.snapshot.rooms == 0 && server.service.snapshot.participants == 0)
        #expect(commands.count == 0)
    }

    @Test func anOversizeOfferIs413BeforeParsing() throws {
        var limits = RoomLimits()
        limits.sdpBytes = 4096
        let server = try startServer(limits: limits)
        defer { server.stop() }
        // Not SDP: a parse would answer 400 "malformed SDP".
        let response = try whip(server, body: String(repeating: "x", count: 4097))
        #expect(response.hasPrefix("HTTP/1.1 413 "), "\(response)")
        #expect(server.service.snapshot.participants == 0)
    }

    @Test func aRoomPublishWithTooManyTracksIsAnErrorWithATypedCode() throws {
        let commands = Commands()
        let server = try startServer(commands: commands)
        defer { server.stop() }
        let (alice, joined) = try join(server, "alice")
        #expect(joined?.contains(#""type":"joined""#) == true)
        let offer = OfferBuilders.repeatingFirstSection(of: try Self.fixture("aiortc-offer.sdp"), count: 9)
        alice.send(#"{"type":"publish","sdp":\#(Self.json(offer))}"#)
        let reply = alice.nextText() ?? ""
        #expect(reply.contains(#""code":"too_many_tracks""#), "\(reply)")
        #expect(commands.count == 0)
    }

    @Test func fullRoomsAndAFullServerRefuseOverBothProtocols() throws {
        var limits = RoomLimits()
        limits.participantsPerRoom = 1
        limits.rooms = 1
        let server = try startServer(limits: limits)
        defer { server.stop() }
        let (alice, first) = try join(server, "alice")
        #expect(first?.contains(#""type":"joined""#) == true)
        let (_, second) = try join(server, "bob")
        #expect(second?.contains(#""code":"room_full""#) == true, "\(second ?? "nil")")
        let offer = try Self.fixture("aiortc-offer.sdp")
        let full = try whip(server, body: offer)
        #expect(full.hasPrefix("HTTP/1.1 409 "), "\(full)")
        let elsewhere = try whip(server, room: "s", body: offer)
        #expect(elsewhere.hasPrefix("HTTP/1.1 503 ") && elsewhere.contains("Retry-After: 30"), "\(elsewhere)")
        let (_, third) = try join(server, "carol", room: "t")
        #expect(third?.contains(#""code":"server_full""#) == true, "\(third ?? "nil")")
        #expect(server.service.snapshot.participants == 1)
        withExtendedLifetime(alice) {}
    }

    @Test func aWebSocketThatNeverJoinsIsClosedAfterTheJoinTimeout() throws {
        var timeouts = SignalingTimeouts()
        timeouts.join = .milliseconds(300)
        let server = try startServer(timeouts: timeouts)
        defer { server.stop() }
        let (member, joined) = try join(server, "alice")
        #expect(joined?.contains(#""type":"joined""#) == true)
        let idle = try BlockingWebSocket(server)
        let start = Date()
        guard case .closed(let code, let reason)? = idle.next() else {
            Issue.record("not closed")
            return
        }
        #expect(code == .policyViolation)
        #expect(reason.contains("no join"))
        #expect(Date().timeIntervalSince(start) < 3)
        // The member that joined is still served.
        member.send(#"{"type":"ping"}"#)
        #expect(member.nextText()?.contains("pong") == true)
    }

    @Test func connectionsPerAddressAreCountedPerAddress() throws {
        var connections = SignalingConnectionLimits()
        connections.perAddress = 2
        let server = try startServer(connections: connections)
        defer { server.stop() }
        let a = try BlockingWebSocket(server, from: "127.0.0.1")
        let b = try BlockingWebSocket(server, from: "127.0.0.1")
        #expect(a.refusal == nil && b.refusal == nil)
        let third = try BlockingWebSocket(server, from: "127.0.0.1")
        #expect(third.refusal?.hasPrefix("HTTP/1.1 429 ") == true, "\(third.refusal ?? "accepted")")
        let other = try BlockingWebSocket(server, from: "127.0.0.2")
        #expect(other.refusal == nil, "\(other.refusal ?? "")")
        #expect(server.connectionStatistics.addressRefusals == 1)
        withExtendedLifetime((a, b)) {}
    }

    @Test func newConnectionsPerAddressAreRateLimited() throws {
        var connections = SignalingConnectionLimits()
        connections.ratePerSecond = 1
        connections.burst = 3
        let server = try startServer(connections: connections)
        defer { server.stop() }
        let get = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        for _ in 0..<3 { #expect(try rawTCPExchange(server, sending: get, from: "127.0.0.3").response.hasPrefix("HTTP/1.1 200")) }
        let limited = try rawTCPExchange(server, sending: get, from: "127.0.0.3").response
        #expect(limited.hasPrefix("HTTP/1.1 429 ") && limited.contains("Retry-After: 1"), "\(limited)")
        #expect(try rawTCPExchange(server, sending: get, from: "127.0.0.4").response.hasPrefix("HTTP/1.1 200"))
    }

    /// A connection buffers at most `sdpBytes` of body: a Content-Length
    /// over it is answered 413 at once, before any of the body is sent
    /// (the parser's generic limit was 1 MiB, buffered per connection).
    @Test func aBodyOverTheSDPLimitIsRefusedBeforeItArrives() throws {
        var limits = RoomLimits()
        limits.sdpBytes = 8 * 1024
        let server = try startServer(limits: limits)
        defer { server.stop() }
        let (response, seconds) = try rawTCPExchange(
            server,
            sending: "POST /whip/r HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\n"
                + "Content-Length: \(8 * 1024 + 1)\r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.1 413"), "\(response)")
        #expect(seconds < 4)
    }

    @Test func aClientThatNeverReadsIsCutOffAtTheBufferCap() throws {
        var connections = SignalingConnectionLimits()
        connections.bufferBytes = 256 << 10
        let server = try startServer(connections: connections)
        defer { server.stop() }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = server.localAddress.storage
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, server.localAddress.length) }
        }
        try #require(rc == 0)
        // Pipelined requests for the 20 KB client script; never a read.
        let request = Array("GET /swiftlet-client.js HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var peak = 0
        var cut = false
        for _ in 0..<2000 {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            peak = max(peak, server.connectionStatistics.unsentBytes)
            if n < 0, errno != EAGAIN {
                cut = true
                break
            }
            if server.connectionStatistics.unsentLimitCloses > 0 {
                cut = true
                break
            }
            usleep(200)
        }
        #expect(cut)
        #expect(server.connectionStatistics.unsentLimitCloses == 1)
        // One more response past the cap at most.
        #expect(peak <= (256 << 10) + (64 << 10), "\(peak)")
        // The cut connection's queue is released by the loop thread: soon,
        // not necessarily before the statistics above were read.
        let released = Date().addingTimeInterval(2)
        while server.connectionStatistics.unsentBytes != 0, Date() < released { usleep(10_000) }
        #expect(server.connectionStatistics.unsentBytes == 0)
    }
}

/// Partial requests and messages over all connections are bounded: the
/// connection whose bytes pass `serverInputBytes` is refused and its bytes
/// released, and the others carry on.
@Suite(.serialized) struct ServerInputBudgetTests {
    @Test func theConnectionThatPassesTheServersInputBudgetIsRefused() throws {
        var connections = SignalingConnectionLimits()
        connections.serverInputBytes = 48 << 10
        let endpoint = MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[]])
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: endpoint), connectionLimits: connections)
        defer { server.stop() }
        // A: 30 KB of a 40 KB WHIP body (under the per-connection cap).
        let a = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(a) }
        var address = server.localAddress.storage
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(a, $0, server.localAddress.length) }
        }
        try #require(rc == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let body = [UInt8](repeating: UInt8(ascii: "v"), count: 40_000)
        let head = Array(
            "POST /whip/r HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\nContent-Length: 40000\r\n\r\n".utf8)
        func sendAll(_ bytes: ArraySlice<UInt8>) {
            var offset = bytes.startIndex
            while offset < bytes.endIndex {
                let n = bytes[offset...].withUnsafeBytes { send(a, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return }
                offset += n
            }
        }
        sendAll(head[...] + body[0..<30_000])
        // B: a room WebSocket sending 30 KB of a 500 KB message (under the
        // 1 MiB message cap): together with A, past 48 KiB.
        let b = try BlockingWebSocket(server)
        try #require(b.refusal == nil)
        var frame: [UInt8] = [0x81, 0x80 | 127] + withUnsafeBytes(of: UInt64(500_000).bigEndian, Array.init) + [1, 2, 3, 4]
        frame += [UInt8](repeating: 0x20, count: 30_000)
        b.sendRaw(frame)
        var code: WebSocketCloseCode?
        while let event = b.next() {
            if case .closed(let c, _) = event {
                code = c
                break
            }
        }
        #expect(code == .tryAgainLater)
        // A's bytes were never at fault: its request completes (a 401, it
        // has no token), not a 503.
        sendAll(body[30_000...])
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: response, as: UTF8.self).contains("\r\n\r\n") {
            let n = recv(a, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        let status = String(decoding: response.prefix(12), as: UTF8.self)
        #expect(status.hasPrefix("HTTP/1.1 4"), "\(status)")
        // B's bytes were released: 30 KB of another 40 KB message fits (it
        // would not beside B's 30 KB), and the message completes.
        let c = try BlockingWebSocket(server)
        var message: [UInt8] = [0x81, 0x80 | 127] + withUnsafeBytes(of: UInt64(40_000).bigEndian, Array.init) + [0, 0, 0, 0]
        message += [UInt8](repeating: 0x20, count: 40_000)
        c.sendRaw(Array(message[0..<30_014]))
        usleep(100_000)
        c.sendRaw(Array(message[30_014...]))
        // Spaces are not a room message: an error answer, not a close.
        let answer = c.nextText()
        #expect(answer?.contains("error") == true, "\(answer ?? "closed")")
    }
}

/// Behind a reverse proxy every client arrives from the proxy's address:
/// with the proxy trusted, the per-address limits count the clients it
/// names in X-Forwarded-For, and a refusal costs the request, not the
/// proxy's connection.
@Suite(.serialized) struct TrustedProxyLimitsTests {
    private func startServer(_ connections: SignalingConnectionLimits) throws -> SignalingServer {
        let endpoint = MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[]])
        return try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: endpoint), connectionLimits: connections)
    }

    @Test func aTrustedProxysWebSocketsAreCountedPerForwardedClient() throws {
        var connections = SignalingConnectionLimits()
        connections.perAddress = 2
        connections.trustedProxies = [AddressPrefix("127.0.0.5")!]
        let server = try startServer(connections)
        defer { server.stop() }
        func socket(for client: String, from proxy: String = "127.0.0.5") throws -> BlockingWebSocket {
            try BlockingWebSocket(server, from: proxy, headers: [("X-Forwarded-For", "\(client), 127.0.0.5")])
        }
        let a1 = try socket(for: "203.0.113.7")
        let a2 = try socket(for: "203.0.113.7")
        #expect(a1.refusal == nil && a2.refusal == nil)
        let a3 = try socket(for: "203.0.113.7")
        #expect(a3.refusal?.hasPrefix("HTTP/1.1 429 ") == true, "\(a3.refusal ?? "accepted")")
        // Four connections from the proxy's address, past its limit of 2:
        // other clients behind it still get in.
        let b = try socket(for: "198.51.100.1")
        #expect(b.refusal == nil, "\(b.refusal ?? "")")
        // A closed WebSocket gives its client's slot back.
        withExtendedLifetime(a2) {}
        _ = consume a1
        var a4: BlockingWebSocket?
        let deadline = Date().addingTimeInterval(5)
        repeat {
            usleep(20_000)
            a4 = try socket(for: "203.0.113.7")
        } while a4?.refusal != nil && Date() < deadline
        #expect(a4?.refusal == nil, "\(a4?.refusal ?? "")")
        // An untrusted address is limited by its own address, whatever it writes.
        let u1 = try socket(for: "192.0.2.1", from: "127.0.0.6")
        let u2 = try socket(for: "192.0.2.2", from: "127.0.0.6")
        let u3 = try socket(for: "192.0.2.3", from: "127.0.0.6")
        #expect(u1.refusal == nil && u2.refusal == nil)
        #expect(u3.refusal?.hasPrefix("HTTP/1.1 429 ") == true, "\(u3.refusal ?? "accepted")")
        withExtendedLifetime((a2, a3, b, a4, u1, u2)) {}
    }

    @Test func aRateLimitedForwardedClientCostsItsRequestNotTheProxysConnection() throws {
        var connections = SignalingConnectionLimits()
        connections.ratePerSecond = 1
        connections.burst = 2
        connections.trustedProxies = [AddressPrefix("127.0.0.0/24")!]
        let server = try startServer(connections)
        defer { server.stop() }
        // One keep-alive connection (as nginx's upstream keepalive) carries
        // three requests of one client and one of another.
        func get(_ client: String, close: Bool = false) -> String {
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \(client)\r\n\(close ? "Connection: close\r\n" : "")\r\n"
        }
        let text = get("203.0.113.9") + get("203.0.113.9") + get("203.0.113.9") + get("198.51.100.2", close: true)
        let response = try rawTCPExchange(server, sending: text, from: "127.0.0.7").response
        let statuses = response.components(separatedBy: "\n").filter { $0.hasPrefix("HTTP/1.1 ") }
        #expect(
            statuses.map { String($0.prefix(12)) } == ["HTTP/1.1 200", "HTTP/1.1 200", "HTTP/1.1 429", "HTTP/1.1 200"],
            "\(response)")
    }
}
