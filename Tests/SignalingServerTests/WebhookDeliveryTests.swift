import Foundation
import NetIO
import Rooms
import Signaling
import SignalingServer
import Synchronization
import Testing
import Webhooks
import Wire

/// A webhook receiver on loopback: accepts connections on a thread,
/// reads each request (head and Content-Length body) and answers with
/// the status `respond` gives, or never answers when it gives nil.
final class WebhookReceiver: Sendable {
    struct Request: Sendable {
        var authorization: String
        var body: [UInt8]
    }

    private final class Shared: Sendable {
        let received = Mutex<[Request]>([])
        let running = Atomic<Bool>(true)
    }

    let port: UInt16
    private let shared = Shared()
    private let listener: Int32
    private let thread: WorkerThread

    init(respond: @escaping @Sendable (Int) -> Int?) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, 16) } }
        listen(fd, 16)
        var length = socklen_t(16)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        let shared = self.shared
        thread = WorkerThread(name: "receiver") {
            var held: [Int32] = []
            while shared.running.load(ordering: .acquiring) {
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 50) > 0 else { continue }
                let client = accept(fd, nil, nil)
                guard client >= 0 else { continue }
                var timeout = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                guard let request = Self.read(client) else {
                    close(client)
                    continue
                }
                let index = shared.received.withLock { r in
                    r.append(request)
                    return r.count - 1
                }
                guard let status = respond(index) else {
                    held.append(client)
                    continue
                }
                let reply = "HTTP/1.1 \(status) X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                _ = reply.withCString { send(client, $0, strlen($0), 0) }
                close(client)
            }
            for c in held { close(c) }
        }
    }

    private static func read(_ fd: Int32) -> Request? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.count < 1 << 20 {
            let text = String(decoding: data, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound]
                var length = 0
                var authorization = ""
                for line in head.split(separator: "\r\n") {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    let value = parts[1].trimmingCharacters(in: .whitespaces)
                    if parts[0].lowercased() == "content-length" { length = Int(value) ?? 0 }
                    if parts[0].lowercased() == "authorization" { authorization = value }
                }
                let headBytes = text[..<end.upperBound].utf8.count
                if data.count >= headBytes + length {
                    return Request(authorization: authorization, body: Array(data[headBytes..<headBytes + length]))
                }
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return nil }
            data += buffer[0..<n]
        }
        return nil
    }

    func stop() {
        shared.running.store(false, ordering: .releasing)
        thread.join()
        close(listener)
    }

    /// Waits up to `seconds` for `count` requests.
    func wait(for count: Int, seconds: Double = 5) -> [Request] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let r = shared.received.withLock { $0 }
            if r.count >= count { return r }
            usleep(10_000)
        }
        return shared.received.withLock { $0 }
    }
}

/// Webhooks from a real signalling server to a receiver on loopback:
/// order, signatures, retries, and a hung receiver that blocks nothing.
@Suite(.serialized) struct WebhookDeliveryTests {
    let secret = "webhook-test-secret-0123"

    private func server(
        receiver: WebhookReceiver, capacity: Int = 100, giveUpAfter: Duration = .seconds(2)
    )
        throws -> (SignalingServer, WebhookNotifier)
    {
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": secret]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration())
        var configuration = WebhookNotifier.Configuration(
            urls: ["http://127.0.0.1:\(receiver.port)/hook"], key: "k", secret: secret)
        configuration.policy = WebhookRetryPolicy(
            firstBackoff: .milliseconds(20), maxBackoff: .milliseconds(100), giveUpAfter: giveUpAfter)
        configuration.capacity = capacity
        configuration.attemptTimeout = .milliseconds(300)
        let notifier = WebhookNotifier(configuration)
        server.service.attachWebhooks(notifier)
        return (server, notifier)
    }

    private func join(_ server: SignalingServer, _ identity: String, room: String = "r") throws -> (BlockingWebSocket, String?) {
        let now = Int64(Date().timeIntervalSince1970)
        let token = AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "k", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: room,
                grants: AccessTokenGrants(publish: true, subscribe: true)), secret: secret)
        let ws = try BlockingWebSocket(server)
        ws.send(#"{"type":"join","token":"\#(token)"}"#)
        return (ws, ws.nextText())
    }

    private func event(_ request: WebhookReceiver.Request) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] ?? [:]
    }

    @Test func eventsArriveInOrderSignedAndAreRetriedAfterA500() throws {
        // The second request is answered 500 once: the same event comes again.
        let receiver = try WebhookReceiver { $0 == 1 ? 500 : 200 }
        defer { receiver.stop() }
        let (server, notifier) = try server(receiver: receiver)
        defer {
            server.stop()
            notifier.stop()
        }
        let (alice, _) = try join(server, "alice")
        alice.send(#"{"type":"leave"}"#)
        let requests = receiver.wait(for: 5)
        let kinds = requests.map { event($0)["event"] as? String ?? "?" }
        #expect(kinds == ["room_started", "participant_joined", "participant_joined", "participant_left", "room_finished"])
        for request in requests {
            let problem = WebhookSignature.problem(
                authorization: request.authorization, body: request.body, key: "k", secret: secret,
                nowSeconds: Int64(Date().timeIntervalSince1970))
            #expect(problem == nil)
            #expect(event(request)["room"] as? String == "r")
        }
        // The retried delivery is the same event (same id).
        #expect(event(requests[1])["id"] as? String == event(requests[2])["id"] as? String)
        #expect(Set(requests.map { event($0)["id"] as? String ?? "" }).count == 4)
        let counts = notifier.counts
        #expect(counts.sent == 4 && counts.failed == 1 && counts.dropped == 0)
    }

    @Test func aHungReceiverNeitherDelaysJoinsNorGrowsTheQueue() throws {
        let receiver = try WebhookReceiver { _ in nil }
        defer { receiver.stop() }
        let (server, notifier) = try server(receiver: receiver, capacity: 4, giveUpAfter: .seconds(30))
        defer {
            server.stop()
            notifier.stop()
        }
        var sockets: [BlockingWebSocket] = []
        let started = Date()
        for i in 0..<5 {
            let (ws, joined) = try join(server, "p\(i)", room: "room\(i)")
            #expect(joined?.contains(#""type":"joined""#) == true)
            sockets.append(ws)
        }
        // Ten events behind one that never gets an answer: joins still
        // take no longer than without webhooks.
        #expect(Date().timeIntervalSince(started) < 2)
        _ = receiver.wait(for: 1)
        let deadline = Date().addingTimeInterval(2)
        while notifier.counts.dropped == 0, Date() < deadline { usleep(10_000) }
        #expect(notifier.counts.dropped >= 5, "\(notifier.counts)")
        let metrics = try rawHTTPRequest(server.localAddress, "GET", "/metrics")
        #expect(metrics.body.contains("swiftlet_webhooks_dropped_total "))
    }
}
