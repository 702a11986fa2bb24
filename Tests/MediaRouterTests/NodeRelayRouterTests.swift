import DTLS
import ICE
import PeerSession
import RTPStreams
import Testing
import Wire

@testable import MediaRouter

/// Relay transports between two nodes' routers (issue #15, the cascade),
/// sans-IO on a virtual clock: datagrams each router writes are handed to
/// the other as if from its worker's address.
@Suite struct NodeRelayRouterTests {
    final class Capture: DatagramOutput {
        var datagrams: [(bytes: [UInt8], to: TransportAddress, from: TransportAddress?)] = []
        func send(to address: TransportAddress, from source: TransportAddress?, _ write: (UnsafeMutableRawBufferPointer) -> Int) {
            var slot = [UInt8](repeating: 0, count: 2048)
            let n = slot.withUnsafeMutableBytes { write($0) }
            if n > 0 { datagrams.append((Array(slot[0..<n]), address, source)) }
        }
        func send(_ bytes: UnsafeRawBufferPointer, to address: TransportAddress, from source: TransportAddress?) {
            datagrams.append((Array(bytes), address, source))
        }
    }

    struct Node {
        let id: String
        let address: TransportAddress
        let certificate: DTLSCertificate
        let router: RoomRouter
        let output = Capture()
        let stem = ICECredentials.randomICEString(length: 8)
        let password = ICECredentials.randomICEString(length: 24)

        init(_ id: String, port: UInt16) throws {
            self.id = id
            address = TransportAddress(ipv4: 0x7F00_0001, port: port)
            certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
            router = RoomRouter(certificate: certificate, workerIndex: 0, wallClock: { NTPTimestamp(rawValue: 0) })
        }

        func link(to peer: Node) -> NodeRelayLink {
            NodeRelayLink(
                node: peer.id, isClient: id < peer.id,
                localCredentials: ICECredentials(ufrag: stem + "x" + peer.id, password: password),
                remoteCredentials: ICECredentials(ufrag: peer.stem + "x" + id, password: peer.password),
                remoteFingerprint: peer.certificate.fingerprint(.sha256), remote: peer.address, local: address, slot: 1)
        }
    }

    /// Runs both routers for `seconds` of virtual time, delivering what
    /// each sends to the other (when addressed to it).
    func run(_ a: Node, _ b: Node, from start: Instant, seconds: Int, until done: () -> Bool) -> Bool {
        var now = start
        let end = start + .seconds(Int64(seconds))
        while now < end {
            if done() { return true }
            for (node, peer) in [(a, b), (b, a)] {
                if let d = node.router.nextDeadline(), d <= now { node.router.timeout(now: now, output: node.output) }
                node.router.flushAll(output: node.output)
                let out = node.output.datagrams
                node.output.datagrams = []
                for d in out where d.to == peer.address {
                    var bytes = d.bytes
                    bytes.withUnsafeMutableBytes {
                        peer.router.receive($0, from: node.address, to: nil, now: now, output: peer.output)
                    }
                }
            }
            now = now + .milliseconds(5)
        }
        return done()
    }

    @Test func theLowerNodeConnectsAsClientAndBothEndsReachConnected() throws {
        let a = try Node("node-a", port: 4000)
        let b = try Node("node-b", port: 5000)
        let start = Instant(nanoseconds: 1_000_000_000)
        a.router.setNodeRelays([a.link(to: b)], now: start, output: a.output)
        b.router.setNodeRelays([b.link(to: a)], now: start, output: b.output)
        #expect(a.router.nodeRelayCounts == (1, 0))
        let up = run(a, b, from: start, seconds: 10) {
            a.router.nodeRelayCounts == (1, 1) && b.router.nodeRelayCounts == (1, 1)
        }
        #expect(up, "a \(a.router.nodeRelayCounts) b \(b.router.nodeRelayCounts)")
    }
}
