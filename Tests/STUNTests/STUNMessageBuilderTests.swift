import SFUTesting
import STUN
import Testing
import Wire

@Suite struct STUNMessageBuilderTests {
    let key = STUNMessage.shortTermKey(password: "pass+word/123")
    let id = TransactionID(high: 0x0102_0304, low: 0x0506_0708_090A_0B0C)

    @Test func messageTypeEncodesClassAndMethodBits() {
        #expect(STUNMessageType.bindingRequest.rawValue == 0x0001)
        #expect(STUNMessageType.bindingIndication.rawValue == 0x0011)
        #expect(STUNMessageType.bindingSuccessResponse.rawValue == 0x0101)
        #expect(STUNMessageType.bindingErrorResponse.rawValue == 0x0111)
        // Method 0xFFF with every class exercises each bit of figure 3.
        let all = STUNMessageType(method: STUNMethod(rawValue: 0xFFF)!, class: .errorResponse)
        #expect(all.rawValue == 0x3FFF)
        let methodOnly = STUNMessageType(method: STUNMethod(rawValue: 0xFFF)!, class: .request)
        #expect(methodOnly.rawValue == 0x3EEF)
        for raw in stride(from: UInt16(0), through: 0x3FFF, by: 1) {
            #expect(STUNMessageType(rawValue: raw).rawValue == raw)
        }
        #expect(STUNMethod(rawValue: 0x1000) == nil)
    }

    @Test func transactionIDBytesRoundTrip() {
        #expect(id.bytes == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        #expect(TransactionID(bytes: id.bytes) == id)
        #expect(TransactionID(bytes: [1, 2, 3]) == nil)
        #expect(id.description == "0102030405060708090a0b0c")
        #expect(TransactionID.random() != TransactionID.random())
    }

    @Test func bindingRequestRoundTripsEveryICEAttribute() throws {
        let bytes = try STUNMessageBuilder.bindingRequest(
            transactionID: id, username: "remote:local", priority: 0x6E7F_1EFF,
            control: .controlling(tieBreaker: 0xDEAD_BEEF_0123_4567), useCandidate: true, key: key)
        let m = try parsedAlsoByView(bytes)
        #expect(m.type == .bindingRequest)
        #expect(m.transactionID == id)
        #expect(m.username == "remote:local")
        #expect(m.priority == 0x6E7F_1EFF)
        #expect(m.iceControlling == 0xDEAD_BEEF_0123_4567)
        #expect(m.iceControlled == nil)
        #expect(m.useCandidate)
        #expect(m.software == nil)
        #expect(m.verifyIntegrity(key: key, in: bytes))
        #expect(m.verifyFingerprint(in: bytes))
        #expect(bytes.count % 4 == 0)
    }

    @Test func successResponseCarriesXORMappedAddress() throws {
        let address = TransportAddress(ipv6: 0xFE80_0000_0000_0000, 0x0000_0000_0000_0001, port: 5000)
        let bytes = try STUNMessageBuilder.bindingSuccessResponse(transactionID: id, xorMappedAddress: address, key: key)
        let m = try parsedAlsoByView(bytes)
        #expect(m.type == .bindingSuccessResponse)
        #expect(m.xorMappedAddress == address)
        #expect(m.verifyIntegrity(key: key, in: bytes))
        #expect(m.verifyFingerprint(in: bytes))
    }

    @Test func errorResponseCarriesErrorCodeAndUnknownAttributes() throws {
        let bytes = try STUNMessageBuilder.bindingErrorResponse(
            transactionID: id, error: .unknownAttribute, unknownAttributes: [STUNAttributeType(0x0031)], key: nil)
        let m = try parsedAlsoByView(bytes)
        #expect(m.type == .bindingErrorResponse)
        #expect(m.errorCode == .unknownAttribute)
        #expect(m.errorCode?.code == 420)
        #expect(m.unknownAttributes == [STUNAttributeType(0x0031)])
        #expect(m.messageIntegrity == nil)
        #expect(m.verifyFingerprint(in: bytes))
        // ERROR-CODE: reserved, class 4, number 20, reason (17 bytes + 3 padding).
        #expect(Array(bytes[20..<28]) == [0x00, 0x09, 0x00, 0x15, 0x00, 0x00, 0x04, 0x14])
    }

    @Test func messageIntegritySHA256TruncatedAndFullVerify() throws {
        for length in [16, 20, 32] {
            var b = STUNMessageBuilder(type: .bindingRequest, transactionID: id)
            try b.appendUsername("a:b")
            try b.appendMessageIntegrity(key: key)
            try b.appendMessageIntegritySHA256(key: key, length: length)
            try b.appendFingerprint()
            let bytes = b.bytes
            let m = try parsedAlsoByView(bytes)
            #expect(m.messageIntegritySHA256?.valueLength == length)
            #expect(m.verifyMessageIntegrity(key: key, in: bytes))
            #expect(m.verifyMessageIntegritySHA256(key: key, in: bytes))
            #expect(m.verifyIntegrity(key: key, in: bytes))
            #expect(m.verifyFingerprint(in: bytes))
            #expect(!m.verifyMessageIntegritySHA256(key: [1], in: bytes))
        }
    }

    @Test func integrityAndFingerprintOrderIsEnforced() throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: id)
        try b.appendMessageIntegrity(key: key)
        #expect(throws: STUNBuildError.attributeOutOfOrder(.username)) { try b.appendUsername("x") }
        try b.appendFingerprint()
        #expect(throws: STUNBuildError.attributeOutOfOrder(.messageIntegritySHA256)) {
            try b.appendMessageIntegritySHA256(key: key)
        }
        #expect(throws: STUNBuildError.attributeOutOfOrder(.fingerprint)) { try b.appendFingerprint() }
    }

    @Test func oversizedValuesAreRefused() throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: id)
        #expect(throws: STUNBuildError.valueTooLong(.username)) {
            try b.appendUsername(String(repeating: "u", count: 764))
        }
        #expect(throws: STUNBuildError.invalidTruncation) { try b.appendMessageIntegritySHA256(key: key, length: 18) }
        try b.appendAttribute(STUNAttributeType(0x8030), value: [UInt8](repeating: 0, count: 65_000))
        #expect(throws: STUNBuildError.messageTooLong) {
            try b.appendAttribute(STUNAttributeType(0x8030), value: [UInt8](repeating: 0, count: 1000))
        }
        // The refused append left the message intact.
        #expect(try parsedAlsoByView(b.bytes).attributeCount == 1)
    }

    @Test func headerLengthTracksEveryAppend() throws {
        var b = STUNMessageBuilder(type: .bindingIndication, transactionID: id)
        #expect(b.bytes == [0x00, 0x11, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42] + id.bytes)
        try b.appendSoftware("ab")  // 4 + 2 + 2 padding
        #expect(Array(b.bytes[2..<4]) == [0x00, 0x08])
        #expect(Array(b.bytes[20..<28]) == [0x80, 0x22, 0x00, 0x02, 0x61, 0x62, 0x00, 0x00])
    }
}
