import SFUTesting
import STUN
import Testing
import Wire

/// RFC 5769 test vectors: parsing, verification, and rebuilding from fields.
@Suite struct RFC5769VectorTests {
    let key = STUNMessage.shortTermKey(password: RFC5769.password)
    let transactionID = TransactionID(bytes: RFC5769.transactionID)!

    @Test func sampleRequestParsesWithEveryField() throws {
        let bytes = RFC5769.sampleRequest
        let m = try parsedAlsoByView(bytes)
        #expect(m.type == .bindingRequest)
        #expect(m.transactionID == transactionID)
        #expect(m.byteCount == 108)
        #expect(m.attributeCount == 6)
        #expect(m.software == "STUN test client")
        #expect(m.priority == 0x6E00_01FF)
        #expect(m.iceControlled == 0x932F_F9B1_5126_3B36)
        #expect(m.iceControlling == nil)
        #expect(m.useCandidate == false)
        #expect(m.username == "evtj:h6vY")
        #expect(m.messageIntegrity == STUNMessage.AttributeLocation(offset: 76, valueLength: 20))
        #expect(m.messageIntegritySHA256 == nil)
        #expect(m.fingerprint == STUNMessage.AttributeLocation(offset: 100, valueLength: 4))
        #expect(m.unknownComprehensionRequired.isEmpty)
    }

    @Test func sampleRequestVerifies() throws {
        let bytes = RFC5769.sampleRequest
        let m = try parsedAlsoByView(bytes)
        #expect(m.verifyFingerprint(in: bytes))
        #expect(m.verifyMessageIntegrity(key: key, in: bytes))
        #expect(m.verifyIntegrity(key: key, in: bytes))
        #expect(!m.verifyIntegrity(key: STUNMessage.shortTermKey(password: "wrong"), in: bytes))
    }

    @Test func sampleIPv4ResponseParsesAndVerifies() throws {
        let bytes = RFC5769.sampleIPv4Response
        let m = try parsedAlsoByView(bytes)
        #expect(m.type == .bindingSuccessResponse)
        #expect(m.transactionID == transactionID)
        #expect(m.software == "test vector")
        #expect(m.xorMappedAddress == TransportAddress(ipv4: 192, 0, 2, 1, port: 32853))
        #expect(m.xorMappedAddress?.description == "192.0.2.1:32853")
        #expect(m.messageIntegrity?.offset == 48)
        #expect(m.fingerprint?.offset == 72)
        #expect(m.verifyFingerprint(in: bytes))
        #expect(m.verifyIntegrity(key: key, in: bytes))
    }

    @Test func sampleIPv6ResponseParsesAndVerifies() throws {
        let bytes = RFC5769.sampleIPv6Response
        let m = try parsedAlsoByView(bytes)
        let expected = TransportAddress(ipv6: 0x2001_0DB8_1234_5678, 0x0011_2233_4455_6677, port: 32853)
        #expect(m.type == .bindingSuccessResponse)
        #expect(m.xorMappedAddress == expected)
        #expect(m.xorMappedAddress?.description == "[2001:db8:1234:5678:11:2233:4455:6677]:32853")
        #expect(m.verifyFingerprint(in: bytes))
        #expect(m.verifyIntegrity(key: key, in: bytes))
    }

    @Test func longTermRequestParsesWithoutFingerprint() throws {
        let bytes = RFC5769.sampleLongTermRequest
        let m = try parsedAlsoByView(bytes)
        #expect(m.type == .bindingRequest)
        #expect(
            m.transactionID == TransactionID(bytes: [0x78, 0xAD, 0x34, 0x33, 0xC6, 0xAD, 0x72, 0xC0, 0x29, 0xDA, 0x41, 0x2E]))
        #expect(m.username == "\u{30DE}\u{30C8}\u{30EA}\u{30C3}\u{30AF}\u{30B9}")
        #expect(m.nonce == "f//499k954d6OL34oL9FSTvy64sA")
        #expect(m.realm == "example.org")
        #expect(m.messageIntegrity?.offset == 92)
        #expect(m.fingerprint == nil)
        #expect(!m.verifyFingerprint(in: bytes))
        #expect(m.unknownComprehensionRequired.isEmpty)
    }

    /// RFC 8489 section 9.2.2: key = MD5(username ":" realm ":" password),
    /// computed here with a test-only MD5 since STUN has no long-term support.
    @Test func longTermRequestIntegrityVerifiesWithMD5Key() throws {
        #expect(
            TestMD5.digest([]) == [
                0xD4, 0x1D, 0x8C, 0xD9, 0x8F, 0x00, 0xB2, 0x04,
                0xE9, 0x80, 0x09, 0x98, 0xEC, 0xF8, 0x42, 0x7E,
            ])
        let bytes = RFC5769.sampleLongTermRequest
        let m = try parsedAlsoByView(bytes)
        let longTermKey = TestMD5.digest(Array("\u{30DE}\u{30C8}\u{30EA}\u{30C3}\u{30AF}\u{30B9}:example.org:TheMatrIX".utf8))
        #expect(m.verifyMessageIntegrity(key: longTermKey, in: bytes))
        #expect(!m.verifyMessageIntegrity(key: key, in: bytes))
    }

    /// The vectors pad with spaces (0x20) where RFC 8489 asks senders for
    /// zeros; `paddingByte` lets the builder reproduce them exactly.
    @Test func buildingSampleRequestFromFieldsReproducesTheVector() throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: transactionID, paddingByte: 0x20)
        try b.appendSoftware("STUN test client")
        try b.appendPriority(0x6E00_01FF)
        try b.appendICEControlled(tieBreaker: 0x932F_F9B1_5126_3B36)
        try b.appendUsername("evtj:h6vY")
        try b.appendMessageIntegrity(key: key)
        try b.appendFingerprint()
        #expect(b.bytes == RFC5769.sampleRequest)
    }

    @Test func iceBindingRequestConvenienceReproducesTheSampleRequestUpToPadding() throws {
        let bytes = try STUNMessageBuilder.bindingRequest(
            transactionID: transactionID, username: "evtj:h6vY", priority: 0x6E00_01FF,
            control: .controlled(tieBreaker: 0x932F_F9B1_5126_3B36), key: key, software: "STUN test client")
        // Same fields and order; only the USERNAME padding (zeros here,
        // spaces in the vector) and so the MAC and CRC differ.
        #expect(bytes.count == RFC5769.sampleRequest.count)
        #expect(Array(bytes[0..<73]) == Array(RFC5769.sampleRequest[0..<73]))
        #expect(Array(bytes[73..<76]) == [0, 0, 0])
        let m = try parsedAlsoByView(bytes)
        #expect(m.verifyIntegrity(key: key, in: bytes))
        #expect(m.verifyFingerprint(in: bytes))
    }

    @Test func buildingSampleIPv4ResponseFromFieldsReproducesTheVector() throws {
        var b = STUNMessageBuilder(type: .bindingSuccessResponse, transactionID: transactionID, paddingByte: 0x20)
        try b.appendSoftware("test vector")
        try b.appendXORMappedAddress(TransportAddress(ipv4: 192, 0, 2, 1, port: 32853))
        try b.appendMessageIntegrity(key: key)
        try b.appendFingerprint()
        #expect(b.bytes == RFC5769.sampleIPv4Response)
    }

    @Test func buildingSampleIPv6ResponseFromFieldsReproducesTheVector() throws {
        var b = STUNMessageBuilder(type: .bindingSuccessResponse, transactionID: transactionID, paddingByte: 0x20)
        try b.appendSoftware("test vector")
        try b.appendXORMappedAddress(TransportAddress(ipv6: 0x2001_0DB8_1234_5678, 0x0011_2233_4455_6677, port: 32853))
        try b.appendMessageIntegrity(key: key)
        try b.appendFingerprint()
        #expect(b.bytes == RFC5769.sampleIPv6Response)
    }

    @Test func everyVectorLooksLikeSTUN() {
        for v in [RFC5769.sampleRequest, RFC5769.sampleIPv4Response, RFC5769.sampleIPv6Response, RFC5769.sampleLongTermRequest] {
            #expect(STUNMessage.looksLikeSTUN(v))
        }
    }
}
