import DTLS
import Foundation
import ICE
import MediaRouter
import NetIO
import Testing
import Wire

@testable import MediaWorker

/// Relay transports between two nodes' media planes (issue #15, the
/// cascade): real worker threads and UDP sockets on loopback; the lower
/// node is the ICE controlling agent and DTLS client, the other ICE-lite
/// and DTLS server; both reach connected (DTLS-SRTP keys) on each side.
@Suite(.serialized) struct NodeRelayTransportTests {
    private func waitFor(seconds: Double = 10, _ done: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if done() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return done()
    }

    struct Node {
        let id: String
        let plane: MediaPlane
        let certificate: DTLSCertificate
        let stem: String
        let password = ICECredentials.randomICEString(length: 24)
        var address: TransportAddress { plane.relayAddress! }
    }

    func node(_ id: String, ip: String) throws -> Node {
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let plane = try MediaPlane(count: 1, bindIP: ip, firstPort: 0, certificate: certificate)
        return Node(id: id, plane: plane, certificate: certificate, stem: ICECredentials.randomICEString(length: 8))
    }

    /// What `Cluster.NodeRelayPlan` computes from the two records.
    func link(from me: Node, to peer: Node, ufragSuffix: (String) -> String) -> NodeRelayLink {
        NodeRelayLink(
            node: peer.id, isClient: me.id < peer.id,
            localCredentials: ICECredentials(ufrag: me.stem + ufragSuffix(peer.id), password: me.password),
            remoteCredentials: ICECredentials(ufrag: peer.stem + ufragSuffix(me.id), password: peer.password),
            remoteFingerprint: peer.certificate.fingerprint(.sha256), remote: peer.address, local: me.address)
    }

    @Test(.timeLimit(.minutes(1)))
    func twoNodesConnectTheirRelayTransport() throws {
        let a = try node("node-a", ip: "127.0.0.1")
        defer { a.plane.stop() }
        let b = try node("node-b", ip: "127.0.0.1")
        defer { b.plane.stop() }
        let suffix = { (id: String) in String(id.suffix(1)) + "relay" }
        a.plane.setNodeRelays([link(from: a, to: b, ufragSuffix: suffix)])
        b.plane.setNodeRelays([link(from: b, to: a, ufragSuffix: suffix)])
        let up = waitFor { a.plane.nodeRelayCounts == (1, 1) && b.plane.nodeRelayCounts == (1, 1) }
        #expect(
            up,
            "a \(a.plane.nodeRelayCounts) b \(b.plane.nodeRelayCounts) \(a.plane.snapshots()[0].counters.failures) \(b.plane.snapshots()[0].counters.failures)"
        )
    }

    @Test(.timeLimit(.minutes(1)))
    func aWrongFingerprintNeverConnectsAndAGoneNodeIsClosed() throws {
        let a = try node("node-a", ip: "127.0.0.1")
        defer { a.plane.stop() }
        let b = try node("node-b", ip: "127.0.0.1")
        defer { b.plane.stop() }
        let suffix = { (id: String) in String(id.suffix(1)) + "relay" }
        var forged = link(from: a, to: b, ufragSuffix: suffix)
        forged.remoteFingerprint = try DTLSCertificate.generate(issuedAt: 1_790_000_000).fingerprint(.sha256)
        a.plane.setNodeRelays([forged])
        b.plane.setNodeRelays([link(from: b, to: a, ufragSuffix: suffix)])
        Thread.sleep(forTimeInterval: 2)
        #expect(a.plane.nodeRelayCounts.connected == 0)
        // The peer leaves the plan: its transport goes.
        a.plane.setNodeRelays([])
        #expect(waitFor { a.plane.nodeRelayCounts == (0, 0) })
    }
}
