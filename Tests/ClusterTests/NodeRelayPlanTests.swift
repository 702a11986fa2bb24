import Testing

@testable import Cluster

/// `NodeRelayPlan`: both ends of a node pair compute matching halves of
/// one relay transport from the two records, and nodes without relay
/// parameters (or this node) get none.
@Suite struct NodeRelayPlanTests {
    func record(_ name: String, ufrag: String?, address: String = "127.0.0.1:10000") -> NodeRecord {
        NodeRecord(
            id: NodeID(name: name, nonce: 1), httpAddress: "http://127.0.0.1:8080", relayAddress: address,
            relay: ufrag.map { NodeRelayParameters(ufrag: $0, password: "p\($0)passwordpassword", fingerprint: "sha-256 \($0)") })
    }

    @Test func bothEndsOfAPairAgree() throws {
        let a = record("a", ufrag: "AAAAAAAA", address: "10.0.0.1:10000")
        let b = record("b", ufrag: "BBBBBBBB", address: "10.0.0.2:10000")
        let fromA = try #require(NodeRelayPlan.peers(of: a, among: [a, b]).first)
        let fromB = try #require(NodeRelayPlan.peers(of: b, among: [a, b]).first)
        #expect(fromA.node == b.id && fromB.node == a.id)
        // The lower id is the client, the other the server.
        #expect(fromA.isClient && !fromB.isClient)
        #expect(fromA.localUfrag == fromB.remoteUfrag && fromB.localUfrag == fromA.remoteUfrag)
        #expect(fromA.localPassword == fromB.remotePassword && fromB.localPassword == fromA.remotePassword)
        #expect(fromA.remoteFingerprint == "sha-256 BBBBBBBB" && fromB.remoteFingerprint == "sha-256 AAAAAAAA")
        #expect(fromA.remoteAddress == "10.0.0.2:10000" && fromB.remoteAddress == "10.0.0.1:10000")
    }

    @Test func eachPeerGetsItsOwnLocalUfrag() {
        let a = record("a", ufrag: "AAAAAAAA")
        let peers = NodeRelayPlan.peers(of: a, among: [a, record("b", ufrag: "B1B1B1B1"), record("c", ufrag: "C1C1C1C1")])
        #expect(peers.count == 2)
        #expect(Set(peers.map(\.localUfrag)).count == 2)
        // ICE characters only (RFC 8445 section 5.3), stem first.
        let ice = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        #expect(peers.allSatisfy { $0.localUfrag.hasPrefix("AAAAAAAA") && $0.localUfrag.allSatisfy(ice.contains) })
    }

    @Test func nodesWithoutRelayParametersAreLeftOut() {
        let a = record("a", ufrag: "AAAAAAAA")
        #expect(NodeRelayPlan.peers(of: a, among: [a, record("b", ufrag: nil)]).isEmpty)
        #expect(NodeRelayPlan.peers(of: record("c", ufrag: nil), among: [a]).isEmpty)
        #expect(NodeRelayPlan.peers(of: a, among: [a, record("d", ufrag: "DDDDDDDD", address: "")]).isEmpty)
    }

    @Test func aRecordWithRelayParametersRoundTrips() {
        let a = record("a", ufrag: "AAAAAAAA")
        #expect(NodeRecord(decoding: a.encoded()) == a)
    }
}
