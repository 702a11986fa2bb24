import Wire

extension SRTPProfile {
    /// The profile name OpenSSL's `SSL_CTX_set_tlsext_use_srtp` expects.
    var openSSLName: String {
        switch self {
        case .aesCM128HMACSHA1_80: "SRTP_AES128_CM_SHA1_80"
        case .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM"
        }
    }
}
