import CryptoPrimitives
import Wire

/// Writes a STUN message: the header, then attributes in the order they are
/// appended, each padded to 4 bytes, keeping the header's length current.
///
/// MESSAGE-INTEGRITY, MESSAGE-INTEGRITY-SHA256 and FINGERPRINT are computed
/// over what has been written so far, with the length field covering the
/// attribute being added (RFC 8489 sections 14.5 to 14.7), so append them
/// last and in that order; the builder refuses any other order.
///
///     var b = STUNMessageBuilder(type: .bindingRequest, transactionID: .random())
///     try b.appendUsername("remote:local")
///     b.appendPriority(0x6E00_01FF)
///     try b.appendMessageIntegrity(key: STUNMessage.shortTermKey(password: pwd))
///     try b.appendFingerprint()
///     let datagram = b.bytes
package struct STUNMessageBuilder: Sendable {
    private var writer: ByteWriter
    package let transactionID: TransactionID
    /// The byte written into padding. RFC 8489 section 14 asks senders for
    /// zero; some RFC 5769 vectors use 0x20, and this lets tests reproduce
    /// them byte for byte. Receivers ignore padding either way.
    package var paddingByte: UInt8
    private var hasIntegrity = false
    private var hasIntegritySHA256 = false
    private var hasFingerprint = false

    package init(type: STUNMessageType, transactionID: TransactionID, paddingByte: UInt8 = 0) {
        writer = ByteWriter(capacity: 128)
        self.paddingByte = paddingByte
        self.transactionID = transactionID
        writer.uint16(type.rawValue)
        writer.uint16(0)
        writer.uint32(STUNMessage.magicCookie)
        writer.uint32(transactionID.high)
        writer.uint64(transactionID.low)
    }

    /// The message so far; complete and consistent after every append.
    package var bytes: [UInt8] { writer.bytes }

    /// Appends any attribute with `value` and padding. Refuses attributes
    /// after FINGERPRINT, and after MESSAGE-INTEGRITY anything but the two
    /// attributes allowed to follow it.
    package mutating func appendAttribute(_ type: STUNAttributeType, value: [UInt8]) throws(STUNBuildError) {
        try checkOrder(type)
        guard let valueLength = UInt16(exactly: value.count) else { throw .messageTooLong }
        let padded = (value.count + 3) & ~3
        guard writer.count - STUNMessage.headerLength + 4 + padded <= 0xFFFC else { throw .messageTooLong }
        writer.uint16(type.rawValue)
        writer.uint16(valueLength)
        writer.append(value)
        for _ in value.count..<padded { writer.uint8(paddingByte) }
        writer.set(uint16: UInt16(truncatingIfNeeded: writer.count - STUNMessage.headerLength), at: 2)
    }

    private func checkOrder(_ type: STUNAttributeType) throws(STUNBuildError) {
        if hasFingerprint { throw .attributeOutOfOrder(type) }
        if hasIntegritySHA256, type != .fingerprint { throw .attributeOutOfOrder(type) }
        if hasIntegrity, type != .fingerprint, type != .messageIntegritySHA256 { throw .attributeOutOfOrder(type) }
    }

    // MARK: Attributes

    package mutating func appendMappedAddress(_ address: TransportAddress) throws(STUNBuildError) {
        try appendAttribute(.mappedAddress, value: Self.addressValue(address))
    }

    /// XOR-MAPPED-ADDRESS (RFC 8489 section 14.2), obfuscated with this
    /// message's transaction id.
    package mutating func appendXORMappedAddress(_ address: TransportAddress) throws(STUNBuildError) {
        try appendAttribute(.xorMappedAddress, value: Self.addressValue(address.xored(with: transactionID)))
    }

    package mutating func appendUsername(_ username: String) throws(STUNBuildError) {
        try appendText(.username, username)
    }

    package mutating func appendSoftware(_ software: String) throws(STUNBuildError) {
        try appendText(.software, software)
    }

    package mutating func appendRealm(_ realm: String) throws(STUNBuildError) {
        try appendText(.realm, realm)
    }

    package mutating func appendNonce(_ nonce: String) throws(STUNBuildError) {
        try appendText(.nonce, nonce)
    }

    /// ERROR-CODE (RFC 8489 section 14.8).
    package mutating func appendErrorCode(_ error: STUNErrorCode) throws(STUNBuildError) {
        let reason = Array(error.reason.utf8)
        guard reason.count <= STUNMessage.maxTextLength else { throw .valueTooLong(.errorCode) }
        try appendAttribute(.errorCode, value: [0, 0, error.errorClass, error.number] + reason)
    }

    /// UNKNOWN-ATTRIBUTES (RFC 8489 section 14.13), for a 420 response.
    package mutating func appendUnknownAttributes(_ types: [STUNAttributeType]) throws(STUNBuildError) {
        var value: [UInt8] = []
        value.reserveCapacity(types.count * 2)
        for t in types { value += [UInt8(t.rawValue >> 8), UInt8(truncatingIfNeeded: t.rawValue)] }
        try appendAttribute(.unknownAttributes, value: value)
    }

    /// PRIORITY (RFC 8445 section 7.1.1).
    package mutating func appendPriority(_ priority: UInt32) throws(STUNBuildError) {
        try appendAttribute(.priority, value: Self.bigEndian(UInt64(priority), count: 4))
    }

    /// USE-CANDIDATE (RFC 8445 section 7.1.2): no value.
    package mutating func appendUseCandidate() throws(STUNBuildError) {
        try appendAttribute(.useCandidate, value: [])
    }

    /// ICE-CONTROLLING (RFC 8445 section 7.1.3) with its tie-breaker.
    package mutating func appendICEControlling(tieBreaker: UInt64) throws(STUNBuildError) {
        try appendAttribute(.iceControlling, value: Self.bigEndian(tieBreaker, count: 8))
    }

    /// ICE-CONTROLLED (RFC 8445 section 7.1.3) with its tie-breaker.
    package mutating func appendICEControlled(tieBreaker: UInt64) throws(STUNBuildError) {
        try appendAttribute(.iceControlled, value: Self.bigEndian(tieBreaker, count: 8))
    }

    // MARK: Integrity and fingerprint

    /// MESSAGE-INTEGRITY: HMAC-SHA1 under `key` (RFC 8489 section 14.5).
    package mutating func appendMessageIntegrity(key: [UInt8]) throws(STUNBuildError) {
        try appendMAC(.messageIntegrity, .sha1, key: key, length: 20)
        hasIntegrity = true
    }

    /// MESSAGE-INTEGRITY-SHA256: HMAC-SHA256 under `key`, truncated to
    /// `length` bytes (16...32, a multiple of 4; RFC 8489 section 14.6).
    package mutating func appendMessageIntegritySHA256(key: [UInt8], length: Int = 32) throws(STUNBuildError) {
        guard (16...32).contains(length), length % 4 == 0 else { throw .invalidTruncation }
        try appendMAC(.messageIntegritySHA256, .sha256, key: key, length: length)
        hasIntegritySHA256 = true
    }

    /// FINGERPRINT (RFC 8489 section 14.7): CRC-32 of everything before it,
    /// xored with 0x5354554E. Must be the last attribute.
    package mutating func appendFingerprint() throws(STUNBuildError) {
        try checkOrder(.fingerprint)
        try coverNextAttribute(valueLength: 4)
        let crc = writer.bytes.withUnsafeBytes { m in
            let header = STUNMessage.headerLength
            return STUNIntegrity.fingerprint(
                header: UnsafeRawBufferPointer(rebasing: m[..<header]), body: UnsafeRawBufferPointer(rebasing: m[header...]))
        }
        try appendAttribute(.fingerprint, value: Self.bigEndian(UInt64(crc), count: 4))
        hasFingerprint = true
    }

    private mutating func appendMAC(
        _ type: STUNAttributeType, _ algorithm: HMAC.Algorithm, key: [UInt8], length: Int
    ) throws(STUNBuildError) {
        try checkOrder(type)
        try coverNextAttribute(valueLength: length)
        guard
            let mac = key.withUnsafeBytes({ k in
                writer.bytes.withUnsafeBytes { m in HMAC.authenticationCode(algorithm, key: k, parts: [m]) }
            })
        else { throw .cryptoFailure }
        try appendAttribute(type, value: Array(mac.prefix(length)))
    }

    /// Sets the header length as if an attribute with `valueLength` bytes
    /// were already appended: the length the MAC and CRC must cover.
    private mutating func coverNextAttribute(valueLength: Int) throws(STUNBuildError) {
        let covered = writer.count - STUNMessage.headerLength + 4 + valueLength
        guard let length = UInt16(exactly: covered), covered <= 0xFFFC else { throw .messageTooLong }
        writer.set(uint16: length, at: 2)
    }

    // MARK: Helpers

    private mutating func appendText(_ type: STUNAttributeType, _ text: String) throws(STUNBuildError) {
        let utf8 = Array(text.utf8)
        guard utf8.count <= STUNMessage.maxTextLength else { throw .valueTooLong(type) }
        try appendAttribute(type, value: utf8)
    }

    private static func addressValue(_ address: TransportAddress) -> [UInt8] {
        [0, address.family.rawValue, UInt8(address.port >> 8), UInt8(truncatingIfNeeded: address.port)]
            + address.addressBytes
    }

    private static func bigEndian(_ v: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64(count - 1 - $0))) }
    }
}

// MARK: TURN attributes (RFC 8656 section 18)

extension STUNMessageBuilder {
    /// XOR-PEER-ADDRESS (section 18.3).
    package mutating func appendXORPeerAddress(_ address: TransportAddress) throws(STUNBuildError) {
        try appendAttribute(.xorPeerAddress, value: Self.turnAddressValue(address.xored(with: transactionID)))
    }

    /// XOR-RELAYED-ADDRESS (section 18.5).
    package mutating func appendXORRelayedAddress(_ address: TransportAddress) throws(STUNBuildError) {
        try appendAttribute(.xorRelayedAddress, value: Self.turnAddressValue(address.xored(with: transactionID)))
    }

    /// LIFETIME in seconds (section 18.2).
    package mutating func appendLifetime(seconds: UInt32) throws(STUNBuildError) {
        try appendAttribute(
            .lifetime,
            value: [
                UInt8(seconds >> 24), UInt8(truncatingIfNeeded: seconds >> 16), UInt8(truncatingIfNeeded: seconds >> 8),
                UInt8(truncatingIfNeeded: seconds),
            ])
    }

    /// REQUESTED-TRANSPORT (section 18.8): 17 for UDP, three RFFU bytes.
    package mutating func appendRequestedTransport(_ protocolNumber: UInt8 = 17) throws(STUNBuildError) {
        try appendAttribute(.requestedTransport, value: [protocolNumber, 0, 0, 0])
    }

    /// CHANNEL-NUMBER (section 18.1), two RFFU bytes.
    package mutating func appendChannelNumber(_ number: UInt16) throws(STUNBuildError) {
        try appendAttribute(.channelNumber, value: [UInt8(number >> 8), UInt8(truncatingIfNeeded: number), 0, 0])
    }

    /// DATA (section 18.4).
    package mutating func appendData(_ data: [UInt8]) throws(STUNBuildError) {
        try appendAttribute(.data, value: data)
    }

    private static func turnAddressValue(_ address: TransportAddress) -> [UInt8] {
        [0, address.family.rawValue, UInt8(address.port >> 8), UInt8(truncatingIfNeeded: address.port)]
            + address.addressBytes
    }
}
