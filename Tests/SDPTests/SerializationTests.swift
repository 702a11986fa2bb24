import Foundation
import Testing
import Wire

@testable import SDP

private func pt(_ v: UInt8) -> PayloadType { PayloadType(rawValue: v)! }

/// The answer our SFU would write for a simulcast publisher: every line
/// is specified here, so serialisation must give exactly `expectedText`.
func builtAnswer() -> SessionDescription {
    let fingerprint = Fingerprint(algorithm: "sha-256", bytes: (0..<32).map { UInt8($0 * 7 & 0xFF) })
    let audio = MediaDescription(
        media: "audio", formats: ["111"], connection: ConnectionData(address: "0.0.0.0"),
        attributes: [
            .mid("0"), .direction(.recvonly), .rtcpMux, .rtcp(port: 9, address: ConnectionData(address: "0.0.0.0")),
            .rtpmap(RTPMap(payloadType: pt(111), encodingName: "opus", clockRate: 48000, channels: 2)),
            .fmtp(FormatParameters(payloadType: pt(111), parameters: [("minptime", "10"), ("useinbandfec", "1")])),
            .rtcpFeedback(RTCPFeedback(payloadType: pt(111), type: "transport-cc")),
            .extmap(ExtensionMap(id: 4, uri: ExtensionMap.sdesMID)),
            .candidate(
                Candidate(
                    foundation: "1", priority: 2_130_706_431, address: "127.0.0.1", port: 40000,
                    extensions: [.init(name: "generation", value: "0")])),
            .endOfCandidates,
        ])
    let video = MediaDescription(
        media: "video", formats: ["96", "97"], connection: ConnectionData(address: "0.0.0.0"),
        attributes: [
            .mid("1"), .direction(.recvonly), .rtcpMux, .rtcpReducedSize,
            .rtpmap(RTPMap(payloadType: pt(96), encodingName: "VP8", clockRate: 90000)),
            .rtcpFeedback(RTCPFeedback(payloadType: pt(96), type: "nack")),
            .rtcpFeedback(RTCPFeedback(payloadType: pt(96), type: "nack", parameter: "pli")),
            .rtcpFeedback(RTCPFeedback(payloadType: nil, type: "ccm", parameter: "fir")),
            .rtpmap(RTPMap(payloadType: pt(97), encodingName: "rtx", clockRate: 90000)),
            .fmtp(FormatParameters(payloadType: pt(97), raw: "apt=96")),
            .extmap(ExtensionMap(id: 4, uri: ExtensionMap.sdesMID)),
            .extmap(ExtensionMap(id: 10, direction: .recvonly, uri: ExtensionMap.sdesRTPStreamID)),
            .extmap(ExtensionMap(id: 200, uri: "urn:example:two-byte", attributes: ["x", "y"])),
            .rid(
                RIDDescription(
                    id: "q", direction: .recv, payloadTypes: [pt(96)],
                    restrictions: [.init(name: "max-width", value: "320"), .init(name: "max-height", value: "180")])),
            .rid(RIDDescription(id: "h", direction: .recv)),
            .rid(RIDDescription(id: "f", direction: .recv)),
            .simulcast(Simulcast(recv: [[.init(rid: "q")], [.init(rid: "h"), .init(rid: "f", paused: true)]])),
            .ssrcGroup(SourceGroup(semantics: "FID", ssrcs: [SSRC(1), SSRC(2)])),
            .ssrc(SourceAttribute(ssrc: SSRC(1), name: "cname", value: "swiftlet")),
            .ssrc(SourceAttribute(ssrc: SSRC(1), name: "msid", value: "stream track")),
            .msid(MediaStreamID(streamID: "stream", trackID: "track")),
            .bundleOnly,
            .other(name: "x-custom", value: "kept as is"),
            .other(name: "x-flag", value: nil),
        ])
    let data = MediaDescription(
        media: "application", proto: "UDP/DTLS/SCTP", formats: ["webrtc-datachannel"],
        attributes: [.mid("2"), .sctpPort(5000), .maxMessageSize(262_144)])
    return SessionDescription(
        origin: Origin(sessionID: 4_611_686_018_427_387_904, sessionVersion: 2),
        attributes: [
            .group(Group(semantics: "BUNDLE", mids: ["0", "1", "2"])), .extmapAllowMixed,
            .msidSemantic(MSIDSemantic(streamIDs: ["stream"])), .iceLite,
            .iceUfrag("abcd"), .icePwd("0123456789abcdefghijkl"), .iceOptions(["trickle", "renomination"]),
            .fingerprint(fingerprint), .setup(.passive),
        ],
        media: [audio, video, data])
}

let expectedText = """
    v=0\r
    o=- 4611686018427387904 2 IN IP4 127.0.0.1\r
    s=-\r
    t=0 0\r
    a=group:BUNDLE 0 1 2\r
    a=extmap-allow-mixed\r
    a=msid-semantic: WMS stream\r
    a=ice-lite\r
    a=ice-ufrag:abcd\r
    a=ice-pwd:0123456789abcdefghijkl\r
    a=ice-options:trickle renomination\r
    a=fingerprint:sha-256 00:07:0E:15:1C:23:2A:31:38:3F:46:4D:54:5B:62:69:70:77:7E:85:8C:93:9A:A1:A8:AF:B6:BD:C4:CB:D2:D9\r
    a=setup:passive\r
    m=audio 9 UDP/TLS/RTP/SAVPF 111\r
    c=IN IP4 0.0.0.0\r
    a=mid:0\r
    a=recvonly\r
    a=rtcp-mux\r
    a=rtcp:9 IN IP4 0.0.0.0\r
    a=rtpmap:111 opus/48000/2\r
    a=fmtp:111 minptime=10;useinbandfec=1\r
    a=rtcp-fb:111 transport-cc\r
    a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid\r
    a=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host generation 0\r
    a=end-of-candidates\r
    m=video 9 UDP/TLS/RTP/SAVPF 96 97\r
    c=IN IP4 0.0.0.0\r
    a=mid:1\r
    a=recvonly\r
    a=rtcp-mux\r
    a=rtcp-rsize\r
    a=rtpmap:96 VP8/90000\r
    a=rtcp-fb:96 nack\r
    a=rtcp-fb:96 nack pli\r
    a=rtcp-fb:* ccm fir\r
    a=rtpmap:97 rtx/90000\r
    a=fmtp:97 apt=96\r
    a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid\r
    a=extmap:10/recvonly urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id\r
    a=extmap:200 urn:example:two-byte x y\r
    a=rid:q recv pt=96;max-width=320;max-height=180\r
    a=rid:h recv\r
    a=rid:f recv\r
    a=simulcast:recv q;h,~f\r
    a=ssrc-group:FID 1 2\r
    a=ssrc:1 cname:swiftlet\r
    a=ssrc:1 msid:stream track\r
    a=msid:stream track\r
    a=bundle-only\r
    a=x-custom:kept as is\r
    a=x-flag\r
    m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r
    a=mid:2\r
    a=sctp-port:5000\r
    a=max-message-size:262144\r

    """

@Suite struct SerializationTests {
    @Test func builtDescriptionSerialisesExactlyAsSpecified() {
        #expect(builtAnswer().text == expectedText)
    }

    @Test func buildSerializeParseSerializeGivesIdenticalBytes() throws {
        let first = builtAnswer().bytes
        let parsed = try SessionDescription.parse(first.span.bytes)
        #expect(parsed == builtAnswer())
        #expect(parsed.bytes == first)
    }

    @Test func everyLineEndsInCRLF() {
        let bytes = builtAnswer().bytes
        for (i, b) in bytes.enumerated() where b == 0x0A {
            #expect(i > 0 && bytes[i - 1] == 0x0D)
        }
        #expect(bytes.suffix(2) == [0x0D, 0x0A])
    }

    @Test func parsesLFOnlyLineEndingsToTheSameValue() throws {
        let lfOnly = expectedText.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(try SessionDescription.parse(lfOnly) == builtAnswer())
    }

    @Test func unknownLinesAndAttributesKeepTheirOrder() throws {
        let text =
            "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\ni=session info\r\nt=0 0\r\na=zzz:1\r\na=aaa\r\n"
            + "m=audio 9 RTP/AVP 0\r\ni=media info\r\nb=AS:64\r\na=yyy:2\r\na=rtcp-mux:odd\r\na=bbb\r\n"
        let sdp = try SessionDescription.parse(text)
        #expect(sdp.otherLines == [OtherLine(type: UInt8(ascii: "i"), value: "session info")])
        #expect(sdp.attributes == [.other(name: "zzz", value: "1"), .other(name: "aaa", value: nil)])
        #expect(
            sdp.media[0].attributes == [
                .other(name: "yyy", value: "2"), .other(name: "rtcp-mux", value: "odd"),
                .other(name: "bbb", value: nil),
            ])
        #expect(sdp.media[0].bandwidths == [Bandwidth(type: "AS", value: 64)])
        #expect(sdp.text == text)
    }
}
