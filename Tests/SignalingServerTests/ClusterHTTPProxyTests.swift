import Foundation
import NetIO
import RoomProtocol
import Rooms
import Signaling
import Synchronization
import Testing
import Wire

@testable import SignalingServer

extension ClusterProcessSuite {
    /// Issue #15, WHIP and WHEP through any node, in one process: node A (an
    /// entry node whose routing is set by each test) and node B (a plain
    /// server, the room's node) on loopback. Real HTTP on real sockets; only
    /// the placement is a stand-in (`StubRouting`), so each outcome is chosen.
    @Suite(.serialized) struct ClusterHTTPProxyTests {
        /// The placement a test chooses; counts its calls, and holds each one
        /// on `gate` when there is one (a slow Redis).
        final class StubRouting: ClusterRouting {
            let nodeID = "node-a~1"
            let route = Mutex<ClusterRoute>(.unavailable("not set"))
            let calls = Atomic<Int>(0)
            let gate: DispatchSemaphore?
            init(gate: DispatchSemaphore? = nil) { self.gate = gate }
            var unavailableReason: String? { nil }
            func route(room: String, identity: String?, arrivedVia: String?) -> ClusterRoute {
                calls.add(1, ordering: .relaxed)
                _ = gate?.wait(timeout: .now() + 5)
                return route.withLock { $0 }
            }
            func route(sessionNode node: String) -> ClusterRoute { route(room: "", identity: nil, arrivedVia: nil) }
            func remoteParts(of room: String) -> [String: [RemoteParticipant]] { [:] }
            func home(of room: String) -> ClusterRoute? { route(room: room, identity: nil, arrivedVia: nil) }
        }

        private static func server(requestTimeout: Duration = .seconds(10)) throws -> SignalingServer {
            let endpoint = MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[]])
            var timeouts = SignalingTimeouts()
            timeouts.request = requestTimeout
            return try SignalingServer(
                bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
                rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: endpoint), timeouts: timeouts)
        }

        /// An entry node whose placement answers `route`.
        private static func entry(
            _ route: ClusterRoute, gate: DispatchSemaphore? = nil, requestTimeout: Duration = .seconds(10)
        ) throws -> (SignalingServer, StubRouting) {
            let server = try server(requestTimeout: requestTimeout)
            let routing = StubRouting(gate: gate)
            routing.route.withLock { $0 = route }
            server.joinCluster(routing)
            return (server, routing)
        }

        private static func elsewhere(_ node: SocketAddress) -> ClusterRoute {
            .elsewhere(node: "node-b~2", httpAddress: "http://\(node)", epoch: 7)
        }

        private static func token(_ identity: String, room: String = "r") -> String {
            let now = Int64(Date().timeIntervalSince1970)
            return AccessToken.mint(
                claims: AccessTokenClaims(
                    issuer: "k", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: room,
                    grants: AccessTokenGrants(publish: true, subscribe: true)),
                secret: "s")
        }

        private static func offer() throws -> String {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appending(path: "../SDPTests/Fixtures/aiortc-offer.sdp")
            return try String(contentsOf: url, encoding: .utf8)
        }

        private static func offerHeaders(_ identity: String) -> [(String, String)] {
            [("Content-Type", "application/sdp"), ("Authorization", "Bearer \(token(identity))")]
        }

        /// What a client thread got back, read by the test.
        final class Outcome<T: Sendable>: Sendable {
            let value = Mutex<T?>(nil)
            var current: T? { value.withLock { $0 } }
        }

        /// Polls `done` every 10 ms for at most `seconds`.
        private static func eventually(_ seconds: Double = 2, _ done: () -> Bool) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while !done(), Date() < end { usleep(10_000) }
            return done()
        }

        /// Every message between nodes about a room carries its epoch: A
        /// proxies at the epoch it placed the room at (7), and B serves the
        /// request only when its own placement gives the same epoch; at
        /// another one (the room was placed again since) B refuses it with
        /// the reason, and the client comes back through A.
        @Test(.timeLimit(.minutes(1)))
        func theRoomsNodeServesAProxiedRequestOnlyAtTheEpochItWasPlacedAt() throws {
            let b = try Self.server()
            defer { b.stop() }
            let bRouting = StubRouting()
            bRouting.route.withLock { $0 = .here(epoch: 8) }
            b.joinCluster(bRouting)
            let (a, _) = try Self.entry(Self.elsewhere(b.localAddress))
            defer { a.stop() }

            let stale = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: Self.offer())
            #expect(stale.status == 503, "\(stale.body)")
            #expect(stale.body.contains("placed again (epoch 8; the entry node had epoch 7)"), "\(stale.body)")
            #expect(stale.headers["retry-after"] == "1")
            #expect(b.service.snapshot.participants == 0)

            bRouting.route.withLock { $0 = .here(epoch: 7) }
            let served = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: Self.offer())
            #expect(served.status == 201, "\(served.body)")
            #expect(b.service.snapshot.participants == 1)
        }

        /// The server API (docs/API.md, "In a cluster"): a room-scoped
        /// call reaching a node without the room goes to the room's node,
        /// found without placing the room; a refused token costs no lookup.
        @Test(.timeLimit(.minutes(1)))
        func serverAPICallsGoToTheRoomsNode() throws {
            let b = try Self.server()
            defer { b.stop() }
            let (a, routing) = try Self.entry(Self.elsewhere(b.localAddress))
            defer { a.stop() }
            let now = Int64(Date().timeIntervalSince1970)
            let admin = AccessToken.mint(
                claims: AccessTokenClaims(
                    issuer: "k", subject: "backend", notBefore: now - 5, expiresAt: now + 600, room: "*",
                    grants: AccessTokenGrants(admin: true)),
                secret: "s")
            let auth = [("Authorization", "Bearer \(admin)")]
            // The room lives on B (a WHIP publisher there).
            let created = try rawHTTPRequest(
                b.localAddress, "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: Self.offer())
            #expect(created.status == 201)
            let room = try rawHTTPRequest(a.localAddress, "GET", "/api/v1/rooms/r", headers: auth)
            #expect(room.status == 200 && room.body.contains(#""participants":1"#), "\(room.body)")
            let looked = routing.calls.load(ordering: .relaxed)
            #expect(looked == 1)
            let listed = try rawHTTPRequest(a.localAddress, "GET", "/api/v1/rooms/r/participants", headers: auth)
            #expect(listed.body.contains(#""kind":"whip""#), "\(listed.body)")
            let removed = try rawHTTPRequest(a.localAddress, "DELETE", "/api/v1/rooms/r/participants/alice", headers: auth)
            #expect(removed.status == 200, "\(removed.body)")
            #expect(try rawHTTPRequest(b.localAddress, "GET", "/api/v1/rooms/r", headers: auth).status == 404)
            // A bad token is refused on A without asking where the room is.
            let before = routing.calls.load(ordering: .relaxed)
            #expect(
                try rawHTTPRequest(a.localAddress, "GET", "/api/v1/rooms/r", headers: [("Authorization", "Bearer x")]).status
                    == 401)
            #expect(routing.calls.load(ordering: .relaxed) == before)
            // Redis cannot say: the cluster's 503, as the API's JSON error.
            routing.route.withLock { $0 = .unavailable("redis: connection refused") }
            let down = try rawHTTPRequest(a.localAddress, "GET", "/api/v1/rooms/r", headers: auth)
            #expect(down.status == 503 && down.body.contains(#""code":"unavailable""#), "\(down.body)")
            #expect(down.headers["retry-after"] != nil)
            // No home anywhere: answered on A, and nothing is placed.
            routing.route.withLock { $0 = .here(epoch: 0) }
            #expect(try rawHTTPRequest(a.localAddress, "GET", "/api/v1/rooms/nowhere", headers: auth).status == 404)
            // Creating rooms in a cluster is not built yet.
            let create = try rawHTTPRequest(
                a.localAddress, "POST", "/api/v1/rooms", headers: auth + [("Content-Type", "application/json")],
                body: #"{"name":"n"}"#)
            #expect(create.status == 501 && create.body.contains("cluster_unsupported"))
        }

        @Test func anEpochIsComparedForEqualityAndAnUnreadableOneRefused() {
            #expect(ClusterEpochCheck.mismatch(sent: nil, here: 3, room: "r") == nil)
            #expect(ClusterEpochCheck.mismatch(sent: "3", here: 3, room: "r") == nil)
            // A Redis restarted empty counts from 1 again: lower is as stale as higher.
            #expect(ClusterEpochCheck.mismatch(sent: "9", here: 3, room: "r")?.contains("placed again") == true)
            #expect(ClusterEpochCheck.mismatch(sent: "2", here: 3, room: "r")?.contains("placed again") == true)
            for bad in ["", "x", "-1", "0", "99999999999999999999"] {
                #expect(ClusterEpochCheck.mismatch(sent: bad, here: 3, room: "r")?.contains("unreadable") == true, "\(bad)")
            }
        }

        @Test(.timeLimit(.minutes(1)))
        func aWHIPSessionThroughTheEntryNodeLivesOnTheRoomsNode() throws {
            let b = try Self.server()
            defer { b.stop() }
            let (a, routing) = try Self.entry(Self.elsewhere(b.localAddress))
            defer { a.stop() }

            let created = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: Self.offer())
            #expect(created.status == 201, "\(created.body)")
            let location = try #require(created.headers["location"])
            #expect(location.hasPrefix("/whip/r/SE_"))
            #expect(created.headers["content-type"] == "application/sdp")
            #expect(created.headers["etag"]?.hasPrefix("\"") == true)
            #expect(created.body.hasPrefix("v=0\r\n"))
            #expect(b.service.snapshot.participants == 1)
            #expect(a.service.snapshot.participants == 0 && a.service.snapshot.rooms == 0)
            #expect(a.proxyStatistics?.httpRelayed == 1)

            // PATCH and DELETE through A reach the session on B by its room.
            let trickle = [("Content-Type", "application/trickle-ice-sdpfrag")]
            let fragment = "a=ice-ufrag:abcd\r\na=ice-pwd:0123456789abcdefghijkl\r\na=mid:0\r\n"
            #expect(try rawHTTPRequest(a.localAddress, "PATCH", location, headers: trickle, body: fragment).status == 204)
            let restart = try rawHTTPRequest(
                a.localAddress, "PATCH", location, headers: trickle + [("If-Match", "*")], body: fragment)
            #expect(restart.status == 422, "If-Match travels: \(restart.body)")
            #expect(try rawHTTPRequest(a.localAddress, "DELETE", location).status == 200)
            #expect(b.service.snapshot.participants == 0)
            let again = try rawHTTPRequest(a.localAddress, "DELETE", location)
            #expect(again.status == 404 && again.body.contains("no such WHIP session"))
            #expect(a.proxyStatistics?.httpRelayed == 5)
            #expect(a.proxyStatistics?.httpInFlight == 0)
            #expect(routing.calls.load(ordering: .relaxed) == 5)

            // A 409 from B keeps its Retry-After: WHEP before anything is published.
            let early = try rawHTTPRequest(
                a.localAddress, "POST", "/whep/r", headers: Self.offerHeaders("viewer"), body: Self.offer())
            #expect(early.status == 409 && early.headers["retry-after"] == "2", "\(early.body)")
        }

        /// The checks that need no room answer at once on the entry node:
        /// no placement, nothing sent to another node.
        @Test(.timeLimit(.minutes(1)))
        func refusalsThatNeedNoRoomStayOnTheEntryNode() throws {
            let (a, routing) = try Self.entry(Self.elsewhere(SocketAddress(ip: "127.0.0.1", port: 9)!))
            defer { a.stop() }
            let noToken = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/r", headers: [("Content-Type", "application/sdp")], body: Self.offer())
            #expect(noToken.status == 401 && noToken.headers["www-authenticate"] == "Bearer")
            let otherRoom = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/elsewhere", headers: Self.offerHeaders("alice"), body: Self.offer())
            #expect(otherRoom.status == 403)
            let notSDP = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/r", headers: [("Content-Type", "text/plain"), ("Authorization", "Bearer x")],
                body: "hi")
            #expect(notSDP.status == 415)
            #expect(try rawHTTPRequest(a.localAddress, "OPTIONS", "/whip/r").status == 204)
            #expect(try rawHTTPRequest(a.localAddress, "GET", "/whip/r").status == 405)
            #expect(try rawHTTPRequest(a.localAddress, "GET", "/healthz").status == 200)
            #expect(routing.calls.load(ordering: .relaxed) == 0)
            #expect(a.proxyStatistics?.httpRelayed == 0 && a.proxyStatistics?.httpFailed == 0)
        }

        /// `.here`: the entry node is the room's node and answers as alone.
        @Test(.timeLimit(.minutes(1)))
        func aRoomPlacedHereIsServedHere() throws {
            let (a, routing) = try Self.entry(.here(epoch: 3))
            defer { a.stop() }
            let created = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: Self.offer())
            #expect(created.status == 201, "\(created.body)")
            #expect(a.service.snapshot.participants == 1)
            let location = try #require(created.headers["location"])
            // A session this node holds needs no placement.
            #expect(try rawHTTPRequest(a.localAddress, "DELETE", location).status == 200)
            #expect(routing.calls.load(ordering: .relaxed) == 1)
            #expect(a.proxyStatistics?.httpRelayed == 0)
        }

        /// One hop: a request that came through another node and whose room
        /// is elsewhere is refused (503, Retry-After), as is one whose room
        /// cannot be placed.
        @Test(.timeLimit(.minutes(1)))
        func aProxiedRequestIsNeverProxiedAgainAndAnUnplacedRoomGets503() throws {
            let (a, routing) = try Self.entry(Self.elsewhere(SocketAddress(ip: "127.0.0.1", port: 9)!))
            defer { a.stop() }
            let viaNode = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/r", headers: Self.offerHeaders("alice") + [("X-Swiftlet-Via", "node-c~3")],
                body: Self.offer())
            #expect(viaNode.status == 503 && viaNode.headers["retry-after"] == "1")
            #expect(viaNode.body.contains("node-b~2") && viaNode.body.contains("one hop"), "\(viaNode.body)")
            #expect(a.proxyStatistics?.httpRelayed == 0 && a.proxyStatistics?.httpFailed == 0)

            routing.route.withLock { $0 = .unavailable("redis: connection refused") }
            let unplaced = try rawHTTPRequest(a.localAddress, "DELETE", "/whep/r/SE_abcdefghijkl")
            #expect(unplaced.status == 503 && unplaced.headers["retry-after"] == "1")
            #expect(unplaced.body.contains("redis: connection refused"))
        }

        /// A room's node that refuses connections: 502 with Retry-After.
        @Test(.timeLimit(.minutes(1)))
        func anUnreachableRoomNodeGets502() throws {
            // A port nobody listens on any more.
            let closed = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!).localAddress
            let (a, _) = try Self.entry(Self.elsewhere(closed))
            defer { a.stop() }
            let response = try rawHTTPRequest(
                a.localAddress, "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: Self.offer())
            #expect(response.status == 502 && response.headers["retry-after"] == "1", "\(response.body)")
            #expect(a.proxyStatistics?.httpFailed == 1)
        }

        /// A request waiting on a room's node that accepts and never answers
        /// blocks nothing: other connections are served meanwhile; at the
        /// request timeout it gets 504, and the request pipelined behind it on
        /// the same connection is served next.
        @Test(.timeLimit(.minutes(1)))
        func aSilentRoomNodeCosts504AndBlocksNoOtherConnection() throws {
            // Listens (the kernel completes the handshakes) and never accepts.
            let silent = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
            defer { _ = silent.localAddress }
            let (a, _) = try Self.entry(Self.elsewhere(silent.localAddress), requestTimeout: .seconds(1))
            defer { a.stop() }
            let pipelined =
                rawHTTPRequestText(
                    "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: try Self.offer(), keepAlive: true)
                + rawHTTPRequestText("GET", "/healthz")
            let result = Outcome<(response: String, seconds: Double)>()
            let address = a.localAddress
            let waiting = Thread {
                let exchange = try? rawTCPExchange(address, sending: pipelined)
                result.value.withLock { $0 = exchange }
            }
            waiting.start()
            #expect(Self.eventually { a.proxyStatistics?.httpInFlight == 1 })
            let health = try rawTCPExchange(a.localAddress, sending: rawHTTPRequestText("GET", "/healthz"))
            #expect(health.response.hasPrefix("HTTP/1.1 200") && health.seconds < 0.5)
            #expect(result.current == nil)

            #expect(Self.eventually(4) { result.current != nil })
            let (response, seconds) = try #require(result.current)
            #expect(response.hasPrefix("HTTP/1.1 504"), "\(response)")
            #expect(seconds >= 0.9 && seconds < 3)
            let second = try #require(response.range(of: "HTTP/1.1 200 OK"))
            #expect(response[second.lowerBound...].contains("ok\n"))
            #expect(Self.eventually { a.proxyStatistics?.httpInFlight == 0 })
            let stats = try #require(a.proxyStatistics)
            #expect(stats.httpTimedOut + stats.httpCancelled == 1)
        }

        /// Bad input behind a waiting request costs its connection only: more
        /// than one request's worth pipelined closes it at once, and its
        /// exchange with the room's node is dropped.
        @Test(.timeLimit(.minutes(1)))
        func tooMuchPipelinedBehindAWaitingRequestClosesItsConnection() throws {
            let silent = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
            defer { _ = silent.localAddress }
            let (a, _) = try Self.entry(Self.elsewhere(silent.localAddress), requestTimeout: .seconds(5))
            defer { a.stop() }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = a.localAddress.storage
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, a.localAddress.length) }
            }
            try #require(rc == 0)
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let post = Array(
                rawHTTPRequestText(
                    "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: try Self.offer(), keepAlive: true
                )
                .utf8)
            #expect(post.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == post.count)
            #expect(Self.eventually { a.proxyStatistics?.httpInFlight == 1 })
            // 16 KiB of head and 128 KiB of offer at most: send 200 KiB.
            let started = Date()
            let junk = [UInt8](repeating: UInt8(ascii: "x"), count: 8192)
            for _ in 0..<25 { _ = junk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var received = 0
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 { break }
                received += n
            }
            #expect(received == 0)
            #expect(Date().timeIntervalSince(started) < 3)
            #expect(Self.eventually { a.proxyStatistics?.httpInFlight == 0 && a.proxyStatistics?.httpCancelled == 1 })
            #expect(try rawHTTPRequest(a.localAddress, "GET", "/healthz").status == 200)
        }

        /// The placement talks to Redis off the signalling loop: while it
        /// waits, other connections are served; when it answers, so is the
        /// request.
        @Test(.timeLimit(.minutes(1)))
        func aSlowPlacementBlocksNoOtherConnection() throws {
            let b = try Self.server()
            defer { b.stop() }
            let gate = DispatchSemaphore(value: 0)
            let (a, routing) = try Self.entry(Self.elsewhere(b.localAddress), gate: gate)
            defer { a.stop() }
            let result = Outcome<RawHTTPResponse>()
            let address = a.localAddress
            let offer = try Self.offer()
            let waiting = Thread {
                let response = try? rawHTTPRequest(address, "POST", "/whip/r", headers: Self.offerHeaders("alice"), body: offer)
                result.value.withLock { $0 = response }
            }
            waiting.start()
            #expect(Self.eventually { routing.calls.load(ordering: .relaxed) == 1 })
            let health = try rawTCPExchange(a.localAddress, sending: rawHTTPRequestText("GET", "/healthz"))
            #expect(health.response.hasPrefix("HTTP/1.1 200") && health.seconds < 0.5)
            #expect(result.current == nil)
            gate.signal()
            #expect(Self.eventually { result.current != nil })
            #expect(result.current?.status == 201)
            #expect(b.service.snapshot.participants == 1)
        }
    }
}
