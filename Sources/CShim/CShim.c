#define _GNU_SOURCE
#include "CShim.h"
#include "CShimMessage.h"

#include <openssl/ssl.h>
#include <openssl/evp.h>
#include <opus/opus.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <pthread.h>
#include <string.h>
#include <linux/sock_diag.h>

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
    swiftlet_message_point(messages, index, iov, 1, address, address_length);
}
unsigned swiftlet_mmsghdr_length(const void *messages, unsigned index) {
    return ((const struct mmsghdr *)messages)[index].msg_len;
}
socklen_t swiftlet_mmsghdr_address_length(const void *messages, unsigned index) {
    return ((const struct mmsghdr *)messages)[index].msg_hdr.msg_namelen;
}
int swiftlet_recvmmsg(int fd, void *messages, unsigned count, int flags) { return recvmmsg(fd, (struct mmsghdr *)messages, count, flags, NULL); }
int swiftlet_sendmmsg(int fd, void *messages, unsigned count, int flags) { return sendmmsg(fd, (struct mmsghdr *)messages, count, flags); }

size_t swiftlet_pktinfo_space(void) { return CMSG_SPACE(sizeof(struct in6_pktinfo)); }
int swiftlet_enable_pktinfo(int fd, int ipv6) {
    int one = 1;
    return ipv6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one)
                : setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
}
void swiftlet_mmsghdr_set_control(void *messages, unsigned index, void *control, size_t capacity) {
    struct mmsghdr *m = (struct mmsghdr *)messages + index;
    m->msg_hdr.msg_control = capacity ? control : NULL;
    m->msg_hdr.msg_controllen = capacity;
}
int swiftlet_mmsghdr_destination(const void *messages, unsigned index, struct sockaddr_storage *out) {
    struct msghdr *h = (struct msghdr *)&((const struct mmsghdr *)messages)[index].msg_hdr;
    memset(out, 0, sizeof *out);
    if (!h->msg_control) return 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO && c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo))) {
            struct in_pktinfo info;
            memcpy(&info, CMSG_DATA(c), sizeof info);
            struct sockaddr_in *a = (struct sockaddr_in *)out;
            a->sin_family = AF_INET;
            a->sin_addr = info.ipi_addr;
            return 1;
        }
        if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO && c->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
            struct in6_pktinfo info;
            memcpy(&info, CMSG_DATA(c), sizeof info);
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;
            a->sin6_family = AF_INET6;
            a->sin6_addr = info.ipi6_addr;
            a->sin6_scope_id = info.ipi6_ifindex;
            return 1;
        }
    }
    return 0;
}

void swiftlet_set_thread_name(const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = 0;
    pthread_setname_np(pthread_self(), cut);
}

static int swiftlet_set_buffer(int fd, int force, int plain, int bytes) {
    if (bytes > 0 && setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof bytes) != 0
        && setsockopt(fd, SOL_SOCKET, plain, &bytes, sizeof bytes) != 0)
        return -1;
    int effective = 0;
    socklen_t length = sizeof effective;
    if (getsockopt(fd, SOL_SOCKET, plain, &effective, &length) != 0) return -1;
    return effective / 2;
}
int swiftlet_set_receive_buffer(int fd, int bytes) { return swiftlet_set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, bytes); }
int swiftlet_set_send_buffer(int fd, int bytes) { return swiftlet_set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, bytes); }
long long swiftlet_socket_receive_drops(int fd) {
    unsigned int info[SK_MEMINFO_VARS];
    socklen_t length = sizeof info;
    if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &length) != 0 || length < sizeof(unsigned int) * (SK_MEMINFO_DROPS + 1))
        return -1;
    return (long long)info[SK_MEMINFO_DROPS];
}
