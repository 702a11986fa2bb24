import Synchronization
import Testing
import Wire

@testable import NetIO

#if canImport(Glibc)
    import Glibc
#endif

/// Real sockets on loopback, port 0. Serialized: the 200-connection and
/// 8 MiB tests are kinder to a shared 2-core machine one at a time.
@Suite(.serialized) struct TCPServerTests {
    @Test func echoesBytesOnLoopback() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        #expect(server.localAddress.port != 0)

        let client = try BlockingClient(connectingTo: server.localAddress)
        #expect(client.send("hello"))
        #expect(client.receiveString(count: 5) == "hello")
        #expect(client.send("again"))
        #expect(client.receiveString(count: 5) == "again")

        #expect(recorder.created.count == 1)
        #expect(recorder.state.withLock { $0.peers.first??.ip } == "127.0.0.1")
        #expect(server.statistics.accepted == 1)
        #expect(server.statistics.connections == 1)
    }

    @Test func echoesOnTwoHundredConnectionsAtOnce() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }

        let clients = try (0..<200).map { _ in try BlockingClient(connectingTo: server.localAddress) }
        for (i, client) in clients.enumerated() { #expect(client.send("message \(i);")) }
        for (i, client) in clients.enumerated() {
            let expected = "message \(i);"
            #expect(client.receiveString(count: expected.utf8.count) == expected)
        }
        // The clients must outlive the check: in -O builds Swift may end
        // the array's lifetime after its last use, closing every socket.
        withExtendedLifetime(clients) {
            #expect(server.statistics.connections == 200, "\(server.statistics)")
        }
        #expect(Set(recorder.created).count == 200)
    }

    @Test func closesAfterSendingWhenTheHandlerAsks() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }

        let client = try BlockingClient(connectingTo: server.localAddress)
        client.send("close")
        #expect(client.receiveString(count: 3) == "bye")
        #expect(client.seesClose())
        // Our FIN ends the linger at once.
        client.shutdownWrite()
        let id = try #require(recorder.created.first)
        #expect(eventually { recorder.closedReason(id) == .requested })
        #expect(eventually { server.statistics.connections == 0 })
    }

    @Test func lingerEndsAfterItsTimeoutWithoutThePeersFIN() throws {
        let recorder = Recorder()
        var configuration = TCPServerConfiguration()
        configuration.lingerTimeout = .milliseconds(50)
        let server = try startServer(configuration: configuration, recorder: recorder)
        defer { server.stop() }

        let client = try BlockingClient(connectingTo: server.localAddress)
        client.send("close")
        #expect(client.receiveString(count: 3) == "bye")
        #expect(client.seesClose())
        // Late bytes during the linger are discarded, not echoed.
        client.send("late")
        let id = try #require(recorder.created.first)
        #expect(eventually { recorder.closedReason(id) == .requested })
        #expect(server.statistics.connections == 0)
    }

    @Test func closeNowDiscardsTheAnswer() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }

        let client = try BlockingClient(connectingTo: server.localAddress)
        client.send("abort")
        #expect(client.receiveOnce() == [])
        let id = try #require(recorder.created.first)
        #expect(eventually { recorder.closedReason(id) == .requested })
    }

    @Test func peerHalfCloseFlushesThenCloses() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }

        let client = try BlockingClient(connectingTo: server.localAddress)
        client.send("last words")
        client.shutdownWrite()
        #expect(client.receiveString(count: 10) == "last words")
        #expect(client.seesClose())
        let id = try #require(recorder.created.first)
        #expect(eventually { recorder.closedReason(id) == .peerClosed })
    }

    @Test func idleTimeoutClosesAtTheHandlersDeadline() throws {
        let recorder = Recorder()
        var options = ScriptedHandler.Options()
        options.idleTimeout = .milliseconds(100)
        let server = try startServer(options: options, recorder: recorder)
        defer { server.stop() }

        let client = try BlockingClient(connectingTo: server.localAddress)
        client.send("ping")
        #expect(client.receiveString(count: 4) == "ping")
        let quiet = MonotonicClock.now()
        #expect(client.receiveString(count: 4) == "idle")
        let waited = MonotonicClock.now() - quiet
        #expect(client.seesClose())
        #expect(waited >= .milliseconds(80))
        #expect(waited < .seconds(3))
    }

    @Test func activityPostponesTheIdleDeadline() throws {
        let recorder = Recorder()
        var options = ScriptedHandler.Options()
        options.idleTimeout = .milliseconds(300)
        let server = try startServer(options: options, recorder: recorder)
        defer { server.stop() }

        let client = try BlockingClient(connectingTo: server.localAddress)
        let start = MonotonicClock.now()
        // Eight messages 50 ms apart outlast one idle timeout: each moves the
        // deadline, and the superseded heap entries must not fire.
        for i in 0..<8 {
            client.send("m\(i)")
            #expect(client.receiveString(count: 2) == "m\(i)")
            usleep(50_000)
        }
        #expect(MonotonicClock.now() - start > .milliseconds(300))
        #expect(client.receiveString(count: 4) == "idle")
        #expect(client.seesClose())
    }

    @Test func deliversEightMebibytesToASlowReader() throws {
        let recorder = Recorder()
        var configuration = TCPServerConfiguration()
        configuration.maxUnsentBytes = 16 << 20
        let server = try startServer(configuration: configuration, recorder: recorder)
        defer { server.stop() }

        let client = try BlockingClient(connectingTo: server.localAddress, receiveBufferSize: 32 << 10)
        client.send("big")
        var received: [UInt8] = []
        received.reserveCapacity(8 << 20)
        while received.count < 8 << 20 {
            guard let chunk = client.receiveOnce(max: 64 << 10), !chunk.isEmpty else { break }
            received += chunk
            // Slow: pause briefly after each mebibyte so the server's
            // socket buffer fills and it must wait for EPOLLOUT.
            if received.count % (1 << 20) < chunk.count { usleep(2000) }
        }
        #expect(received.count == 8 << 20)
        #expect(received == ScriptedHandler.pattern(8 << 20))
        #expect(client.seesClose())
        #expect(server.statistics.writeBlocked > 0)
        #expect(server.statistics.unsentLimitCloses == 0)
    }

    @Test func closesAPeerThatNeverReadsPastTheUnsentLimit() throws {
        let recorder = Recorder()
        var configuration = TCPServerConfiguration()
        configuration.maxUnsentBytes = 1 << 20
        let server = try startServer(configuration: configuration, recorder: recorder)
        defer { server.stop() }

        let client = try BlockingClient(connectingTo: server.localAddress, receiveBufferSize: 16 << 10)
        // Each "flood" asks for 1 MiB; the client never reads, so after the
        // kernel buffers fill the queue passes 1 MiB.
        for _ in 0..<64 {
            guard client.send("flood"), recorder.closedCount == 0 else { break }
            _ = eventually(within: .milliseconds(20)) { recorder.closedCount > 0 }
        }
        let id = try #require(recorder.created.first)
        #expect(eventually { recorder.closedReason(id) == .unsentLimitExceeded })
        #expect(server.statistics.unsentLimitCloses == 1)
        #expect(server.statistics.connections == 0)
    }

    @Test func postFromAnotherThreadReachesTheConnection() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }

        let first = try BlockingClient(connectingTo: server.localAddress)
        let second = try BlockingClient(connectingTo: server.localAddress)
        first.send("one")
        #expect(first.receiveString(count: 3) == "one")
        second.send("two!")
        #expect(second.receiveString(count: 4) == "two!")
        let ids = recorder.created
        try #require(ids.count == 2)

        let pusher = WorkerThread {
            server.send(Array("pushed".utf8), to: ids[1])
            server.post(to: ids[1]) { handler, _ in .send(Array("seen \(handler.receivedBytes)".utf8)) }
        }
        pusher.join()
        #expect(second.receiveString(count: 6 + 6) == "pushedseen 4")
        // Nothing went to the other connection: its next bytes are its echo.
        first.send("x")
        #expect(first.receiveString(count: 1) == "x")
        // A push to a connection that is gone is dropped.
        #expect(server.send([1], to: TCPConnectionID(rawValue: 999_999)))
    }

    @Test func refusesConnectionsBeyondTheMaximum() throws {
        let recorder = Recorder()
        var configuration = TCPServerConfiguration()
        configuration.maxConnections = 2
        let server = try startServer(configuration: configuration, recorder: recorder)
        defer { server.stop() }

        var a: BlockingClient? = try BlockingClient(connectingTo: server.localAddress)
        let b = try BlockingClient(connectingTo: server.localAddress)
        a?.send("a")
        b.send("b")
        #expect(a?.receiveString(count: 1) == "a")
        #expect(b.receiveString(count: 1) == "b")

        let c = try BlockingClient(connectingTo: server.localAddress)
        c.send("c")
        #expect(c.seesClose())
        #expect(server.statistics.refused == 1)
        #expect(recorder.created.count == 2)

        a = nil
        #expect(eventually { server.statistics.connections == 1 })
        let d = try BlockingClient(connectingTo: server.localAddress)
        d.send("d")
        #expect(d.receiveString(count: 1) == "d")
    }

    @Test func drainRefusesNewConnectionsWhileExistingOnesEcho() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }

        let existing = try BlockingClient(connectingTo: server.localAddress)
        existing.send("before")
        #expect(existing.receiveString(count: 6) == "before")

        server.drain()
        #expect(!server.isAccepting)
        #expect(server.isRunning)
        #expect(throws: ClientError(errno: ECONNREFUSED)) { try BlockingClient(connectingTo: server.localAddress) }

        existing.send("after")
        #expect(existing.receiveString(count: 5) == "after")
        server.drain()  // a second drain is harmless
        #expect(server.statistics.accepted == 1)
    }

    @Test func stopClosesConnectionsAndJoinsTheThread() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)

        let client = try BlockingClient(connectingTo: server.localAddress)
        client.send("hi")
        #expect(client.receiveString(count: 2) == "hi")
        let id = try #require(recorder.created.first)

        server.stop()
        // Joined: the loop has exited and closed everything before stop returned.
        #expect(!server.isRunning)
        #expect(recorder.closedReason(id) == .serverStopped)
        #expect(client.seesClose())
        #expect(throws: ClientError(errno: ECONNREFUSED)) { try BlockingClient(connectingTo: server.localAddress) }
        server.stop()
        server.drain()
        #expect(!server.post(to: id) { _, _ in .none })
    }

    @Test func bytesPostedJustBeforeStopStillLeave() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        let client = try BlockingClient(connectingTo: server.localAddress)
        client.send("hi")
        #expect(client.receiveString(count: 2) == "hi")
        let id = try #require(recorder.created.first)
        // Keep the loop busy so that the next post lands after it took its
        // mailbox and the stop is seen before another round.
        server.post(to: id) { _, _ in
            usleep(200_000)
            return .none
        }
        usleep(50_000)
        server.send(Array("bye".utf8), to: id)
        server.stop()
        #expect(client.receiveString(count: 3) == "bye")
    }

    @Test func servesIPv6Loopback() throws {
        let recorder = Recorder()
        let server = try startServer(on: "::1", recorder: recorder)
        defer { server.stop() }
        #expect(server.localAddress.family == .v6)

        let client = try BlockingClient(connectingTo: server.localAddress)
        client.send("v6")
        #expect(client.receiveString(count: 2) == "v6")
        #expect(recorder.state.withLock { $0.peers.first??.ip } == "::1")
    }
}
