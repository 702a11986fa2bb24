/// DTLS-SRTP protection profiles (RFC 5764 section 4.1.2, RFC 7714
/// section 14.2) that this target negotiates, with the master key and salt
/// lengths that size the exported keying material (RFC 5764 section 4.2).
public enum SRTPProtectionProfile: UInt16, CaseIterable, Hashable, Sendable {
    /// SRTP_AES128_CM_HMAC_SHA1_80 (RFC 5764 section 4.1.2).
    case aes128CmHmacSha1_80 = 0x0001
    /// SRTP_AEAD_AES_128_GCM (RFC 7714 section 14.2).
    case aeadAes128Gcm = 0x0007

    /// The profile name OpenSSL's `SSL_CTX_set_tlsext_use_srtp` expects.
    var openSSLName: String {
        switch self {
        case .aes128CmHmacSha1_80: "SRTP_AES128_CM_SHA1_80"
        case .aeadAes128Gcm: "SRTP_AEAD_AES_128_GCM"
        }
    }

    /// Master key length in bytes.
    public var masterKeyLength: Int { 16 }

    /// Master salt length in bytes: 112 bits for AES-CM (RFC 3711 section
    /// 8.2), 96 bits for AEAD (RFC 7714 section 12).
    public var masterSaltLength: Int {
        switch self {
        case .aes128CmHmacSha1_80: 14
        case .aeadAes128Gcm: 12
        }
    }

    /// Bytes to export with label "EXTRACTOR-dtls_srtp":
    /// 2 * (key + salt), RFC 5764 section 4.2.
    public var keyingMaterialLength: Int { 2 * (masterKeyLength + masterSaltLength) }

    /// Our offer and, as a server, our choice order: GCM first, because it
    /// is cheaper per packet here (FACTS.md) and authenticates the header.
    public static let defaultPreference: [SRTPProtectionProfile] = [.aeadAes128Gcm, .aes128CmHmacSha1_80]
}
