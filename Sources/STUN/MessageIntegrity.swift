import CryptoPrimitives
import Wire

/// Verification of MESSAGE-INTEGRITY (RFC 8489 section 14.5),
/// MESSAGE-INTEGRITY-SHA256 (section 14.6) and FINGERPRINT (section 14.7)
/// over the original bytes of a parsed message.
///
/// Each value covers the message up to (not including) its own attribute,
/// with the header's length field set as if that attribute ended the
/// message. Only the 20-byte header is patched, in a small copy; the body is
/// hashed in place, so no contiguous copy of the message is made.
///
/// Keys: with short-term credentials (RFC 8489 section 9.1), which ICE uses
/// (RFC 8445 section 7.2.2), the key is the password's bytes; see
/// `shortTermKey(password:)`. Long-term credentials (section 9.2), which
/// TURN uses (RFC 8656 section 5): `longTermKey(username:realm:password:)`.
extension STUNMessage {
    /// The long-term credential key (RFC 8489 section 9.2.2, MD5 algorithm):
    /// MD5 of `username:realm:password`. OpaqueString processing is skipped,
    /// as for short-term keys: the TURN server's usernames and passwords are
    /// ASCII (digits, `:`, the identity, base64), which it leaves unchanged.
    package static func longTermKey(username: String, realm: String, password: String) -> [UInt8] {
        Digest.md5(Array("\(username):\(realm):\(password)".utf8))
    }

    /// The HMAC key for short-term credentials: the UTF-8 bytes of the
    /// password. RFC 8489 section 9.1 asks for OpaqueString (formerly
    /// SASLprep) processing first; ICE passwords are ice-chars only (ALPHA,
    /// DIGIT, `+`, `/`: RFC 8445 section 5.3 and RFC 8839 section 5.4), which
    /// that processing leaves unchanged, so it is deliberately skipped.
    package static func shortTermKey(password: String) -> [UInt8] { Array(password.utf8) }

    /// True when FINGERPRINT is present and its CRC-32 matches `bytes`, the
    /// exact bytes this message was parsed from.
    package func verifyFingerprint(in bytes: RawSpan) -> Bool {
        STUNIntegrity.verifyFingerprint(fingerprint, messageLength: byteCount, in: bytes)
    }

    /// True when MESSAGE-INTEGRITY is present and its HMAC-SHA1 under `key`
    /// matches `bytes`.
    package func verifyMessageIntegrity(key: [UInt8], in bytes: RawSpan) -> Bool {
        STUNIntegrity.verifyMAC(.sha1, key: key, messageIntegrity, messageLength: byteCount, in: bytes)
    }

    /// True when MESSAGE-INTEGRITY-SHA256 is present and its (possibly
    /// truncated) HMAC-SHA256 under `key` matches `bytes`.
    package func verifyMessageIntegritySHA256(key: [UInt8], in bytes: RawSpan) -> Bool {
        STUNIntegrity.verifyMAC(.sha256, key: key, messageIntegritySHA256, messageLength: byteCount, in: bytes)
    }

    /// True when at least one integrity attribute is present and every one
    /// present verifies under `key`; see `STUNIntegrity.verifyAll`.
    package func verifyIntegrity(key: [UInt8], in bytes: RawSpan) -> Bool {
        STUNIntegrity.verifyAll(
            key: key, messageIntegrity, messageIntegritySHA256, messageLength: byteCount, in: bytes)
    }

    package func verifyFingerprint(in bytes: [UInt8]) -> Bool { verifyFingerprint(in: bytes.span.bytes) }
    package func verifyMessageIntegrity(key: [UInt8], in bytes: [UInt8]) -> Bool {
        verifyMessageIntegrity(key: key, in: bytes.span.bytes)
    }
    package func verifyMessageIntegritySHA256(key: [UInt8], in bytes: [UInt8]) -> Bool {
        verifyMessageIntegritySHA256(key: key, in: bytes.span.bytes)
    }
    package func verifyIntegrity(key: [UInt8], in bytes: [UInt8]) -> Bool { verifyIntegrity(key: key, in: bytes.span.bytes) }
}

/// The one implementation of the FINGERPRINT and MAC computations, shared
/// by `STUNMessage`, `STUNMessageView`, `STUNMessageBuilder` and
/// `BindingSuccessResponseWriter`: each takes the attribute's location and
/// the message's length (as parsed), never a parsed value.
enum STUNIntegrity {
    /// FINGERPRINT's value (RFC 8489 section 14.7): CRC-32 of `header`
    /// (its length field already covering FINGERPRINT) then `body`, xored
    /// with 0x5354554E.
    static func fingerprint(header: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) -> UInt32 {
        CRC32.update(CRC32.checksum(header), body) ^ STUNMessage.fingerprintXOR
    }

    static func verifyFingerprint(
        _ location: STUNMessage.AttributeLocation?, messageLength: Int, in bytes: RawSpan
    ) -> Bool {
        guard let location, location.valueLength == 4 else { return false }
        return withBody(bytes, messageLength: messageLength, coveredUpTo: location) { header, body, value in
            fingerprint(header: header, body: body) == value.reduce(0) { $0 << 8 | UInt32($1) }
        }
    }

    /// Requiring every integrity attribute present to verify means an
    /// attacker cannot pair a valid attribute with a forged one to confuse
    /// a peer that checks the other.
    static func verifyAll(
        key: [UInt8], _ messageIntegrity: STUNMessage.AttributeLocation?,
        _ messageIntegritySHA256: STUNMessage.AttributeLocation?, messageLength: Int, in bytes: RawSpan
    ) -> Bool {
        guard messageIntegrity != nil || messageIntegritySHA256 != nil else { return false }
        if messageIntegrity != nil, !verifyMAC(.sha1, key: key, messageIntegrity, messageLength: messageLength, in: bytes) {
            return false
        }
        if messageIntegritySHA256 != nil,
            !verifyMAC(.sha256, key: key, messageIntegritySHA256, messageLength: messageLength, in: bytes)
        {
            return false
        }
        return true
    }

    static func verifyMAC(
        _ algorithm: HMAC.Algorithm, key: [UInt8], _ location: STUNMessage.AttributeLocation?, messageLength: Int,
        in bytes: RawSpan
    ) -> Bool {
        guard let location else { return false }
        return withBody(bytes, messageLength: messageLength, coveredUpTo: location) { header, body, value in
            if algorithm == .sha1 {
                // The common case (every ICE check): on the stack.
                return withUnsafeTemporaryAllocation(byteCount: 20, alignment: 1) { mac in
                    key.withUnsafeBytes { k in HMAC.sha1(key: k, header, body, into: mac) }
                    return macMatches(UnsafeRawBufferPointer(mac), value)
                }
            }
            guard let mac = key.withUnsafeBytes({ k in HMAC.authenticationCode(algorithm, key: k, parts: [header, body]) })
            else { return false }
            return mac.withUnsafeBytes { macMatches($0, value) }
        }
    }

    /// Constant-time comparison of an attribute's value with the MAC we
    /// computed; a truncated MESSAGE-INTEGRITY-SHA256 keeps the leading
    /// bytes (RFC 8489 section 14.6).
    private static func macMatches(_ mac: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool {
        guard value.count <= mac.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<value.count { difference |= mac[i] ^ value[i] }
        return difference == 0
    }

    /// Calls `body` with the patched header (a copy on the stack), the
    /// message bytes between the header and the attribute at `location`,
    /// and that attribute's value. False when `bytes` is not the message
    /// the location was parsed from.
    private static func withBody(
        _ bytes: RawSpan, messageLength: Int, coveredUpTo location: STUNMessage.AttributeLocation,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        let headerLength = STUNMessage.headerLength
        let valueEnd = location.offset + 4 + location.valueLength
        guard bytes.byteCount == messageLength, location.offset >= headerLength, valueEnd <= messageLength,
            let coveredLength = UInt16(exactly: valueEnd - headerLength)
        else { return false }
        return bytes.withUnsafeBytes { message in
            withUnsafeTemporaryAllocation(byteCount: headerLength, alignment: 1) { header in
                header.copyMemory(from: UnsafeRawBufferPointer(rebasing: message[0..<headerLength]))
                header[2] = UInt8(truncatingIfNeeded: coveredLength >> 8)
                header[3] = UInt8(truncatingIfNeeded: coveredLength)
                return body(
                    UnsafeRawBufferPointer(header),
                    UnsafeRawBufferPointer(rebasing: message[headerLength..<location.offset]),
                    UnsafeRawBufferPointer(rebasing: message[location.offset + 4..<valueEnd]))
            }
        }
    }
}
