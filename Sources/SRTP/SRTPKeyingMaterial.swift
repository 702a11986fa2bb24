import Wire

/// One direction's SRTP master key and master salt (RFC 3711 section 8.2).
/// Control plane: made once per DTLS handshake.
package struct SRTPMasterKey: Sendable, Hashable {
    package let key: [UInt8]
    package let salt: [UInt8]

    /// Checks both lengths against `profile`.
    package init(key: [UInt8], salt: [UInt8], profile: SRTPProfile) throws(SRTPError) {
        guard key.count == profile.masterKeyLength else {
            throw .wrongKeyLength(expected: profile.masterKeyLength, actual: key.count)
        }
        guard salt.count == profile.masterSaltLength else {
            throw .wrongKeyLength(expected: profile.masterSaltLength, actual: salt.count)
        }
        self.key = key
        self.salt = salt
    }

    /// key || salt, the layout libsrtp's `srtp_policy_t.key` expects.
    var concatenated: [UInt8] { key + salt }
}

/// The SRTP master keys derived from a DTLS handshake, split into the one
/// we protect with (`local`) and the one we unprotect with (`remote`).
///
/// RFC 5764 section 4.2: the exporter (RFC 5705) with label
/// `EXTRACTOR-dtls_srtp`, no context, and length
/// `2 * (key + salt)` yields
///
///     client_write_SRTP_master_key[key]
///     server_write_SRTP_master_key[key]
///     client_write_SRTP_master_salt[salt]
///     server_write_SRTP_master_salt[salt]
///
/// in that order: both keys first, then both salts. The DTLS client sends
/// with the client keys, the server with the server keys.
package struct SRTPKeyingMaterial: Sendable, Hashable {
    /// Our role in the DTLS handshake (RFC 5763 section 5: set by the SDP
    /// `a=setup` attribute, not by who offered).
    package enum DTLSRole: Sendable, Hashable { case client, server }

    /// The exporter label of RFC 5764 section 4.2.
    package static let exporterLabel = "EXTRACTOR-dtls_srtp"

    package let profile: SRTPProfile
    /// Protects what we send (our role's write key).
    package let local: SRTPMasterKey
    /// Unprotects what the peer sends (the other role's write key).
    package let remote: SRTPMasterKey

    /// Splits exporter output of exactly `profile.keyingMaterialLength`
    /// bytes; any other length throws `wrongKeyLength`.
    package init(exported: [UInt8], profile: SRTPProfile, role: DTLSRole) throws(SRTPError) {
        let k = profile.masterKeyLength, s = profile.masterSaltLength
        guard exported.count == profile.keyingMaterialLength else {
            throw .wrongKeyLength(expected: profile.keyingMaterialLength, actual: exported.count)
        }
        // Offsets are fixed by the profile and the count is checked above.
        let client = try SRTPMasterKey(
            key: Array(exported[0..<k]),
            salt: Array(exported[2 * k..<2 * k + s]), profile: profile)
        let server = try SRTPMasterKey(
            key: Array(exported[k..<2 * k]),
            salt: Array(exported[2 * k + s..<2 * k + 2 * s]), profile: profile)
        self.profile = profile
        switch role {
        case .client: local = client; remote = server
        case .server: local = server; remote = client
        }
    }
}
