import Synchronization
import Testing
import Wire

@testable import NetIO

#if canImport(Glibc)
    import Glibc
#endif

/// Per-address admission and the server-wide output cap (docs/SECURITY.md),
/// with real sockets on loopback: 127.0.0.1 and 127.0.0.2 are two clients.
@Suite(.serialized) struct TCPConnectionLimitsTests {
    private final class Reports: Sendable {
        let list = Mutex<[(SocketAddress?, TCPRefusal)]>([])
    }

    @Test func theConnectionOverThePerAddressLimitIsRefusedWhileOtherAddressesWork() throws {
        let recorder = Recorder()
        let reports = Reports()
        var configuration = TCPServerConfiguration()
        configuration.maxConnectionsPerAddress = 3
        configuration.refusalBytes = { _ in Array("refused".utf8) }
        configuration.onRefusal = { peer, why, _ in reports.list.withLock { $0.append((peer, why)) } }
        let server = try startServer(configuration: configuration, recorder: recorder)
        defer { server.stop() }

        let mine = try (0..<3).map { _ in try BlockingClient(connectingTo: server.localAddress, from: "127.0.0.1") }
        for c in mine { #expect(c.send("x") && c.receiveString(count: 1) == "x") }
        let extra = try BlockingClient(connectingTo: server.localAddress, from: "127.0.0.1")
        #expect(extra.receiveString(count: 7) == "refused")
        #expect(extra.seesClose())
        let other = try BlockingClient(connectingTo: server.localAddress, from: "127.0.0.2")
        #expect(other.send("y") && other.receiveString(count: 1) == "y")
        #expect(server.statistics.addressRefusals == 1)
        let report = reports.list.withLock { $0.first }
        #expect(report?.0?.ip == "127.0.0.1" && report?.1 == .tooManyConnectionsFromAddress)
        // A slot freed is a slot again.
        withExtendedLifetime(mine) {}
        _ = consume mine
        #expect(eventually { server.statistics.connections == 1 })
        let again = try BlockingClient(connectingTo: server.localAddress, from: "127.0.0.1")
        #expect(again.send("z") && again.receiveString(count: 1) == "z")
    }

    @Test func newConnectionsFromOneAddressAreRateLimited() throws {
        let recorder = Recorder()
        var configuration = TCPServerConfiguration()
        configuration.newConnectionsPerSecondPerAddress = 1
        configuration.newConnectionBurstPerAddress = 4
        let server = try startServer(configuration: configuration, recorder: recorder)
        defer { server.stop() }
        for _ in 0..<4 {
            let c = try BlockingClient(connectingTo: server.localAddress, from: "127.0.0.5")
            #expect(c.send("a") && c.receiveString(count: 1) == "a")
        }
        let limited = try BlockingClient(connectingTo: server.localAddress, from: "127.0.0.5")
        #expect(limited.seesClose())
        let other = try BlockingClient(connectingTo: server.localAddress, from: "127.0.0.6")
        #expect(other.send("b") && other.receiveString(count: 1) == "b")
        #expect(server.statistics.addressRefusals == 1)
    }

    @Test func queuedOutputIsCappedForTheWholeServer() throws {
        let recorder = Recorder()
        var configuration = TCPServerConfiguration()
        configuration.maxUnsentBytes = 64 << 20
        configuration.maxUnsentBytesTotal = 3 << 20
        let server = try startServer(configuration: configuration, recorder: recorder)
        defer { server.stop() }
        // Two clients that never read ask for 1 MiB at a time.
        let clients = try (0..<2).map { i in
            try BlockingClient(connectingTo: server.localAddress, receiveBufferSize: 16 << 10, from: "127.0.0.\(10 + i)")
        }
        var peak = 0
        for _ in 0..<32 {
            for c in clients { _ = c.send("flood") }
            _ = eventually(within: .milliseconds(20)) { recorder.closedCount > 0 }
            peak = max(peak, server.statistics.unsentBytes)
            if recorder.closedCount > 0 { break }
        }
        #expect(eventually { recorder.closedCount >= 1 })
        #expect(recorder.state.withLock { $0.closed.values.allSatisfy { $0 == .unsentLimitExceeded } })
        // The cap plus the one response that passed it.
        #expect(peak <= (3 << 20) + (1 << 20), "\(peak)")
        withExtendedLifetime(clients) {}
    }

    @Test func theAddressTableStaysBoundedUnderManyIPv6Prefixes() {
        var limiter = TCPAddressLimiter(
            limits: .init(maxConnectionsPerAddress: 4, connectionsPerSecond: 1, burst: 10, maxAddresses: 1000))
        let now = Instant(nanoseconds: 1_000_000_000)
        // A held connection from 10.0.0.1 must survive every sweep.
        let held = SocketAddress(ip: "10.0.0.1", port: 1)
        #expect(limiter.admit(held, now: now) == .admit)
        for i in 0..<20_000 {
            let address = SocketAddress(ip: "2001:db8:\(String(i >> 16, radix: 16)):\(String(i & 0xFFFF, radix: 16))::1", port: 9)
            #expect(limiter.admit(address, now: now) == .admit)
            limiter.release(address)
            #expect(limiter.trackedAddresses <= 1000)
        }
        for _ in 0..<3 { _ = limiter.admit(held, now: now) }
        #expect(limiter.admit(held, now: now) == .tooManyConnections)
    }

    @Test func oneIPv6SlashSixtyFourIsOneClientAndMappedIPv4IsIPv4() {
        let a = TCPAddressLimiter.key(SocketAddress(ip: "2001:db8:1:2::1", port: 1))
        let b = TCPAddressLimiter.key(SocketAddress(ip: "2001:db8:1:2:ffff:1:2:3", port: 2))
        let c = TCPAddressLimiter.key(SocketAddress(ip: "2001:db8:1:3::1", port: 1))
        #expect(a == b && a != c)
        #expect(
            TCPAddressLimiter.key(SocketAddress(ip: "::ffff:192.0.2.1", port: 1))
                == TCPAddressLimiter.key(SocketAddress(ip: "192.0.2.1", port: 2)))
    }

    /// A cluster's other nodes (`PeerAddressSet`, replaced at run time)
    /// are not counted: their connections carry many proxied clients. The
    /// exemption is per host, not per IPv6 /64, and ends when the set does.
    @Test func clusterPeersAreExemptWhileTheSetNamesThem() {
        var limiter = TCPAddressLimiter(
            limits: .init(maxConnectionsPerAddress: 2, connectionsPerSecond: 1, burst: 2, maxAddresses: 10))
        let peers = PeerAddressSet()
        limiter.exemptPeers = peers
        let node = SocketAddress(ip: "10.0.0.2", port: 40000)
        let neighbour = SocketAddress(ip: "2001:db8::2", port: 1)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        peers.replace(with: [SocketAddress(ip: "10.0.0.2", port: 8080)!, SocketAddress(ip: "2001:db8::1", port: 8080)!])
        for _ in 0..<100 { #expect(limiter.admit(node, now: t0) == .admit) }
        // Another host of the same /64 is not a peer.
        #expect(limiter.admit(neighbour, now: t0) == .admit)
        #expect(limiter.admit(neighbour, now: t0) == .admit)
        #expect(limiter.admit(neighbour, now: t0) == .tooManyConnections)
        peers.replace(with: [])
        #expect(limiter.admit(node, now: t0) == .admit)
        #expect(limiter.admit(node, now: t0) == .admit)
        #expect(limiter.admit(node, now: t0) == .tooManyConnections)
    }

    @Test func theBucketRefillsWithTime() {
        var limiter = TCPAddressLimiter(
            limits: .init(maxConnectionsPerAddress: 100, connectionsPerSecond: 2, burst: 2, maxAddresses: 10))
        let peer = SocketAddress(ip: "192.0.2.7", port: 1)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        #expect(limiter.admit(peer, now: t0) == .admit)
        #expect(limiter.admit(peer, now: t0) == .admit)
        #expect(limiter.admit(peer, now: t0) == .rateLimited)
        #expect(limiter.admit(peer, now: t0 + .milliseconds(500)) == .admit)
        #expect(limiter.admit(peer, now: t0 + .milliseconds(500)) == .rateLimited)
    }
}

@Suite struct TCPRefusalReportsTests {
    @Test func aFloodIsReportedAsASampleAndACount() {
        var reports = TCPRefusalReports(perSecond: 2)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        #expect(reports.admit(now: t0) == 0)
        #expect(reports.admit(now: t0) == 0)
        for _ in 0..<5 { #expect(reports.admit(now: t0 + .milliseconds(10)) == nil) }
        #expect(reports.admit(now: t0 + .seconds(1)) == 5)
        #expect(reports.admit(now: t0 + .seconds(1)) == 0)
    }
}
