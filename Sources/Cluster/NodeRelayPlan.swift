/// What other nodes need to open a relay transport to this node (issue
/// #15, the cascade; docs/CLUSTER.md): written in the node's record, so
/// fingerprints and ICE credentials travel through Redis and no node-to-node
/// exchange is needed before the transport exists.
package struct NodeRelayParameters: Equatable, Codable, Sendable {
    /// The node's relay ufrag stem; a transport to one peer uses the stem
    /// and a suffix made from the peer's id (`NodeRelayPlan.pairUfrag`).
    package var ufrag: String
    /// The node's relay ICE password (RFC 8445 section 5.3: at least 22
    /// characters), shared by its relay transports.
    package var password: String
    /// The node's DTLS certificate fingerprint, as in SDP
    /// (`sha-256 AB:CD:...`, RFC 8122 section 5).
    package var fingerprint: String

    package init(ufrag: String, password: String, fingerprint: String) {
        self.ufrag = ufrag
        self.password = password
        self.fingerprint = fingerprint
    }
}

/// One relay transport this node keeps to another live node.
package struct NodeRelayPeer: Equatable, Sendable {
    package var node: NodeID
    /// This node has the lower id: it is the controlling ICE agent and the
    /// DTLS client; the other side is ICE-lite and the DTLS server, as the
    /// server is for a browser.
    package var isClient: Bool
    package var localUfrag: String
    package var localPassword: String
    package var remoteUfrag: String
    package var remotePassword: String
    package var remoteFingerprint: String
    /// The peer's relay address, `host:port` (its first media worker).
    package var remoteAddress: String
}

/// Which relay transports a node keeps: one to every other live node that
/// has relay parameters (a full mesh), whatever rooms they share, so a room
/// that grows onto a node finds its relay up. Pure: both ends compute the
/// same pair from the same two records.
///
/// Per node pair, not per room and pair: the nodes' media ports are shared
/// by every transport of a worker and datagrams are told apart by their
/// source address, so two transports between the same two ports could not
/// be. The rooms a pair shares travel over the one transport (each relayed
/// stream has its own SSRC, announced with its room and epoch).
package enum NodeRelayPlan {
    package static func peers(of me: NodeRecord, among nodes: [NodeRecord]) -> [NodeRelayPeer] {
        guard let mine = me.relay else { return [] }
        return nodes.compactMap { other -> NodeRelayPeer? in
            guard other.id != me.id, let theirs = other.relay, !other.relayAddress.isEmpty else { return nil }
            return NodeRelayPeer(
                node: other.id, isClient: me.id < other.id, localUfrag: pairUfrag(stem: mine.ufrag, peer: other.id),
                localPassword: mine.password, remoteUfrag: pairUfrag(stem: theirs.ufrag, peer: me.id),
                remotePassword: theirs.password, remoteFingerprint: theirs.fingerprint, remoteAddress: other.relayAddress)
        }
        .sorted { $0.node < $1.node }
    }

    /// `stem` and eight characters from the peer's id (FNV-1a, 48 bits, in
    /// the ICE character set of RFC 8445 section 5.3): a distinct local
    /// ufrag per peer, so the worker's router tells the peers' checks apart
    /// by ufrag, and both ends compute it without asking each other.
    package static func pairUfrag(stem: String, peer: NodeID) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in peer.rawValue.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var suffix = ""
        for i in 0..<8 { suffix.append(Character(UnicodeScalar(alphabet[Int((hash >> (6 * UInt64(i))) & 63)]))) }
        return stem + suffix
    }
}
