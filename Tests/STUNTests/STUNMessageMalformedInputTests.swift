import SFUTesting
import STUN
import Testing
import Wire

/// Bad input gets a typed error, never a trap.
@Suite struct STUNMessageMalformedInputTests {
    let key = STUNMessage.shortTermKey(password: RFC5769.password)

    @Test func truncatedHeaderIsRejectedAtEveryLength() {
        for n in 0..<20 {
            let bytes = Array(RFC5769.sampleRequest.prefix(n))
            #expect(throws: STUNParseError.truncated) { try parsedAlsoByView(bytes) }
            #expect(!STUNMessage.looksLikeSTUN(bytes))
        }
    }

    @Test func truncatedMessageIsALengthMismatch() {
        let bytes = Array(RFC5769.sampleRequest.dropLast(4))
        #expect(throws: STUNParseError.lengthMismatch) { try parsedAlsoByView(bytes) }
    }

    @Test func lengthNotAMultipleOfFourIsRejected() {
        // Header says 6 bytes of attributes; 6 are present.
        let bytes = RawSTUN.message(length: 6) + [0x80, 0x30, 0x00, 0x01, 0xAA, 0x00]
        #expect(throws: STUNParseError.lengthNotMultipleOfFour) { try parsedAlsoByView(bytes) }
        #expect(!STUNMessage.looksLikeSTUN(bytes))
    }

    @Test func lengthBeyondTheBytesIsRejected() {
        let bytes = RawSTUN.message(length: 8, attributes: [(0x0025, [])])
        #expect(bytes.count == 24)
        #expect(throws: STUNParseError.lengthMismatch) { try parsedAlsoByView(bytes) }
        #expect(!STUNMessage.looksLikeSTUN(bytes))
    }

    @Test func trailingBytesAfterTheMessageAreRejected() {
        let bytes = RawSTUN.message(attributes: [(0x0025, [])]) + [0, 0, 0, 0]
        #expect(throws: STUNParseError.lengthMismatch) { try parsedAlsoByView(bytes) }
    }

    @Test func attributeLengthBeyondTheMessageIsRejected() {
        // PRIORITY claiming 8 bytes of value with only 4 in the message.
        let body = RawSTUN.attribute(0x0024, [0, 0, 0, 1], declaredLength: 8)
        let bytes = RawSTUN.message(length: body.count) + body
        #expect(throws: STUNParseError.attributeOverrun) { try parsedAlsoByView(bytes) }
    }

    @Test func paddingBeyondTheMessageIsRejected() {
        // SOFTWARE of 5 bytes needs 3 bytes of padding; the message ends first.
        let body: [UInt8] = [0x80, 0x22, 0x00, 0x05, 0x61, 0x62, 0x63, 0x64]
        let bytes = RawSTUN.message(length: body.count) + body
        #expect(throws: STUNParseError.attributeOverrun) { try parsedAlsoByView(bytes) }
    }

    @Test func wrongCookieIsRejected() {
        var bytes = RFC5769.sampleRequest
        bytes[4] = 0x21; bytes[7] = 0x43
        #expect(throws: STUNParseError.badMagicCookie) { try parsedAlsoByView(bytes) }
        #expect(!STUNMessage.looksLikeSTUN(bytes))
    }

    @Test func topBitsSetIsNotSTUN() {
        for first: UInt8 in [0x40, 0x80, 0xC0] {
            var bytes = RFC5769.sampleRequest
            bytes[0] |= first
            #expect(throws: STUNParseError.notSTUN) { try parsedAlsoByView(bytes) }
            #expect(!STUNMessage.looksLikeSTUN(bytes))
        }
    }

    @Test func attributeAfterFingerprintIsRejected() {
        let bytes = RFC5769.sampleIPv4Response + RawSTUN.attribute(0x8022, Array("late".utf8))
        var patched = bytes
        patched[3] = UInt8(bytes.count - 20)
        #expect(throws: STUNParseError.attributeAfterFingerprint) { try parsedAlsoByView(patched) }
    }

    @Test func wrongFingerprintFailsVerification() throws {
        var bytes = RFC5769.sampleIPv4Response
        bytes[bytes.count - 1] ^= 0x01
        let m = try parsedAlsoByView(bytes)
        #expect(!m.verifyFingerprint(in: bytes))
        #expect(m.verifyIntegrity(key: key, in: bytes))
    }

    @Test func changedBodyFailsIntegrityAndFingerprint() throws {
        var bytes = RFC5769.sampleIPv4Response
        bytes[44] ^= 0x01  // XOR-MAPPED-ADDRESS address byte
        let m = try parsedAlsoByView(bytes)
        #expect(!m.verifyIntegrity(key: key, in: bytes))
        #expect(!m.verifyFingerprint(in: bytes))
    }

    @Test func wrongIntegrityFailsVerification() throws {
        var bytes = RFC5769.sampleRequest
        bytes[80] ^= 0x80  // first MESSAGE-INTEGRITY byte
        let m = try parsedAlsoByView(bytes)
        #expect(!m.verifyMessageIntegrity(key: key, in: bytes))
        #expect(!m.verifyIntegrity(key: key, in: bytes))
    }

    @Test func verificationAgainstOtherBytesFails() throws {
        let m = try parsedAlsoByView(RFC5769.sampleRequest)
        #expect(!m.verifyFingerprint(in: RFC5769.sampleIPv4Response))
        #expect(!m.verifyIntegrity(key: key, in: Array(RFC5769.sampleRequest.prefix(50))))
    }

    @Test func messageWithoutIntegrityNeverVerifies() throws {
        let bytes = RawSTUN.message(attributes: [(0x0024, [0, 0, 0, 1])])
        let m = try parsedAlsoByView(bytes)
        #expect(!m.verifyIntegrity(key: key, in: bytes))
        #expect(!m.verifyFingerprint(in: bytes))
    }

    @Test func xorMappedAddressWithBadFamilyIsRejected() {
        for family: UInt8 in [0x00, 0x03, 0xFF] {
            let bytes = RawSTUN.message(type: 0x0101, attributes: [(0x0020, [0, family, 0xA1, 0x47, 0xE1, 0x12, 0xA6, 0x43])])
            #expect(throws: STUNParseError.malformedAttribute(.xorMappedAddress)) { try parsedAlsoByView(bytes) }
        }
    }

    @Test func xorMappedAddressWithWrongLengthIsRejected() {
        let values: [[UInt8]] = [
            [0, 1, 0xA1, 0x47, 0xE1, 0x12, 0xA6],  // IPv4, 3 address bytes
            [0, 1, 0xA1, 0x47] + [UInt8](repeating: 0, count: 16),  // IPv4 family, IPv6 length
            [0, 2, 0xA1, 0x47, 0xE1, 0x12, 0xA6, 0x43],  // IPv6 family, IPv4 length
            [0, 1],  // no port
            [],
        ]
        for v in values {
            let bytes = RawSTUN.message(type: 0x0101, attributes: [(0x0020, v)])
            #expect(throws: STUNParseError.malformedAttribute(.xorMappedAddress)) { try parsedAlsoByView(bytes) }
        }
    }

    @Test func mappedAddressParsesIPv4AndIPv6() throws {
        let v4 = RawSTUN.message(type: 0x0101, attributes: [(0x0001, [0, 1, 0x12, 0x34, 10, 0, 0, 1])])
        #expect(try parsedAlsoByView(v4).mappedAddress == TransportAddress(ipv4: 10, 0, 0, 1, port: 0x1234))
        let v6 = RawSTUN.message(type: 0x0101, attributes: [(0x0001, [0, 2, 0, 80] + (1...16).map { UInt8($0) })])
        let m = try parsedAlsoByView(v6)
        #expect(m.mappedAddress?.addressBytes == (1...16).map { UInt8($0) })
        #expect(m.mappedAddress?.port == 80)
        let bad = RawSTUN.message(type: 0x0101, attributes: [(0x0001, [0, 2, 0, 80, 1, 2, 3, 4])])
        #expect(throws: STUNParseError.malformedAttribute(.mappedAddress)) { try parsedAlsoByView(bad) }
    }

    @Test func usernameUpTo763BytesIsAcceptedAndLongerIsRejected() throws {
        let ok = RawSTUN.message(attributes: [(0x0006, [UInt8](repeating: 0x61, count: 763))])
        #expect(try parsedAlsoByView(ok).username?.utf8.count == 763)
        let long = RawSTUN.message(attributes: [(0x0006, [UInt8](repeating: 0x61, count: 764))])
        #expect(throws: STUNParseError.malformedAttribute(.username)) { try parsedAlsoByView(long) }
    }

    @Test func usernameThatIsNotUTF8IsRejected() {
        let bytes = RawSTUN.message(attributes: [(0x0006, [0x61, 0xFF, 0xFE])])
        #expect(throws: STUNParseError.malformedAttribute(.username)) { try parsedAlsoByView(bytes) }
    }

    @Test func errorCodeTooShortIsRejected() {
        for n in 0..<4 {
            let bytes = RawSTUN.message(type: 0x0111, attributes: [(0x0009, Array([0, 0, 4, 20].prefix(n)))])
            #expect(throws: STUNParseError.malformedAttribute(.errorCode)) { try parsedAlsoByView(bytes) }
        }
    }

    @Test func errorCodeOutOfRangeIsRejected() {
        for (cls, num): (UInt8, UInt8) in [(2, 0), (7, 0), (4, 100), (0, 0)] {
            let bytes = RawSTUN.message(type: 0x0111, attributes: [(0x0009, [0, 0, cls, num])])
            #expect(throws: STUNParseError.malformedAttribute(.errorCode)) { try parsedAlsoByView(bytes) }
        }
    }

    @Test func errorCodeParsesClassNumberAndReason() throws {
        let bytes = RawSTUN.message(
            type: 0x0111,
            attributes: [
                (0x0009, [0, 0, 4, 20] + Array("Unknown Attribute".utf8)),  // 420
                (0x000A, [0x00, 0x31, 0x7F, 0xFF]),  // UNKNOWN-ATTRIBUTES 0x0031, 0x7FFF
            ])
        let m = try parsedAlsoByView(bytes)
        #expect(m.type == .bindingErrorResponse)
        #expect(m.errorCode == STUNErrorCode(code: 420, reason: "Unknown Attribute"))
        #expect(m.unknownAttributes == [STUNAttributeType(0x0031), STUNAttributeType(0x7FFF)])
    }

    @Test func unknownAttributesWithOddLengthIsRejected() {
        let bytes = RawSTUN.message(type: 0x0111, attributes: [(0x000A, [0x00, 0x31, 0x7F])])
        #expect(throws: STUNParseError.malformedAttribute(.unknownAttributes)) { try parsedAlsoByView(bytes) }
    }

    @Test func fixedLengthAttributesWithWrongLengthAreRejected() {
        let cases: [(UInt16, Int, STUNAttributeType)] = [
            (0x0024, 3, .priority), (0x0024, 8, .priority), (0x0025, 4, .useCandidate),
            (0x802A, 4, .iceControlling), (0x8029, 12, .iceControlled), (0x8028, 8, .fingerprint),
            (0x0008, 16, .messageIntegrity), (0x001C, 12, .messageIntegritySHA256),
            (0x001C, 36, .messageIntegritySHA256), (0x001C, 18, .messageIntegritySHA256),
        ]
        for (type, length, expected) in cases {
            let bytes = RawSTUN.message(attributes: [(type, [UInt8](repeating: 0, count: length))])
            #expect(throws: STUNParseError.malformedAttribute(expected)) { try parsedAlsoByView(bytes) }
        }
    }

    @Test func tenThousandTinyAttributesAreRejected() {
        let attributes = [(type: UInt16, value: [UInt8])](repeating: (0x8030, []), count: 10_000)
        let bytes = RawSTUN.message(attributes: attributes)
        #expect(bytes.count == 20 + 40_000)
        #expect(throws: STUNParseError.tooManyAttributes) { try parsedAlsoByView(bytes) }
    }

    @Test func attributeCountAtTheBoundIsAccepted() throws {
        let attributes = [(type: UInt16, value: [UInt8])](repeating: (0x8030, []), count: STUNMessage.maxAttributes)
        let m = try parsedAlsoByView(RawSTUN.message(attributes: attributes))
        #expect(m.attributeCount == 64)
    }

    @Test func largestMessageWithOneBigOptionalAttributeParses() throws {
        // 0xFFFC bytes of attributes: one 4-byte header and 65528 value bytes.
        let bytes = RawSTUN.message(attributes: [(0x8030, [UInt8](repeating: 0xAB, count: 65528))])
        #expect(bytes.count == 20 + 0xFFFC)
        let m = try parsedAlsoByView(bytes)
        #expect(m.byteCount == 65552)
        #expect(m.attributeCount == 1)
        #expect(STUNMessage.looksLikeSTUN(bytes))
    }

    @Test func sixtyFourKiBDatagramIsRejected() {
        // A 64 KiB datagram cannot be one STUN message: the length field
        // tops out at 0xFFFC.
        var bytes = RawSTUN.message(length: 0xFFFC)
        bytes += [UInt8](repeating: 0, count: 65536 - bytes.count)
        #expect(throws: STUNParseError.lengthMismatch) { try parsedAlsoByView(bytes) }
        #expect(!STUNMessage.looksLikeSTUN(bytes))
    }

    @Test func unknownComprehensionRequiredAttributesAreReportedOnce() throws {
        let bytes = RawSTUN.message(attributes: [
            (0x0031, [1, 2, 3]), (0x8031, [4]), (0x7FFF, []), (0x0031, []),
            (0x0024, [0, 0, 0, 7]),
        ])
        let m = try parsedAlsoByView(bytes)
        #expect(m.unknownComprehensionRequired == [STUNAttributeType(0x0031), STUNAttributeType(0x7FFF)])
        #expect(m.priority == 7)
        #expect(m.attributeCount == 5)
    }

    @Test func attributesAfterMessageIntegrityAreIgnoredExceptSHA256AndFingerprint() throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: TransactionID(high: 1, low: 2))
        try b.appendPriority(9)
        try b.appendMessageIntegrity(key: key)
        // Appended by hand, as the builder refuses it: PRIORITY, USERNAME and
        // an unknown required type after MESSAGE-INTEGRITY.
        var bytes = b.bytes
        bytes +=
            RawSTUN.attribute(0x0024, [0, 0, 0, 1]) + RawSTUN.attribute(0x0006, [0x61])
            + RawSTUN.attribute(0x0031, [])
        bytes[2] = UInt8((bytes.count - 20) >> 8); bytes[3] = UInt8((bytes.count - 20) & 0xFF)
        let m = try parsedAlsoByView(bytes)
        #expect(m.priority == 9)
        #expect(m.username == nil)
        #expect(m.unknownComprehensionRequired.isEmpty)
        #expect(m.attributeCount == 5)
        // The MAC covers only what precedes it, whatever follows.
        #expect(m.verifyMessageIntegrity(key: key, in: bytes))
    }

    @Test func onlyTheFirstOfRepeatedAttributesCounts() throws {
        let bytes = RawSTUN.message(attributes: [(0x0024, [0, 0, 0, 1]), (0x0024, [0, 0, 0, 2])])
        #expect(try parsedAlsoByView(bytes).priority == 1)
    }

    @Test func paddingBytesAreIgnored() throws {
        var bytes = RawSTUN.message(attributes: [(0x0006, [0x61])])
        bytes[25] = 0xFF; bytes[26] = 0xEE; bytes[27] = 0xDD
        #expect(try parsedAlsoByView(bytes).username == "a")
    }
}
