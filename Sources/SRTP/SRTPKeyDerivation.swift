import CShim

/// RFC 3711 section 4.3 key derivation with key_derivation_rate 0 (what
/// DTLS-SRTP uses, RFC 5764 section 4.1.2): every session key is the
/// AES-CM keystream under the master key from x || 0x0000, where x is the
/// master salt (padded with zeros to 112 bits for GCM's 96-bit salt, RFC
/// 7714 section 11) XOR the label in the byte that r = 0 leaves for it
/// (bit 48 up, byte 7 of x).
package enum SRTPKeyDerivation {
    package static func derive(masterKey: SRTPMasterKey, label: UInt8, length: Int) throws(SRTPError) -> [UInt8] {
        var iv = [UInt8](repeating: 0, count: 16)
        for (i, byte) in masterKey.salt.enumerated() where i < 14 { iv[i] = byte }
        iv[7] ^= label
        return try keystream(key: masterKey.key, counter: iv, length: length)
    }

    /// The AES-128-CM keystream (RFC 3711 section 4.1.1) from a 16-byte
    /// counter block; also what appendix B.2's vectors check.
    package static func keystream(key: [UInt8], counter: [UInt8], length: Int) throws(SRTPError) -> [UInt8] {
        guard key.count == 16, counter.count == 16, length >= 0 else { throw .badParameter }
        var out = [UInt8](repeating: 0, count: length)
        let ok = out.withUnsafeMutableBufferPointer { swiftlet_srtp_aes_cm_keystream(key, counter, $0.baseAddress, length) }
        guard ok == 1 else { throw .other(code: 0) }
        return out
    }
}
