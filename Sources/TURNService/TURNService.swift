import CShim
import CryptoPrimitives
import NetIO
import Synchronization
import TLS
import TURN
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Where and how the built-in TURN server runs.
package struct TURNServiceConfiguration: Sendable {
    /// The UDP listener; the TCP listener takes the same address and port.
    package var listen: SocketAddress
    /// TURN over TLS, on its own address, with the HTTPS listener's
    /// certificate slot (so SIGHUP reloads both).
    package var tls: (address: SocketAddress, contexts: TLSContextSlot)?
    /// Relay sockets bind this IP, port 0 (the kernel picks a free one).
    package var relayBindIP: String
    /// The relay address told to clients (XOR-RELAYED-ADDRESS): the bound
    /// IP, or the public one when the node is behind NAT.
    package var relayAnnouncedIP: String
    package var engine: TURNServerConfiguration
    package var credentials: TURNCredentials
    /// This node's media addresses, the only peers (`TURNPeerPolicy`).
    package var allowedPeers: Set<TransportAddress>
    /// Where to send what a client addresses to one of `allowedPeers`,
    /// when that is not the socket's own address: an announced public
    /// address behind NAT (`--announce-ip`) or an interface address of a
    /// wildcard bind maps to the worker's local address, so relayed
    /// packets never leave the machine to come back through the NAT
    /// (which many do not allow: hairpinning). Absent: sent as addressed.
    package var peerRoutes: [TransportAddress: TransportAddress] = [:]
    /// A TCP/TLS connection silent this long is closed.
    package var streamIdleTimeout: Duration = .seconds(120)

    package init(
        listen: SocketAddress, tls: (address: SocketAddress, contexts: TLSContextSlot)?, relayBindIP: String,
        relayAnnouncedIP: String, engine: TURNServerConfiguration, credentials: TURNCredentials,
        allowedPeers: Set<TransportAddress>
    ) {
        self.listen = listen
        self.tls = tls
        self.relayBindIP = relayBindIP
        self.relayAnnouncedIP = relayAnnouncedIP
        self.engine = engine
        self.credentials = credentials
        self.allowedPeers = allowedPeers
    }
}

extension TURNServiceConfiguration {
    /// `peerRoutes` for media workers given as (the socket's local address,
    /// the addresses it announces): each announced address to the bound
    /// address, or to loopback of its family on a wildcard bind.
    package static func peerRoutes(
        workers: [(local: SocketAddress, announced: [TransportAddress])]
    ) -> [TransportAddress:
        TransportAddress]
    {
        var routes: [TransportAddress: TransportAddress] = [:]
        for (local, announced) in workers {
            for address in announced {
                var target = local.transportAddress
                if local.isWildcard {
                    guard let loopback = SocketAddress(ip: address.family == .ipv4 ? "127.0.0.1" : "::1", port: local.port)
                    else { continue }
                    target = loopback.transportAddress
                }
                if target != address { routes[address] = target }
            }
        }
        return routes
    }
}

/// The built-in TURN server's shell (docs/TRANSPORT.md, "TURN"): one
/// thread with an epoll loop owns the `TURNServer` engine, the UDP
/// listener and every relay socket; TCP and TLS clients come through a
/// `TCPServer` (its own thread, which does the TLS) whose sessions post
/// each framed message to this thread's mailbox. Relay traffic is not the
/// SFU's hot path, so a relayed packet is copied into an array once on
/// its way (the engine's output); nothing here takes a lock per packet.
package final class TURNService: Sendable {
    package let udpAddress: SocketAddress
    package let tcpAddress: SocketAddress
    package let tlsAddress: SocketAddress?
    private let credentials: TURNCredentials
    private let loop: TURNLoop
    private let tcp: TCPServer<TURNStreamSession>
    private let thread: Mutex<WorkerThread?>

    package init(_ configuration: TURNServiceConfiguration) throws(SocketError) {
        let events = Mailbox<TURNStreamEvent>()
        var tcpConfiguration = TCPServerConfiguration()
        tcpConfiguration.maxConnections = configuration.engine.maxAllocations
        // One address (a whole office behind NAT, at most) may hold a
        // quarter of them, so one client cannot fill the listener with
        // idle connections before the idle timeout cuts them.
        tcpConfiguration.maxConnectionsPerAddress = max(1, configuration.engine.maxAllocations / 4)
        tcpConfiguration.maxUnsentBytes = 1 << 20
        let idle = configuration.streamIdleTimeout
        let tcp = try TCPServer<TURNStreamSession>(
            bindingTo: configuration.listen, secure: configuration.tls, configuration: tcpConfiguration
        ) { id, remote, now in
            let address = remote?.transportAddress ?? TransportAddress(ipv4: 0, port: 0)
            return TURNStreamSession(
                client: TURNClient(transport: .tcp, address: address, connection: id.rawValue), events: events,
                idleTimeout: idle, now: now)
        }
        let loop: TURNLoop
        do {
            loop = try TURNLoop(configuration, events: events, tcp: tcp)
        } catch {
            tcp.stop()
            throw error
        }
        self.tcp = tcp
        self.loop = loop
        credentials = configuration.credentials
        udpAddress = loop.udpAddress
        tcpAddress = tcp.localAddress
        tlsAddress = tcp.secureLocalAddress
        thread = Mutex(WorkerThread { loop.run() })
    }

    deinit { stop() }

    /// How long issued credentials may create allocations. An hour covers
    /// a join and its ICE restarts; a rejoin gets fresh ones. An
    /// allocation made in time lives on while it is refreshed.
    package static let credentialLifetimeSeconds: Int64 = 3600

    /// Credentials for `identity` (the join response's, the `Link`
    /// headers'), valid from `unixSeconds` for `credentialLifetimeSeconds`.
    package func issue(identity: String, unixSeconds: Int64) -> TURNCredentials.Issued? {
        credentials.issue(identity: identity, nowSeconds: unixSeconds, lifetimeSeconds: Self.credentialLifetimeSeconds)
    }

    /// The TURN URLs of this server (RFC 7065) with `host`: UDP, TCP, and
    /// TLS when it listens for TLS (`turns:`, over TCP).
    package func urls(host: String) -> [String] {
        var urls = ["turn:\(host):\(udpAddress.port)?transport=udp", "turn:\(host):\(tcpAddress.port)?transport=tcp"]
        if let tlsAddress { urls.append("turns:\(host):\(tlsAddress.port)?transport=tcp") }
        return urls
    }

    /// Allocations open now (approximate while running).
    package var allocationCount: Int { loop.allocations.load(ordering: .relaxed) }
    /// Relay sockets opened since start.
    package var relaysOpened: Int { loop.relaysOpened.load(ordering: .relaxed) }

    /// Stops both threads and closes every socket. Idempotent.
    package func stop() {
        loop.requestStop()
        thread.withLock { t in
            t?.join()
            t = nil
        }
        tcp.stop()
    }
}
