import DTLS
import ICE
import SDP
import Testing
import Wire

@testable import Negotiation

@Suite struct RemoteTransportParametersTests {
    @Test func readsChromiumTransportFromTheTaggedSection() throws {
        let p = try RemoteTransportParameters(from: Fixture.description("chromium-publish-simulcast.sdp"), as: .offer)
        #expect(p.credentials == ICECredentials(ufrag: "IpgE", password: "STmS0SwgywDm1aDF0cYt8G7K"))
        #expect(p.fingerprints.count == 1)
        #expect(p.fingerprints.first?.algorithm == .sha256)
        #expect(p.fingerprints.first?.digest.prefix(3) == [0x61, 0x30, 0xDD])
        #expect(p.setup == .actpass)
        #expect(p.bundle == ["0", "1"])
        #expect(!p.isICELite)
        #expect(!p.endOfCandidates)
        // Four UDP host candidates of the audio section; the four TCP ones are skipped.
        #expect(p.candidates.count == 4)
        #expect(p.candidates.allSatisfy { $0.kind == .host && $0.transport == .udp })
        #expect(p.candidates.first?.address == TransportAddress(ipv4: 127, 0, 0, 1, port: 59806))
        #expect(p.candidates.first?.priority == 2_122_194_687)
        #expect(p.candidates.first?.foundation == "1928388840")
        #expect(p.candidates[2].address == TransportAddress(ipv6: 0, 1, port: 45653))
        #expect(p.candidates[3].address == TransportAddress(ipv6: 0xFD00_0000_0000_0000, 2, port: 59624))
    }

    @Test func readsAiortcsThreeFingerprintsAndEndOfCandidates() throws {
        let p = try RemoteTransportParameters(from: Fixture.description("aiortc-offer.sdp"), as: .offer)
        #expect(p.fingerprints.map(\.algorithm) == [.sha256, .sha384, .sha512])
        #expect(p.credentials.ufrag == "MAol")
        #expect(p.endOfCandidates)
        #expect(
            p.candidates == [
                ICECandidate(
                    foundation: "16572de626da4e5384a0ce2d0d93678a", priority: 2_130_706_431,
                    address: TransportAddress(ipv4: 127, 0, 0, 1, port: 36289), kind: .host)
            ])
    }

    @Test func inheritsSessionLevelCredentialsAndFingerprint() throws {
        var d = try Fixture.description("aiortc-offer.sdp")
        let moved: [Attribute] = [
            .iceUfrag("SeSs"), .icePwd("sessionlevelpassword00"),
            .fingerprint(Fingerprint(algorithm: "sha-256", bytes: Array(repeating: 0xAB, count: 32))), .setup(.active),
        ]
        d = Fixture.removing(
            {
                switch $0 {
                case .iceUfrag, .icePwd, .fingerprint, .setup: true
                default: false
                }
            }, from: d)
        d.attributes += moved
        let p = try RemoteTransportParameters(from: d, as: .offer)
        #expect(p.credentials == ICECredentials(ufrag: "SeSs", password: "sessionlevelpassword00"))
        #expect(p.fingerprints == [CertificateFingerprint(algorithm: .sha256, digest: Array(repeating: 0xAB, count: 32))!])
        #expect(p.setup == .active)
    }

    @Test func skipsFingerprintsOfUnknownHashFunctions() throws {
        var d = Fixture.removing(
            { if case .fingerprint = $0 { true } else { false } }, from: try Fixture.description("aiortc-offer.sdp"))
        d.media[0].attributes.append(.fingerprint(Fingerprint(algorithm: "md5", bytes: Array(repeating: 1, count: 16))))
        #expect(throws: NegotiationError.missingFingerprint(mid: "0")) { try RemoteTransportParameters(from: d, as: .offer) }
        d.media[0].attributes.append(.fingerprint(Fingerprint(algorithm: "sha-1", bytes: Array(repeating: 2, count: 20))))
        let p = try RemoteTransportParameters(from: d, as: .offer)
        #expect(p.fingerprints.map(\.algorithm) == [.sha1])
    }

    @Test func convertsServerReflexiveAndRelayCandidatesAndSkipsTheRest() throws {
        var d = Fixture.removing(
            { if case .candidate = $0 { true } else { false } }, from: try Fixture.description("aiortc-offer.sdp"))
        d.media[0].attributes += [
            .candidate(
                Candidate(
                    foundation: "1", priority: 100, address: "198.51.100.7", port: 5000, type: .serverReflexive,
                    relatedAddress: "10.0.0.2", relatedPort: 6000)),
            .candidate(Candidate(foundation: "2", priority: 50, address: "2001:db8::9", port: 3478, type: .relayed)),
            .candidate(Candidate(foundation: "3", priority: 90, address: "203.0.113.4", port: 7000, type: .peerReflexive)),
            // Skipped: mDNS name, TCP, RTCP component, unknown type, bad address.
            .candidate(Candidate(foundation: "4", priority: 1, address: "abc.local", port: 1)),
            .candidate(Candidate(foundation: "5", transport: "TCP", priority: 1, address: "192.0.2.1", port: 9)),
            .candidate(Candidate(foundation: "6", component: 2, priority: 1, address: "192.0.2.1", port: 2)),
            .candidate(Candidate(foundation: "7", priority: 1, address: "192.0.2.1", port: 3, type: .init(rawValue: "weird"))),
            .candidate(Candidate(foundation: "8", priority: 1, address: "192.0.2.300", port: 4)),
        ]
        let p = try RemoteTransportParameters(from: d, as: .offer)
        #expect(
            p.candidates == [
                ICECandidate(
                    foundation: "1", priority: 100, address: TransportAddress(ipv4: 198, 51, 100, 7, port: 5000),
                    kind: .serverReflexive, relatedAddress: TransportAddress(ipv4: 10, 0, 0, 2, port: 6000)),
                ICECandidate(
                    foundation: "2", priority: 50, address: TransportAddress(ipv6: 0x2001_0DB8_0000_0000, 9, port: 3478),
                    kind: .relayed),
                ICECandidate(
                    foundation: "3", priority: 90, address: TransportAddress(ipv4: 203, 0, 113, 4, port: 7000),
                    kind: .peerReflexive),
            ])
    }

    @Test func refusesAnOfferWithoutBundle() throws {
        let d = Fixture.removing(
            { if case .group = $0 { true } else { false } }, from: try Fixture.description("chromium-sendrecv.sdp"))
        #expect(throws: NegotiationError.missingBundle) { try RemoteTransportParameters(from: d, as: .offer) }
    }

    @Test func refusesABundleNamingAnUnknownMID() throws {
        var d = try Fixture.description("aiortc-offer.sdp")
        d.attributes[0] = .group(Group(semantics: "BUNDLE", mids: ["0", "7"]))
        #expect(throws: NegotiationError.bundleNamesUnknownMID("7")) { try RemoteTransportParameters(from: d, as: .offer) }
    }

    @Test func refusesAnOfferWithoutFingerprint() throws {
        let d = Fixture.removing(
            { if case .fingerprint = $0 { true } else { false } }, from: try Fixture.description("chromium-publish-simulcast.sdp")
        )
        #expect(throws: NegotiationError.missingFingerprint(mid: "0")) { try RemoteTransportParameters(from: d, as: .offer) }
    }

    @Test func refusesAnOfferWithoutICECredentials() throws {
        let d = Fixture.removing(
            { if case .icePwd = $0 { true } else { false } }, from: try Fixture.description("chromium-publish-simulcast.sdp"))
        #expect(throws: NegotiationError.missingICECredentials(mid: "0")) { try RemoteTransportParameters(from: d, as: .offer) }
    }

    @Test func refusesAnOfferWithoutRTCPMux() throws {
        var d = try Fixture.description("chromium-publish-simulcast.sdp")
        d.media[1].attributes.removeAll { $0 == .rtcpMux }
        #expect(throws: NegotiationError.rtcpMuxRequired(mid: "1")) { try RemoteTransportParameters(from: d, as: .offer) }
    }

    @Test func refusesPassiveInAnOfferAndAnythingButActiveInAnAnswer() throws {
        let d = try Fixture.description("chromium-publish-simulcast.sdp")
        func with(_ role: SetupRole) -> SessionDescription {
            var x = Fixture.removing({ if case .setup = $0 { true } else { false } }, from: d)
            for i in x.media.indices { x.media[i].attributes.append(.setup(role)) }
            return x
        }
        #expect(throws: NegotiationError.setupRoleConflict(mid: "0", .passive)) {
            try RemoteTransportParameters(from: with(.passive), as: .offer)
        }
        #expect(throws: NegotiationError.setupRoleConflict(mid: "0", .holdconn)) {
            try RemoteTransportParameters(from: with(.holdconn), as: .offer)
        }
        #expect(try RemoteTransportParameters(from: with(.active), as: .offer).setup == .active)
        #expect(throws: NegotiationError.setupRoleConflict(mid: "0", .actpass)) {
            try RemoteTransportParameters(from: with(.actpass), as: .answer)
        }
        #expect(throws: NegotiationError.setupRoleConflict(mid: "0", .passive)) {
            try RemoteTransportParameters(from: with(.passive), as: .answer)
        }
        #expect(try RemoteTransportParameters(from: with(.active), as: .answer).setup == .active)
        let none = Fixture.removing({ if case .setup = $0 { true } else { false } }, from: d)
        #expect(throws: NegotiationError.missingSetup(mid: "0")) { try RemoteTransportParameters(from: none, as: .offer) }
    }

    @Test func refusesMissingAndDuplicateMIDs() throws {
        var d = try Fixture.description("aiortc-offer.sdp")
        d.media[1].attributes.removeAll { if case .mid = $0 { true } else { false } }
        #expect(throws: NegotiationError.missingMID(index: 1)) { try RemoteTransportParameters(from: d, as: .offer) }
        d.media[1].attributes.append(.mid("0"))
        #expect(throws: NegotiationError.duplicateMID("0")) { try RemoteTransportParameters(from: d, as: .offer) }
    }

    @Test func reasonsNameTheSection() {
        #expect(NegotiationError.rtcpMuxRequired(mid: "1").reason == "m-section 1: a=rtcp-mux is required")
        #expect(
            NegotiationError.setupRoleConflict(mid: "0", .passive).reason
                == "m-section 0: a=setup:passive conflicts with our DTLS server role (we are passive)")
    }
}

@Suite struct IPAddressTextTests {
    @Test func parsesIPv4AndIPv6Literals() {
        #expect(TransportAddress(ipLiteral: "192.0.2.1", port: 1) == TransportAddress(ipv4: 192, 0, 2, 1, port: 1))
        #expect(TransportAddress(ipLiteral: "::1", port: 2) == TransportAddress(ipv6: 0, 1, port: 2))
        #expect(TransportAddress(ipLiteral: "::", port: 2) == TransportAddress(ipv6: 0, 0, port: 2))
        #expect(TransportAddress(ipLiteral: "fe80::", port: 2) == TransportAddress(ipv6: 0xFE80_0000_0000_0000, 0, port: 2))
        #expect(
            TransportAddress(ipLiteral: "2001:DB8:0:0:1:2:3:4", port: 3)
                == TransportAddress(ipv6: 0x2001_0DB8_0000_0000, 0x0001_0002_0003_0004, port: 3))
        #expect(
            TransportAddress(ipLiteral: "::ffff:192.0.2.1", port: 4)
                == TransportAddress(ipv6: 0, 0x0000_FFFF_C000_0201, port: 4))
    }

    @Test func refusesMalformedLiterals() {
        for bad in [
            "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1..2.3", "a.b.c.d", "1.2.3.4 ", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9",
            "1::2::3", ":1::", "12345::", "g::", "::1.2.3.4.5", "1.2.3.4::", "fe80::1%eth0", "[::1]", "host.local",
            "1:2:3:4:5:6:7::8",
        ] {
            #expect(TransportAddress(ipLiteral: bad, port: 0) == nil, "\(bad)")
        }
    }

    @Test func writesLiteralsBack() {
        #expect(TransportAddress(ipv4: 192, 0, 2, 1, port: 1).ipLiteral == "192.0.2.1")
        #expect(TransportAddress(ipv6: 0x2001_0DB8_0000_0000, 1, port: 1).ipLiteral == "2001:db8:0:0:0:0:0:1")
    }
}
