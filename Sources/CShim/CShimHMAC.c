// See include/CShimHMAC.h. The low-level SHA1_* calls (deprecated in 3.0,
// still present; CShimSRTP.c says why) keep every state in a plain struct
// on this stack.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "CShimHMAC.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <string.h>

void swiftlet_hmac_sha1(const uint8_t *key, size_t key_length, const uint8_t *first, size_t first_length,
                        const uint8_t *second, size_t second_length, uint8_t *out) {
    uint8_t block[SHA_CBLOCK];
    uint8_t digest[SHA_DIGEST_LENGTH];
    memset(block, 0, sizeof block);
    if (key_length > sizeof block) {
        SHA1(key, key_length, digest);
        memcpy(block, digest, sizeof digest);
    } else if (key_length > 0) {
        memcpy(block, key, key_length);
    }
    uint8_t pad[SHA_CBLOCK];
    SHA_CTX state;
    for (size_t i = 0; i < sizeof pad; i++) pad[i] = block[i] ^ 0x36;
    SHA1_Init(&state);
    SHA1_Update(&state, pad, sizeof pad);
    if (first_length > 0) SHA1_Update(&state, first, first_length);
    if (second_length > 0) SHA1_Update(&state, second, second_length);
    SHA1_Final(digest, &state);
    for (size_t i = 0; i < sizeof pad; i++) pad[i] = block[i] ^ 0x5c;
    SHA1_Init(&state);
    SHA1_Update(&state, pad, sizeof pad);
    SHA1_Update(&state, digest, sizeof digest);
    SHA1_Final(out, &state);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
    OPENSSL_cleanse(&state, sizeof state);
}
