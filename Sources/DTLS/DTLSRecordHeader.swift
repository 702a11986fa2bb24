import Wire

/// Why a datagram was screened out before OpenSSL saw it.
package enum DTLSRecordError: Error, Equatable, Sendable {
    /// Fewer than 13 bytes where a record header should be.
    case truncated
    /// The header's length runs past the end of the datagram.
    case lengthBeyondDatagram
    /// Not change_cipher_spec, alert, handshake or application_data.
    case unknownContentType(UInt8)
    /// A protected record (epoch > 0) too short to hold the AES-GCM explicit
    /// nonce and tag.
    case ciphertextTooShort
}

/// The DTLS record header (RFC 6347 section 4.1): content type, version,
/// epoch, 48-bit sequence number, fragment length.
package struct DTLSRecordHeader: Equatable, Sendable {
    package static let size = 13
    package let contentType: UInt8
    package let version: UInt16
    package let epoch: UInt16
    package let sequenceNumber: UInt64
    package let length: Int

    package static func parse(_ reader: inout ByteReader) throws(DTLSRecordError) -> DTLSRecordHeader {
        let contentType = try reader.uint8(or: DTLSRecordError.truncated)
        let version = try reader.uint16(or: DTLSRecordError.truncated)
        let epoch = try reader.uint16(or: DTLSRecordError.truncated)
        let sequenceHigh = try reader.uint16(or: DTLSRecordError.truncated)
        let sequenceLow = try reader.uint32(or: DTLSRecordError.truncated)
        let length = try reader.uint16(or: DTLSRecordError.truncated)
        return DTLSRecordHeader(
            contentType: contentType, version: version, epoch: epoch,
            sequenceNumber: UInt64(sequenceHigh) << 32 | UInt64(sequenceLow), length: Int(length))
    }
}

/// Screens a datagram before OpenSSL sees it. RFC 6347 section 4.1.2.7
/// lets DTLS drop invalid records silently, and OpenSSL 3.0 does for most,
/// but it answers a protected record shorter than the AEAD overhead with a
/// fatal alert, so one forged 14-byte datagram would kill a connection.
/// We drop the whole datagram when any record in it is malformed; valid
/// peers never send such records.
enum DatagramScreen {
    /// AES-GCM (the only suites we enable, `DTLSEndpoint.cipherList`):
    /// 8-byte explicit nonce + 16-byte tag (RFC 5288 section 3).
    static let minimumProtectedLength = 24

    static func check(_ bytes: RawSpan) throws(DTLSRecordError) {
        var reader = ByteReader(bytes)
        repeat {
            let header = try DTLSRecordHeader.parse(&reader)
            guard (20...23).contains(header.contentType) else { throw .unknownContentType(header.contentType) }
            guard reader.canRead(header.length) else { throw .lengthBeyondDatagram }
            if header.epoch != 0, header.length < minimumProtectedLength { throw .ciphertextTooShort }
            try reader.skip(header.length, or: DTLSRecordError.lengthBeyondDatagram)
        } while !reader.isAtEnd
    }
}
