import Testing
import Wire

@testable import SDP

private let head = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
private func pt(_ v: UInt8) -> PayloadType { PayloadType(rawValue: v)! }

/// Parses `lines` as the attributes of one video section.
private func attributes(_ lines: String...) throws -> [Attribute] {
    let text = head + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n" + lines.map { $0 + "\r\n" }.joined()
    return try #require(try SessionDescription.parse(text).media.first).attributes
}

@Suite struct AttributeParsingTests {
    @Test func candidateWithRelatedAddressTCPTypeAndExtensions() throws {
        let a = try attributes(
            "a=candidate:842163049 1 tcp 1677729535 203.0.113.7 9 typ srflx raddr 10.0.0.2 rport 50000 tcptype passive generation 3 ufrag EsAw network-id 1"
        )
        let expected = Candidate(
            foundation: "842163049", component: 1, transport: "tcp", priority: 1_677_729_535,
            address: "203.0.113.7", port: 9, type: .serverReflexive,
            relatedAddress: "10.0.0.2", relatedPort: 50000, tcpType: "passive",
            extensions: [
                .init(name: "generation", value: "3"), .init(name: "ufrag", value: "EsAw"),
                .init(name: "network-id", value: "1"),
            ])
        #expect(a == [.candidate(expected)])
        #expect(expected.generation == 3)
        #expect(expected.ufrag == "EsAw")
    }

    @Test func candidateFromTrickleString() throws {
        let c = try Candidate.parse(attributeValue: "1 1 UDP 2122252543 fe80::1 55555 typ relay raddr :: rport 0")
        #expect(c.type == .relayed)
        #expect(c.transport == "UDP")
        #expect(c.address == "fe80::1")
        #expect(c.relatedAddress == "::")
        #expect(c.relatedPort == 0)
        #expect(c.value == "1 1 UDP 2122252543 fe80::1 55555 typ relay raddr :: rport 0")
    }

    @Test func ridWithPayloadTypesAndRestrictions() throws {
        let a = try attributes("a=rid:hi-1_x send pt=96,97;max-width=1280;max-height=720;max-fps=30;max-br=2500000;depend=lo")
        let r = RIDDescription(
            id: "hi-1_x", direction: .send, payloadTypes: [pt(96), pt(97)],
            restrictions: [
                .init(name: "max-width", value: "1280"), .init(name: "max-height", value: "720"),
                .init(name: "max-fps", value: "30"), .init(name: "max-br", value: "2500000"),
                .init(name: "depend", value: "lo"),
            ])
        #expect(a == [.rid(r)])
        #expect(r.numericRestriction("max-width") == 1280)
        #expect(r.numericRestriction("max-pps") == nil)
    }

    @Test func simulcastWithAlternativesPausedStreamsAndBothDirections() throws {
        let a = try attributes(
            "a=rid:a recv", "a=rid:b recv", "a=rid:c recv", "a=rid:x send",
            "a=simulcast:recv a,~b;c send ~x")
        let expected = Simulcast(
            send: [[.init(rid: "x", paused: true)]],
            recv: [[.init(rid: "a"), .init(rid: "b", paused: true)], [.init(rid: "c")]])
        #expect(a.last == .simulcast(expected))
        #expect(expected.text == "send ~x recv a,~b;c")
        #expect(expected.recvRIDs == ["a", "c"])
    }

    @Test func extmapWithDirectionAndAttributes() throws {
        let a = try attributes("a=extmap:7/sendonly urn:ietf:params:rtp-hdrext:encrypt urn:x attr2")
        #expect(
            a == [
                .extmap(
                    ExtensionMap(
                        id: 7, direction: .sendonly, uri: "urn:ietf:params:rtp-hdrext:encrypt",
                        attributes: ["urn:x", "attr2"]))
            ])
    }

    @Test func formatParametersKeepRawTextAndReadPairs() throws {
        let a = try attributes("a=fmtp:96 profile-level-id=42e01f; packetization-mode=1;;flag")
        let f = FormatParameters(payloadType: pt(96), raw: "profile-level-id=42e01f; packetization-mode=1;;flag")
        #expect(a == [.fmtp(f)])
        #expect(
            f.parameters == [
                .init(name: "profile-level-id", value: "42e01f"),
                .init(name: "packetization-mode", value: "1"), .init(name: "flag", value: nil),
            ])
        #expect(f["PACKETIZATION-MODE"] == "1")
        #expect(f["absent"] == nil)
    }

    @Test func rtcpFeedbackWildcardAndParameters() throws {
        let a = try attributes("a=rtcp-fb:* ccm tmmbr smaxpr=120", "a=rtcp-fb:96 goog-remb")
        #expect(
            a == [
                .rtcpFeedback(RTCPFeedback(payloadType: nil, type: "ccm", parameter: "tmmbr smaxpr=120")),
                .rtcpFeedback(RTCPFeedback(payloadType: pt(96), type: "goog-remb")),
            ])
    }

    @Test func ssrcAttributesAndGroups() throws {
        let a = try attributes(
            "a=ssrc-group:SIM 1 2 3", "a=ssrc-group:FEC-FR 1 4",
            "a=ssrc:1 msid:stream track", "a=ssrc:4294967295 x-flag")
        #expect(
            a == [
                .ssrcGroup(SourceGroup(semantics: "SIM", ssrcs: [SSRC(1), SSRC(2), SSRC(3)])),
                .ssrcGroup(SourceGroup(semantics: "FEC-FR", ssrcs: [SSRC(1), SSRC(4)])),
                .ssrc(SourceAttribute(ssrc: SSRC(1), name: "msid", value: "stream track")),
                .ssrc(SourceAttribute(ssrc: SSRC(4_294_967_295), name: "x-flag")),
            ])
        let sdp = try SessionDescription.parse(head + "m=video 9 RTP/AVP 96\r\na=ssrc:5 cname:c5\r\na=ssrc:5 msid:s t\r\n")
        #expect(sdp.media[0].sourceAttribute("cname", of: SSRC(5)) == "c5")
        #expect(sdp.media[0].sourceAttribute("msid", of: SSRC(5)) == "s t")
        #expect(sdp.media[0].sourceAttribute("cname", of: SSRC(6)) == nil)
    }

    @Test func fingerprintsOfEveryHashAcceptEitherCase() throws {
        let sha1 = (0..<20).map { _ in "ab" }.joined(separator: ":")
        let sha512 = (0..<64).map { _ in "0F" }.joined(separator: ":")
        let a = try attributes("a=fingerprint:SHA-1 \(sha1)", "a=fingerprint:sha-512 \(sha512)")
        #expect(
            a == [
                .fingerprint(Fingerprint(algorithm: "sha-1", bytes: Array(repeating: 0xAB, count: 20))),
                .fingerprint(Fingerprint(algorithm: "sha-512", bytes: Array(repeating: 0x0F, count: 64))),
            ])
        #expect(Fingerprint(algorithm: "sha-1", bytes: Array(repeating: 0xAB, count: 20)).hex == sha1.uppercased())
    }

    @Test func flagsDirectionsAndTransportAttributes() throws {
        let a = try attributes(
            "a=rtcp-mux", "a=rtcp-rsize", "a=bundle-only", "a=end-of-candidates", "a=inactive",
            "a=extmap-allow-mixed", "a=rtcp:9", "a=sctp-port:5000", "a=max-message-size:0")
        #expect(
            a == [
                .rtcpMux, .rtcpReducedSize, .bundleOnly, .endOfCandidates, .direction(.inactive),
                .extmapAllowMixed, .rtcp(port: 9, address: nil), .sctpPort(5000), .maxMessageSize(0),
            ])
    }

    @Test func directionDefaultsToSendRecvAndReverses() throws {
        let sdp = try SessionDescription.parse(head + "m=audio 9 RTP/AVP 0\r\n")
        #expect(sdp.media[0].direction == .sendrecv)
        #expect(Direction.sendonly.reversed == .recvonly)
        #expect(Direction.inactive.reversed == .inactive)
    }
}

@Suite struct InheritanceTests {
    private let text =
        head + "a=ice-ufrag:sess\r\na=ice-pwd:sessionpassword0123456\r\n"
        + "a=fingerprint:sha-256 " + (0..<32).map { _ in "11" }.joined(separator: ":") + "\r\na=setup:actpass\r\n"
        + "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:a\r\n"
        + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:v\r\na=ice-ufrag:med\r\na=ice-pwd:mediapassword0123456789\r\n"
        + "a=fingerprint:sha-384 " + (0..<48).map { _ in "22" }.joined(separator: ":") + "\r\na=setup:active\r\n"

    @Test func mediaWithoutTransportAttributesInheritsTheSessionLevel() throws {
        let sdp = try SessionDescription.parse(text)
        let t = sdp.transport(for: sdp.media[0])
        #expect(t.iceUfrag == "sess")
        #expect(t.icePwd == "sessionpassword0123456")
        #expect(t.fingerprints == [Fingerprint(algorithm: "sha-256", bytes: Array(repeating: 0x11, count: 32))])
        #expect(t.setup == .actpass)
        #expect(sdp.media[0].iceUfrag == nil)
    }

    @Test func mediaLevelTransportAttributesOverrideTheSessionLevel() throws {
        let sdp = try SessionDescription.parse(text)
        let t = sdp.transport(for: sdp.media[1])
        #expect(t.iceUfrag == "med")
        #expect(t.icePwd == "mediapassword0123456789")
        #expect(t.fingerprints.map(\.algorithm) == ["sha-384"])
        #expect(t.setup == .active)
    }
}

@Suite struct RoundTripEdgeTests {
    /// Inputs that are accepted but not in our canonical form: the second
    /// serialisation must equal the first, and the value must not change.
    @Test(arguments: [
        "a=rtpmap:096 VP8/090000",
        "a=candidate:1  1 udp 1 1.2.3.4 5 typ host  generation 0",
        "a=candidate:1 1 udp 1 1.2.3.4 5 typ host generation 0 raddr 0.0.0.0 tcptype so rport 9",
        "a=rid:q  send  ;pt=96;;max-width=5",
        "a=simulcast:recv r send ~q",
        "a=fmtp:96 ",
        "a=ssrc:7  cname:x y",
        "a=x-bare:",
        "a=",
        "a=msid-semantic:WMS",
        "a=fingerprint:Sha-256 " + (0..<32).map { _ in "aa" }.joined(separator: ":"),
        "a=x-combining: \u{301}mark",
        "a=extmap:1 \u{301}uri",
        "a=x-cr:a\rb\r",
        "\u{1}=control type line",
    ])
    func nonCanonicalInputReachesAFixedPoint(line: String) throws {
        let text = head + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rid:q send\r\na=rid:r recv\r\n" + line + "\n"
        let first = try SessionDescription.parse(text)
        let again = try SessionDescription.parse(first.text)
        #expect(again == first)
        #expect(again.text == first.text)
    }
}
