import COpenSSL
import COpus
import CSRTP
import CShim
import CVPX
import Testing

/// The C libraries link and the shims that wrap their macros work.
@Suite struct CShimTests {
    @Test func generatesP256Key() {
        let key = swiftlet_EVP_EC_gen_p256()
        #expect(key != nil)
        EVP_PKEY_free(key)
    }

    @Test func opusEncoderControlsApply() {
        var error: Int32 = 0
        let enc = opus_encoder_create(48000, 1, OPUS_APPLICATION_VOIP, &error)
        #expect(error == OPUS_OK)
        #expect(swiftlet_opus_set_bitrate(enc, 32000) == OPUS_OK)
        #expect(swiftlet_opus_set_dtx(enc, 1) == OPUS_OK)
        opus_encoder_destroy(enc)
    }

    @Test func srtpLinks() {
        // Only the SRTP target calls srtp_init(): libsrtp's global
        // initialisation is not thread-safe, and tests run in parallel.
        #expect(srtp_get_version() >= 0x0205_0000)
        var policy = srtp_policy_t()
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
        #expect(policy.rtp.cipher_key_len == 28)
    }

    @Test func vpxHasVP8Encoder() {
        #expect(vpx_codec_vp8_cx() != nil)
    }

    @Test func mmsghdrIsSized() {
        #expect(swiftlet_mmsghdr_size() >= 64)
    }
}
