#define _GNU_SOURCE
#include "CShim.h"

#include <openssl/ssl.h>
#include <openssl/evp.h>
#include <opus/opus.h>
#include <sys/socket.h>
#include <string.h>

int swiftlet_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_min_proto_version(ctx, version); }
int swiftlet_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_max_proto_version(ctx, version); }
long swiftlet_SSL_CTX_set_read_ahead(SSL_CTX *ctx, int yes) { return SSL_CTX_set_read_ahead(ctx, yes); }
long swiftlet_DTLS_set_link_mtu(SSL *ssl, long mtu) { return DTLS_set_link_mtu(ssl, mtu); }
long swiftlet_SSL_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
long swiftlet_SSL_set_options_no_query_mtu(SSL *ssl) { return (long)SSL_set_options(ssl, SSL_OP_NO_QUERY_MTU); }
long swiftlet_DTLSv1_get_timeout(SSL *ssl, long *seconds, long *microseconds) {
    struct timeval tv = {0, 0};
    long r = DTLSv1_get_timeout(ssl, &tv);
    *seconds = (long)tv.tv_sec;
    *microseconds = (long)tv.tv_usec;
    return r;
}
long swiftlet_DTLSv1_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
EVP_PKEY *swiftlet_EVP_EC_gen_p256(void) { return EVP_EC_gen("P-256"); }
long swiftlet_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *x509) { return SSL_CTX_add1_chain_cert(ctx, x509); }
long swiftlet_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
long swiftlet_BIO_set_mem_eof_return(BIO *bio, int value) { return BIO_set_mem_eof_return(bio, value); }
long swiftlet_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }

int swiftlet_opus_set_bitrate(OpusEncoder *enc, int32_t bitrate) { return opus_encoder_ctl(enc, OPUS_SET_BITRATE(bitrate)); }
int swiftlet_opus_set_dtx(OpusEncoder *enc, int32_t on) { return opus_encoder_ctl(enc, OPUS_SET_DTX(on)); }
int swiftlet_opus_set_complexity(OpusEncoder *enc, int32_t complexity) { return opus_encoder_ctl(enc, OPUS_SET_COMPLEXITY(complexity)); }

size_t swiftlet_mmsghdr_size(void) { return sizeof(struct mmsghdr); }
void swiftlet_mmsghdr_set(void *messages, unsigned index, struct iovec *iov,
                          void *address, socklen_t address_length) {
    struct mmsghdr *m = (struct mmsghdr *)messages + index;
    memset(m, 0, sizeof *m);
    m->msg_hdr.msg_iov = iov;
    m->msg_hdr.msg_iovlen = 1;
    m->msg_hdr.msg_name = address;
    m->msg_hdr.msg_namelen = address_length;
}
unsigned swiftlet_mmsghdr_length(const void *messages, unsigned index) {
    return ((const struct mmsghdr *)messages)[index].msg_len;
}
socklen_t swiftlet_mmsghdr_address_length(const void *messages, unsigned index) {
    return ((const struct mmsghdr *)messages)[index].msg_hdr.msg_namelen;
}
int swiftlet_recvmmsg(int fd, void *messages, unsigned count, int flags) { return recvmmsg(fd, (struct mmsghdr *)messages, count, flags, NULL); }
int swiftlet_sendmmsg(int fd, void *messages, unsigned count, int flags) { return sendmmsg(fd, (struct mmsghdr *)messages, count, flags); }
