import Testing
import Wire

@testable import SDP

private let head = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"

private func parse(_ text: String) throws(SDPParseError) -> SessionDescription {
    try SessionDescription.parse(text)
}

/// A valid head, then one media section whose 6th line is `line`.
private func mediaWith(_ line: String, media: String = "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n") -> String {
    head + media + line + "\r\n"
}

@Suite struct LimitTests {
    @Test func rejectsTwentyThousandLines() {
        let text = head + String(repeating: "a=x\r\n", count: 20_000)
        #expect(throws: SDPParseError.tooManyLines(line: 10_001)) { try parse(text) }
    }

    @Test func acceptsExactlyTenThousandLines() throws {
        let text = head + String(repeating: "a=x\n", count: 10_000 - 4)
        #expect(try parse(text).attributes.count == 9_996)
    }

    @Test func rejectsAHundredKilobyteLine() {
        let text = head + "a=x-long:" + String(repeating: "A", count: 100_000) + "\r\n"
        #expect(throws: SDPParseError.lineTooLong(line: 5)) { try parse(text) }
    }

    @Test func acceptsALineOfExactlySixteenKibibytesWithCRLF() throws {
        let value = String(repeating: "A", count: SessionDescription.maxLineBytes - 2)
        let sdp = try parse(head + "a=" + value + "\r\n")
        #expect(sdp.attributes == [.other(name: value, value: nil)])
    }

    @Test func rejectsMoreThan256KiB() {
        let bytes = [UInt8](repeating: 0x20, count: SessionDescription.maxBytes + 1)
        #expect(throws: SDPParseError.tooLarge(byteCount: 262_145)) { try SessionDescription.parse(bytes.span.bytes) }
    }

    @Test func rejectsANulByteWithItsLine() {
        #expect(throws: SDPParseError.nulByte(line: 3)) { try parse("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=\u{0}\r\n") }
    }

    @Test func rejectsInvalidUTF8() {
        var bytes = Array(head.utf8)
        bytes += Array("a=x:".utf8) + [0xC3, 0x28] + [0x0D, 0x0A]
        #expect(throws: SDPParseError.invalidUTF8(line: 5)) { try SessionDescription.parse(bytes.span.bytes) }
    }

    @Test func rejectsEmptyInput() {
        #expect(throws: SDPParseError.missingVersion) { try parse("") }
        #expect(throws: SDPParseError.missingVersion) { try parse("\r\n\r\n") }
    }
}

@Suite struct StructureErrorTests {
    @Test func rejectsMissingVersion() {
        #expect(throws: SDPParseError.missingVersion) { try parse("o=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\n") }
    }

    @Test func rejectsVersionOtherThanZero() {
        #expect(throws: SDPParseError.malformed(.version, line: 1)) { try parse("v=1\r\n") }
    }

    @Test func rejectsALineWithoutEquals() {
        #expect(throws: SDPParseError.missingEquals(line: 5)) { try parse(head + "a:rtcp-mux\r\n") }
        #expect(throws: SDPParseError.missingEquals(line: 5)) { try parse(head + "x\r\n") }
        #expect(throws: SDPParseError.missingEquals(line: 1)) { try parse("hello world") }
    }

    @Test func lineNumbersCountBlankLinesWithEitherEnding() {
        #expect(throws: SDPParseError.malformed(.mid, line: 7)) {
            try parse("v=0\no=- 1 1 IN IP4 0.0.0.0\n\ns=-\r\nm=video 9 RTP/AVP 96\n\r\na=mid:\n")
        }
    }

    @Test func rejectsMissingOriginOrSessionName() {
        #expect(throws: SDPParseError.missingField(.origin)) { try parse("v=0\r\ns=-\r\n") }
        #expect(throws: SDPParseError.missingField(.sessionName)) { try parse("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\n") }
    }

    @Test func rejectsSessionLinesOutOfPlace() {
        #expect(throws: SDPParseError.unexpectedLine(line: 5)) { try parse(head + "v=0\r\n") }
        #expect(throws: SDPParseError.unexpectedLine(line: 6)) { try parse(mediaWith("t=0 0")) }
        #expect(throws: SDPParseError.unexpectedLine(line: 7)) { try parse(mediaWith("c=IN IP4 0.0.0.0\r\nc=IN IP4 0.0.0.0")) }
    }

    @Test func rejectsMalformedOriginAndTiming() {
        #expect(throws: SDPParseError.malformed(.origin, line: 2)) { try parse("v=0\r\no=- x 1 IN IP4 0.0.0.0\r\n") }
        #expect(throws: SDPParseError.malformed(.origin, line: 2)) { try parse("v=0\r\no=- 1 1 IN IP4\r\n") }
        #expect(throws: SDPParseError.malformed(.timing, line: 4)) {
            try parse("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0\r\n")
        }
    }

    @Test(arguments: [
        "m=video", "m=video 9", "m=video 9 UDP/TLS/RTP/SAVPF", "m=video x UDP/TLS/RTP/SAVPF 96",
        "m=video 70000 UDP/TLS/RTP/SAVPF 96", "m=video -1 UDP/TLS/RTP/SAVPF 96", "m=video 9/x RTP/AVP 0",
    ])
    func rejectsMalformedMediaLine(line: String) {
        #expect(throws: SDPParseError.malformed(.media, line: 5)) { try parse(head + line + "\r\n") }
    }

    @Test func rejectsMalformedConnectionAndBandwidth() {
        #expect(throws: SDPParseError.malformed(.connection, line: 6)) { try parse(mediaWith("c=IN IP4")) }
        #expect(throws: SDPParseError.malformed(.bandwidth, line: 6)) { try parse(mediaWith("b=AS")) }
        #expect(throws: SDPParseError.malformed(.bandwidth, line: 6)) { try parse(mediaWith("b=AS:x")) }
    }
}

@Suite struct AttributeErrorTests {
    @Test(arguments: [
        "a=rtpmap:128 VP8/90000", "a=rtpmap:300 VP8/90000", "a=rtpmap:x VP8/90000",
        "a=fmtp:200 apt=96", "a=rtcp-fb:128 nack", "a=rid:q send pt=96,128",
    ])
    func rejectsPayloadTypeAbove127(line: String) {
        #expect(throws: SDPParseError.payloadTypeOutOfRange(line: 6)) { try parse(mediaWith(line)) }
    }

    @Test(arguments: ["a=rtpmap:96 VP8", "a=rtpmap:96 VP8/x", "a=rtpmap:96", "a=rtpmap:96 VP8/90000/2/1"])
    func rejectsMalformedRTPMap(line: String) {
        #expect(throws: SDPParseError.malformed(.rtpmap, line: 6)) { try parse(mediaWith(line)) }
    }

    @Test(arguments: [
        "a=fingerprint:sha-256 GG:00", "a=fingerprint:sha-256 0:11", "a=fingerprint:sha-256 00::11",
        "a=fingerprint:sha-256 00:11:22", "a=fingerprint:sha-1 00:11", "a=fingerprint:foo 0011",
    ])
    func rejectsBadFingerprintHex(line: String) {
        #expect(throws: SDPParseError.invalidFingerprint(line: 6)) { try parse(mediaWith(line)) }
    }

    @Test func rejectsFingerprintWithoutDigest() {
        #expect(throws: SDPParseError.malformed(.fingerprint, line: 5)) { try parse(head + "a=fingerprint:sha-256\r\n") }
    }

    @Test(arguments: [
        "a=candidate:1 1 udp 2130706431 127.0.0.1 5000 typ", "a=candidate:1 1 udp 2130706431 127.0.0.1 5000",
        "a=candidate:1", "a=candidate:1 1 udp 1 127.0.0.1 x typ host", "a=candidate:1 1 udp 1 127.0.0.1 70000 typ host",
        "a=candidate:1 1 udp 1 127.0.0.1 5000 type host", "a=candidate:1 1 udp 1 127.0.0.1 5000 typ host raddr",
        "a=candidate:1 1 udp 1 127.0.0.1 5000 typ srflx raddr 0.0.0.0 rport x",
        "a=candidate:bad! 1 udp 1 127.0.0.1 5000 typ host",
    ])
    func rejectsMalformedCandidate(line: String) {
        #expect(throws: SDPParseError.malformed(.candidate, line: 6)) { try parse(mediaWith(line)) }
    }

    @Test(arguments: ["a=extmap:0 urn:x", "a=extmap:256 urn:x", "a=extmap:4096 urn:x"])
    func rejectsExtmapIDOutOfRange(line: String) {
        #expect(throws: SDPParseError.extensionIDOutOfRange(line: 6)) { try parse(mediaWith(line)) }
    }

    @Test(arguments: ["a=extmap:x urn:x", "a=extmap:1", "a=extmap:1/sideways urn:x"])
    func rejectsMalformedExtmap(line: String) {
        #expect(throws: SDPParseError.malformed(.extmap, line: 6)) { try parse(mediaWith(line)) }
    }

    @Test func acceptsExtmapIDsAtTheEdgesOfBothHeaderForms() throws {
        let sdp = try parse(mediaWith("a=extmap:1 urn:a\r\na=extmap:14 urn:b\r\na=extmap:15 urn:c\r\na=extmap:255 urn:d"))
        #expect(sdp.media[0].extensionMaps.map(\.id) == [1, 14, 15, 255])
        #expect(sdp.media[0].extensionMaps.map(\.fitsOneByteHeader) == [true, true, false, false])
    }

    @Test(arguments: ["a=rid:q! send", "a=rid:q.h send", "a=rid:~q send", "a=rid:é send"])
    func rejectsRIDWithInvalidCharacters(line: String) {
        #expect(throws: SDPParseError.invalidRID(line: 6)) { try parse(mediaWith(line)) }
    }

    @Test func rejectsRIDAndMIDLongerThanSixteenBytes() {
        #expect(throws: SDPParseError.identifierTooLong(line: 6)) { try parse(mediaWith("a=rid:abcdefghijklmnopq send")) }
        #expect(throws: SDPParseError.identifierTooLong(line: 6)) { try parse(mediaWith("a=mid:abcdefghijklmnopq")) }
        #expect(throws: SDPParseError.identifierTooLong(line: 5)) { try parse(head + "a=group:BUNDLE 0 abcdefghijklmnopq\r\n") }
    }

    @Test(arguments: ["a=rid:q", "a=rid:q sideways", "a=rid:q send pt", "a=rid:q send max width=3"])
    func rejectsMalformedRID(line: String) {
        #expect(throws: SDPParseError.malformed(.rid, line: 6)) { try parse(mediaWith(line)) }
    }

    @Test func rejectsSimulcastReferringToNothing() {
        #expect(throws: SDPParseError.simulcastUnknownRID(line: 6)) { try parse(mediaWith("a=simulcast:send q;h")) }
        // The rid exists but in the other direction.
        #expect(throws: SDPParseError.simulcastUnknownRID(line: 7)) {
            try parse(mediaWith("a=rid:q recv\r\na=simulcast:send q"))
        }
    }

    @Test(arguments: ["a=simulcast:send", "a=simulcast:sideways q", "a=simulcast:send q send q", "a=simulcast:send q recv"])
    func rejectsMalformedSimulcast(line: String) {
        // Line 6 is the rid, line 7 the simulcast.
        #expect(throws: SDPParseError.malformed(.simulcast, line: 7)) { try parse(mediaWith("a=rid:q send\r\n" + line)) }
    }

    @Test func rejectsNonNumericPorts() {
        #expect(throws: SDPParseError.malformed(.rtcp, line: 6)) { try parse(mediaWith("a=rtcp:x")) }
        #expect(throws: SDPParseError.malformed(.sctpPort, line: 6)) { try parse(mediaWith("a=sctp-port:x")) }
        #expect(throws: SDPParseError.malformed(.maxMessageSize, line: 6)) { try parse(mediaWith("a=max-message-size:-1")) }
    }

    @Test func rejectsValueAttributesWithoutValues() {
        #expect(throws: SDPParseError.malformed(.mid, line: 6)) { try parse(mediaWith("a=mid:")) }
        #expect(throws: SDPParseError.malformed(.setup, line: 5)) { try parse(head + "a=setup:both\r\n") }
        #expect(throws: SDPParseError.malformed(.iceUfrag, line: 5)) { try parse(head + "a=ice-ufrag:\r\n") }
        #expect(throws: SDPParseError.malformed(.ssrc, line: 6)) { try parse(mediaWith("a=ssrc:1")) }
        #expect(throws: SDPParseError.malformed(.ssrcGroup, line: 6)) { try parse(mediaWith("a=ssrc-group:FID x")) }
    }
}
