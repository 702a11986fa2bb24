// The AES and HMAC-SHA1 primitives SRTP (RFC 3711, RFC 7714) needs, over
// OpenSSL 3.0, with every context made once per session key and reused per
// packet. The packet layout, ROC, replay windows and SRTCP index live in
// Swift (Sources/SRTP); this file only moves bytes through the ciphers.
#ifndef SWIFTLET_CSHIM_SRTP_H
#define SWIFTLET_CSHIM_SRTP_H

#include <stddef.h>
#include <stdint.h>

/// One session key's cipher state: an AES-128-CTR (for AES-CM) or
/// AES-128-GCM context fixed to one direction, plus, for AES-CM, the
/// HMAC-SHA1 inner and outer states after the padded key block.
typedef struct swiftlet_srtp_cipher swiftlet_srtp_cipher;

/// Makes the state for a 16-byte AES key. `gcm` chooses AES-128-GCM (else
/// AES-128-CTR); `encrypt` the direction; `auth_key` (AES-CM only, may be
/// NULL for GCM) the HMAC-SHA1 key. Returns NULL on failure. Allocates:
/// control plane only.
swiftlet_srtp_cipher *swiftlet_srtp_cipher_new(int gcm, int encrypt, const uint8_t *key,
                                               const uint8_t *auth_key, size_t auth_key_length);
void swiftlet_srtp_cipher_free(swiftlet_srtp_cipher *cipher);

/// AES-CTR (RFC 3711 section 4.1.1): XORs the keystream starting at counter
/// block `iv` (16 bytes) into `data` in place. 1 on success.
int swiftlet_srtp_ctr_xor(swiftlet_srtp_cipher *cipher, const uint8_t *iv, uint8_t *data, size_t length);

/// HMAC-SHA1 (RFC 2104, RFC 3711 section 4.2) of `message || tail` into
/// `out` (20 bytes), restoring the precomputed key states by struct copy.
void swiftlet_srtp_hmac_sha1(const swiftlet_srtp_cipher *cipher, const uint8_t *message, size_t message_length,
                             const uint8_t *tail, size_t tail_length, uint8_t *out);

/// AES-GCM seal in place (RFC 7714 section 5.1): IV 12 bytes, AAD given in
/// two parts (the SRTCP index word is not next to the header), tag 16
/// bytes out. 1 on success.
int swiftlet_srtp_gcm_seal(swiftlet_srtp_cipher *cipher, const uint8_t *iv, const uint8_t *aad, size_t aad_length,
                           const uint8_t *aad_tail, size_t aad_tail_length, uint8_t *data, size_t length,
                           uint8_t *tag);

/// AES-GCM open in place: 1 when the 16-byte `tag` verifies, 0 when not
/// (the data is then unspecified), -1 on an OpenSSL failure.
int swiftlet_srtp_gcm_open(swiftlet_srtp_cipher *cipher, const uint8_t *iv, const uint8_t *aad, size_t aad_length,
                           const uint8_t *aad_tail, size_t aad_tail_length, uint8_t *data, size_t length,
                           const uint8_t *tag);

/// The AES-CM keystream under a one-off key (RFC 3711 section 4.3 key
/// derivation, appendix B.2 vectors): `length` bytes from counter block
/// `iv` into `out`. Allocates a context: control plane only. 1 on success.
int swiftlet_srtp_aes_cm_keystream(const uint8_t *key, const uint8_t *iv, uint8_t *out, size_t length);

/// Compares `length` bytes without an early exit: 0 when equal.
int swiftlet_srtp_tag_differs(const uint8_t *a, const uint8_t *b, size_t length);

#endif
