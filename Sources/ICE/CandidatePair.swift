import Wire

/// The addresses of a candidate pair: where the full agent sends from
/// (the local candidate's base; host candidates are their own base) and to.
package struct ICEAddressPair: Hashable, Sendable, CustomStringConvertible {
    package var local: TransportAddress
    package var remote: TransportAddress
    package init(local: TransportAddress, remote: TransportAddress) {
        self.local = local
        self.remote = remote
    }
    package var description: String { "\(local) -> \(remote)" }
}

/// One entry of the checklist (RFC 8445 section 6.1.2).
struct CandidatePair {
    /// RFC 8445 section 6.1.2.6. The Frozen state is not used: with one
    /// component and one data stream every pair starts Waiting (see
    /// README.md).
    enum State: Hashable {
        case waiting
        case inProgress
        case succeeded
        case failed
    }

    var local: ICECandidate
    var remote: ICECandidate
    var priority: UInt64
    var state: State = .waiting
    /// A check with USE-CANDIDATE is outstanding or succeeded (controlling).
    var nominating = false
    /// The controlling peer sent USE-CANDIDATE on this pair (controlled,
    /// RFC 8445 section 7.3.1.5).
    var nominatedByPeer = false

    var addresses: ICEAddressPair { ICEAddressPair(local: local.address, remote: remote.address) }

    init(local: ICECandidate, remote: ICECandidate, role: ICERole) {
        self.local = local
        self.remote = remote
        priority = Self.priority(local: local.priority, remote: remote.priority, role: role)
    }

    /// RFC 8445 section 6.1.2.3: with G the controlling agent's candidate
    /// priority and D the controlled one's,
    /// `2^32 * min(G, D) + 2 * max(G, D) + (G > D ? 1 : 0)`.
    /// Wrapping arithmetic: a hostile priority near 2^32 from the wire must
    /// not trap (legitimate priorities stay below 2^31).
    static func priority(local: UInt32, remote: UInt32, role: ICERole) -> UInt64 {
        let (g, d) = role == .controlling ? (UInt64(local), UInt64(remote)) : (UInt64(remote), UInt64(local))
        return (min(g, d) << 32) &+ 2 &* max(g, d) &+ (g > d ? 1 : 0)
    }
}
