// SRTP primitives on OpenSSL; see include/CShimSRTP.h.
//
// HMAC-SHA1 uses the low-level SHA1_* calls (deprecated in 3.0, still
// present): EVP_MAC / HMAC re-initialization and EVP_MD_CTX_copy go through
// the provider layer and may allocate per call, while a SHA_CTX is a plain
// struct, so restoring the precomputed inner and outer states (RFC 2104
// section 4, "precomputed") is a memcpy and nothing allocates per packet.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "CShimSRTP.h"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

struct swiftlet_srtp_cipher {
    EVP_CIPHER_CTX *aes;
    SHA_CTX inner;
    SHA_CTX outer;
};

swiftlet_srtp_cipher *swiftlet_srtp_cipher_new(int gcm, int encrypt, const uint8_t *key,
                                               const uint8_t *auth_key, size_t auth_key_length) {
    swiftlet_srtp_cipher *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->aes = EVP_CIPHER_CTX_new();
    // GCM with its default 12-byte IV (RFC 7714 section 8.1); CTR with a
    // 16-byte counter block. The IV is set per packet.
    const EVP_CIPHER *type = gcm ? EVP_aes_128_gcm() : EVP_aes_128_ctr();
    if (c->aes == NULL || EVP_CipherInit_ex(c->aes, type, NULL, key, NULL, gcm ? encrypt : 1) != 1) {
        swiftlet_srtp_cipher_free(c);
        return NULL;
    }
    if (!gcm) {
        // RFC 2104: keys longer than the 64-byte block would be hashed;
        // SRTP's are 20 bytes.
        if (auth_key == NULL || auth_key_length > 64) {
            swiftlet_srtp_cipher_free(c);
            return NULL;
        }
        uint8_t ipad[64], opad[64];
        memset(ipad, 0x36, sizeof ipad);
        memset(opad, 0x5c, sizeof opad);
        for (size_t i = 0; i < auth_key_length; i++) {
            ipad[i] ^= auth_key[i];
            opad[i] ^= auth_key[i];
        }
        SHA1_Init(&c->inner);
        SHA1_Update(&c->inner, ipad, sizeof ipad);
        SHA1_Init(&c->outer);
        SHA1_Update(&c->outer, opad, sizeof opad);
    }
    return c;
}

void swiftlet_srtp_cipher_free(swiftlet_srtp_cipher *c) {
    if (c == NULL) return;
    EVP_CIPHER_CTX_free(c->aes);
    OPENSSL_cleanse(c, sizeof *c);
    free(c);
}

int swiftlet_srtp_ctr_xor(swiftlet_srtp_cipher *c, const uint8_t *iv, uint8_t *data, size_t length) {
    int written = 0;
    if (length > 0x7fffffff) return 0;
    if (EVP_EncryptInit_ex(c->aes, NULL, NULL, NULL, iv) != 1) return 0;
    return EVP_EncryptUpdate(c->aes, data, &written, data, (int)length) == 1 && (size_t)written == length;
}

void swiftlet_srtp_hmac_sha1(const swiftlet_srtp_cipher *c, const uint8_t *message, size_t message_length,
                             const uint8_t *tail, size_t tail_length, uint8_t *out) {
    SHA_CTX state = c->inner;
    uint8_t inner[SHA_DIGEST_LENGTH];
    SHA1_Update(&state, message, message_length);
    if (tail_length > 0) SHA1_Update(&state, tail, tail_length);
    SHA1_Final(inner, &state);
    state = c->outer;
    SHA1_Update(&state, inner, sizeof inner);
    SHA1_Final(out, &state);
}

static int gcm_run(swiftlet_srtp_cipher *c, const uint8_t *iv, const uint8_t *aad, size_t aad_length,
                   const uint8_t *aad_tail, size_t aad_tail_length, uint8_t *data, size_t length) {
    int written = 0;
    if (length > 0x7fffffff || aad_length > 0x7fffffff || aad_tail_length > 0x7fffffff) return 0;
    if (EVP_CipherInit_ex(c->aes, NULL, NULL, NULL, iv, -1) != 1) return 0;
    if (EVP_CipherUpdate(c->aes, NULL, &written, aad, (int)aad_length) != 1) return 0;
    if (aad_tail_length > 0 && EVP_CipherUpdate(c->aes, NULL, &written, aad_tail, (int)aad_tail_length) != 1) return 0;
    if (length > 0 && (EVP_CipherUpdate(c->aes, data, &written, data, (int)length) != 1 || (size_t)written != length))
        return 0;
    return 1;
}

int swiftlet_srtp_gcm_seal(swiftlet_srtp_cipher *c, const uint8_t *iv, const uint8_t *aad, size_t aad_length,
                           const uint8_t *aad_tail, size_t aad_tail_length, uint8_t *data, size_t length,
                           uint8_t *tag) {
    int written = 0;
    uint8_t none[16];
    if (!gcm_run(c, iv, aad, aad_length, aad_tail, aad_tail_length, data, length)) return 0;
    if (EVP_CipherFinal_ex(c->aes, none, &written) != 1) return 0;
    return EVP_CIPHER_CTX_ctrl(c->aes, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
}

int swiftlet_srtp_gcm_open(swiftlet_srtp_cipher *c, const uint8_t *iv, const uint8_t *aad, size_t aad_length,
                           const uint8_t *aad_tail, size_t aad_tail_length, uint8_t *data, size_t length,
                           const uint8_t *tag) {
    int written = 0;
    uint8_t none[16];
    if (!gcm_run(c, iv, aad, aad_length, aad_tail, aad_tail_length, data, length)) return -1;
    if (EVP_CIPHER_CTX_ctrl(c->aes, EVP_CTRL_GCM_SET_TAG, 16, (void *)tag) != 1) return -1;
    return EVP_CipherFinal_ex(c->aes, none, &written) == 1 ? 1 : 0;
}

int swiftlet_srtp_aes_cm_keystream(const uint8_t *key, const uint8_t *iv, uint8_t *out, size_t length) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int written = 0, ok = 0;
    if (ctx != NULL && length <= 0x7fffffff && EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), NULL, key, iv) == 1) {
        memset(out, 0, length);
        ok = EVP_EncryptUpdate(ctx, out, &written, out, (int)length) == 1 && (size_t)written == length;
    }
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

int swiftlet_srtp_tag_differs(const uint8_t *a, const uint8_t *b, size_t length) {
    return CRYPTO_memcmp(a, b, length) != 0;
}
