import CryptoPrimitives
import Wire

/// Writes a Binding success response (RFC 8445 section 7.3.1.3) straight
/// into a caller's buffer: the bytes `STUNMessageBuilder.bindingSuccessResponse`
/// makes with a key, attribute for attribute (SOFTWARE when given,
/// XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY, FINGERPRINT), without the
/// builder's growable writer and arrays, so answering a consent check
/// (RFC 7675) allocates nothing. Tests hold the two to the same bytes.
package enum BindingSuccessResponseWriter {
    /// The longest response: header, SOFTWARE of `STUNMessage.maxTextLength`
    /// bytes padded, an IPv6 XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY and
    /// FINGERPRINT. A buffer this long always fits.
    package static let maxLength =
        STUNMessage.headerLength + 4 + ((STUNMessage.maxTextLength + 3) & ~3) + 24 + 24 + 8

    /// The response's length, or nil when SOFTWARE is longer than
    /// `STUNMessage.maxTextLength` (the builder refuses it too).
    package static func length(address: TransportAddress, softwareLength: Int?) -> Int? {
        let software: Int
        if let softwareLength {
            guard softwareLength <= STUNMessage.maxTextLength else { return nil }
            software = 4 + ((softwareLength + 3) & ~3)
        } else {
            software = 0
        }
        return STUNMessage.headerLength + software + 4 + 4 + address.family.addressLength + 24 + 8
    }

    /// Writes the response into `out` and returns its length; nil when
    /// `out` is too short or SOFTWARE too long. `software` is its UTF-8
    /// bytes (nil: none), `key` the short-term key the request verified
    /// under (RFC 8489 section 9.1.3).
    package static func write(
        into out: UnsafeMutableRawBufferPointer, transactionID: TransactionID, xorMappedAddress address: TransportAddress,
        key: UnsafeRawBufferPointer, software: UnsafeRawBufferPointer?
    ) -> Int? {
        guard let total = length(address: address, softwareLength: software?.count), out.count >= total else {
            return nil
        }
        var at = 0
        func put16(_ v: UInt16) {
            out[at] = UInt8(truncatingIfNeeded: v >> 8)
            out[at + 1] = UInt8(truncatingIfNeeded: v)
            at += 2
        }
        func put32(_ v: UInt32) {
            put16(UInt16(truncatingIfNeeded: v >> 16))
            put16(UInt16(truncatingIfNeeded: v))
        }
        func put64(_ v: UInt64) {
            put32(UInt32(truncatingIfNeeded: v >> 32))
            put32(UInt32(truncatingIfNeeded: v))
        }
        /// The header's length field as if the message ended at `end`
        /// (RFC 8489 sections 14.5 and 14.7: each MAC and CRC covers a
        /// header whose length includes its own attribute).
        func setLength(endingAt end: Int) {
            let length = UInt16(truncatingIfNeeded: end - STUNMessage.headerLength)
            out[2] = UInt8(truncatingIfNeeded: length >> 8)
            out[3] = UInt8(truncatingIfNeeded: length)
        }
        func covered(_ end: Int) -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer) {
            let message = UnsafeRawBufferPointer(out)
            return (
                UnsafeRawBufferPointer(rebasing: message[..<STUNMessage.headerLength]),
                UnsafeRawBufferPointer(rebasing: message[STUNMessage.headerLength..<end])
            )
        }

        // Header (RFC 8489 section 5).
        put16(STUNMessageType.bindingSuccessResponse.rawValue)
        put16(0)
        put32(STUNMessage.magicCookie)
        put32(transactionID.high)
        put64(transactionID.low)

        // SOFTWARE (section 14.14), padded with zeros (section 14).
        if let software {
            put16(STUNAttributeType.software.rawValue)
            put16(UInt16(software.count))
            UnsafeMutableRawBufferPointer(rebasing: out[at..<at + software.count]).copyMemory(from: software)
            at += software.count
            while at % 4 != 0 {
                out[at] = 0
                at += 1
            }
        }

        // XOR-MAPPED-ADDRESS (section 14.2): reserved byte, family, port and
        // address xored with the cookie (and the transaction id for IPv6).
        let xored = address.xored(with: transactionID)
        put16(STUNAttributeType.xorMappedAddress.rawValue)
        put16(UInt16(4 + address.family.addressLength))
        out[at] = 0
        out[at + 1] = address.family.rawValue
        at += 2
        put16(xored.port)
        if let v4 = xored.ipv4 {
            put32(v4)
        } else {
            let (high, low) = xored.ipv6 ?? (0, 0)
            put64(high)
            put64(low)
        }

        // MESSAGE-INTEGRITY (section 14.5): HMAC-SHA1 over the message so
        // far, the length counting this attribute.
        let macStart = at
        setLength(endingAt: macStart + 24)
        put16(STUNAttributeType.messageIntegrity.rawValue)
        put16(20)
        let (header, body) = covered(macStart)
        HMAC.sha1(key: key, header, body, into: UnsafeMutableRawBufferPointer(rebasing: out[at..<at + 20]))
        at += 20

        // FINGERPRINT (section 14.7), last.
        let fingerprintStart = at
        setLength(endingAt: fingerprintStart + 8)
        put16(STUNAttributeType.fingerprint.rawValue)
        put16(4)
        let (fpHeader, fpBody) = covered(fingerprintStart)
        put32(STUNIntegrity.fingerprint(header: fpHeader, body: fpBody))
        return at
    }

    /// `write(into:...)` with the key and SOFTWARE as the agent keeps them.
    package static func write(
        into out: UnsafeMutableRawBufferPointer, transactionID: TransactionID, xorMappedAddress address: TransportAddress,
        key: [UInt8], software: String?
    ) -> Int? {
        key.withUnsafeBytes { k in
            guard var software else {
                return write(into: out, transactionID: transactionID, xorMappedAddress: address, key: k, software: nil)
            }
            return software.withUTF8 { s in
                write(
                    into: out, transactionID: transactionID, xorMappedAddress: address, key: k,
                    software: UnsafeRawBufferPointer(s))
            }
        }
    }
}
