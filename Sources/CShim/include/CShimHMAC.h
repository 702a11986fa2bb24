// HMAC-SHA1 (RFC 2104) in one call on the stack, for STUN's
// MESSAGE-INTEGRITY (RFC 8489 section 14.5): nothing is allocated, where
// OpenSSL 3.0's EVP_MAC makes and frees provider contexts on every call.
#ifndef SWIFTLET_CSHIM_HMAC_H
#define SWIFTLET_CSHIM_HMAC_H

#include <stddef.h>
#include <stdint.h>

/// HMAC-SHA1 under `key` of `first || second` into `out` (20 bytes). Keys
/// longer than SHA-1's 64-byte block are hashed first (RFC 2104 section 3).
/// `second` may be NULL when `second_length` is 0.
void swiftlet_hmac_sha1(const uint8_t *key, size_t key_length, const uint8_t *first, size_t first_length,
                        const uint8_t *second, size_t second_length, uint8_t *out);

#endif
