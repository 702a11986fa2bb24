import ICE
import SDP
import Wire

// `a=candidate` (SDP's `Candidate`, text as written) to and from ICE's
// `ICECandidate` (typed, what the agents use).

extension ICECandidate {
    /// The ICE value of an SDP candidate, or nil when we cannot use it:
    /// not UDP (a client's RFC 6544 TCP candidates are of no use to us:
    /// ICE-lite never connects out, and an active client's connection
    /// reaches our passive candidate as a peer-reflexive one), a type other
    /// than host/srflx/prflx/relay (RFC 8445 section 5.1.1), a component
    /// other than 1 (with rtcp-mux there is only RTP's, RFC 5761 section
    /// 5.1.3), or an address that is not an IP literal (mDNS `.local`
    /// names are not resolved).
    package init?(sdp candidate: Candidate) {
        guard candidate.transport.lowercased() == "udp", candidate.component == ICECandidate.rtpComponent,
            let kind = ICECandidate.Kind(rawValue: candidate.type.rawValue),
            let address = TransportAddress(ipLiteral: candidate.address, port: candidate.port)
        else { return nil }
        var related: TransportAddress?
        if let raddr = candidate.relatedAddress, let rport = candidate.relatedPort {
            related = TransportAddress(ipLiteral: raddr, port: rport)
        }
        self.init(
            foundation: candidate.foundation, component: candidate.component, transport: .udp,
            priority: candidate.priority, address: address, kind: kind, relatedAddress: related)
    }
}

extension Candidate {
    /// The `a=candidate` value of one of our candidates. Related address and
    /// port are written when known (RFC 8839 section 5.1 requires them for
    /// srflx, prflx and relay); a TCP candidate says `tcptype passive`
    /// (RFC 6544 section 4.5).
    package init(_ candidate: ICECandidate) {
        let tcp = candidate.transport == .tcpPassive
        self.init(
            foundation: candidate.foundation, component: candidate.component, transport: tcp ? "tcp" : "udp",
            priority: candidate.priority, address: candidate.address.ipLiteral, port: candidate.address.port,
            type: CandidateType(rawValue: candidate.kind.rawValue),
            relatedAddress: candidate.relatedAddress?.ipLiteral, relatedPort: candidate.relatedAddress?.port,
            tcpType: tcp ? "passive" : nil)
    }
}
