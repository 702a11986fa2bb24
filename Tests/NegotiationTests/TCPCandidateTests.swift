import ICE
import SDP
import Testing
import Wire

@testable import Negotiation

/// Our passive ICE-TCP candidates (RFC 6544 section 4.5) in answers.
@Suite struct TCPCandidateTests {
    static let udp = ICECandidate.host(TransportAddress(ipv4: 192, 0, 2, 10, port: 10000))
    static let tcp = ICECandidate.hostTCPPassive(TransportAddress(ipv4: 192, 0, 2, 10, port: 10000))

    @Test func writesATCPPassiveCandidateLine() {
        let line = Candidate(Self.tcp)
        // RFC 6544 section 4.2: type preference 90, local preference
        // 2^13 * 4 (passive host) + 8191, component 1.
        let priority: UInt32 = 90 << 24 | (4 << 13 | 8191) << 8 | 255
        #expect(
            line.value
                == "\(Self.tcp.foundation) 1 tcp \(priority) 192.0.2.10 10000 typ host tcptype passive")
        #expect(Self.tcp.address.transportProtocol == .tcp)
        // The UDP and TCP candidates of one address are different
        // transport addresses with different foundations (RFC 8445 5.1.1.3).
        #expect(Self.tcp.address != Self.udp.address)
        #expect(Self.tcp.foundation != Self.udp.foundation)
    }

    @Test func tcpRanksBelowEveryUDPHostAndSrflxCandidate() {
        let lowestUDPHost = ICECandidate.priority(kind: .host, localPreference: 0)
        let lowestSrflx = ICECandidate.priority(kind: .serverReflexive, localPreference: 0)
        #expect(Self.tcp.priority < lowestUDPHost)
        #expect(Self.tcp.priority < lowestSrflx)
        #expect(Self.tcp.priority > ICECandidate.priority(kind: .relayed, localPreference: 65535))
    }

    /// A client's TCP candidates are not ours to use (ICE-lite never
    /// connects out): parsing them gives nothing.
    @Test func aRemoteTCPCandidateIsIgnored() throws {
        let active = try Candidate.parse(attributeValue: "1 1 tcp 1518280447 192.0.2.1 9 typ host tcptype active")
        #expect(ICECandidate(sdp: active) == nil)
        // Our own line parses back as TCP, not UDP.
        #expect(ICECandidate(sdp: Candidate(Self.tcp)) == nil)
    }

    @Test func publishAnswerCarriesTheTCPCandidateAfterTheUDPOne() throws {
        let offer = try PublishOffer(Fixture.description("chromium-publish-simulcast.sdp"))
        var local = Fixture.local
        local.candidates = [Self.udp, Self.tcp]
        var answerer = PublishAnswerer(sessionID: 1)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: offer, local: local).text)
        let candidates = answer.media[0].candidates
        #expect(candidates.map(\.transport) == ["udp", "tcp"])
        #expect(candidates.map(\.tcpType) == [nil, "passive"])
        #expect(candidates.map(\.port) == [10000, 10000])
    }
}
