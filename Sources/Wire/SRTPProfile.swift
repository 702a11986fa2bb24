/// An SRTP protection profile negotiated by DTLS-SRTP (RFC 5764 section
/// 4.1.2, the "use_srtp" extension), with the sizes that follow from it.
/// It lives in Wire because two layers share it without depending on each
/// other: DTLS negotiates it and sizes the exported keys with it, SRTP
/// protects with it.
///
/// Only the two profiles browsers offer and we accept are modelled:
/// - `aesCM128HMACSHA1_80`: AES counter mode with a 128-bit key and a
///   80-bit HMAC-SHA1 tag (RFC 3711 sections 4.1.1 and 4.2.1), profile id
///   0x0001 (RFC 5764 section 4.1.2).
/// - `aeadAES128GCM`: AES-GCM with a 128-bit key and a 16-byte tag (RFC
///   7714 section 14.2), profile id 0x0007 (RFC 7714 section 14.2).
package enum SRTPProfile: Sendable, Hashable, CaseIterable {
    case aesCM128HMACSHA1_80
    case aeadAES128GCM

    /// Maps a DTLS-SRTP protection profile id from the use_srtp extension;
    /// nil for any profile we do not implement (e.g. the 32-bit tag or
    /// AES-256 variants).
    package init?(dtlsProfileID: UInt16) {
        switch dtlsProfileID {
        case 0x0001: self = .aesCM128HMACSHA1_80
        case 0x0007: self = .aeadAES128GCM
        default: return nil
        }
    }

    /// The DTLS-SRTP protection profile id (RFC 5764 section 4.1.2, RFC 7714
    /// section 14.2).
    package var dtlsProfileID: UInt16 {
        switch self {
        case .aesCM128HMACSHA1_80: 0x0001
        case .aeadAES128GCM: 0x0007
        }
    }

    /// Master key length in bytes: 128 bits for both profiles.
    package var masterKeyLength: Int { 16 }

    /// Master salt length in bytes: 112 bits for AES-CM (RFC 3711 section
    /// 8.2), 96 bits for AES-GCM (RFC 7714 section 8.1 and 12).
    package var masterSaltLength: Int {
        switch self {
        case .aesCM128HMACSHA1_80: 14
        case .aeadAES128GCM: 12
        }
    }

    /// Bytes appended to an RTP packet by protection: the 80-bit HMAC tag
    /// (RFC 3711 section 3.1), or the 16-byte GCM tag (RFC 7714 section 5).
    /// No MKI is ever used with DTLS-SRTP.
    package var rtpTrailerLength: Int {
        switch self {
        case .aesCM128HMACSHA1_80: 10
        case .aeadAES128GCM: 16
        }
    }

    /// The authentication tag alone; for both profiles this is the whole
    /// SRTP trailer.
    package var authTagLength: Int { rtpTrailerLength }

    /// Bytes appended to an RTCP packet by protection: the 4-byte E flag and
    /// SRTCP index (RFC 3711 section 3.4, RFC 7714 section 9.1) plus the tag.
    package var rtcpTrailerLength: Int { 4 + authTagLength }

    /// Length of the DTLS exporter output to request with the label
    /// `EXTRACTOR-dtls_srtp` (RFC 5764 section 4.2): two keys and two salts.
    package var keyingMaterialLength: Int { 2 * (masterKeyLength + masterSaltLength) }

    /// Our offer and, as a DTLS server, our choice order: GCM first, because
    /// it is 4 to 5 times cheaper per packet here (docs/PERFORMANCE.md) and
    /// authenticates the header.
    package static let defaultPreference: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HMACSHA1_80]
}
