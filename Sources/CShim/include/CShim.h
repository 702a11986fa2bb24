// One-line C wrappers for what Swift cannot import from the C libraries:
// function-like macros, variadic functions, and the GNU batch socket calls.
// Keep every function here trivial; logic belongs in Swift.
#ifndef SWIFTLET_CSHIM_H
#define SWIFTLET_CSHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "CShimEventLoop.h"
#include "CShimGSO.h"
#include "CShimTCP.h"
#include "CShimSRTP.h"
#include "CShimHMAC.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct x509_st X509;
typedef struct bio_st BIO;
typedef struct OpusEncoder OpusEncoder;

// OpenSSL macros (FACTS.md: not importable).
int swiftlet_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
int swiftlet_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
long swiftlet_SSL_CTX_set_read_ahead(SSL_CTX *ctx, int yes);
long swiftlet_DTLS_set_link_mtu(SSL *ssl, long mtu);
long swiftlet_SSL_set_mtu(SSL *ssl, long mtu);
long swiftlet_SSL_set_options_no_query_mtu(SSL *ssl);
long swiftlet_DTLSv1_get_timeout(SSL *ssl, long *seconds, long *microseconds);
long swiftlet_DTLSv1_handle_timeout(SSL *ssl);
EVP_PKEY *swiftlet_EVP_EC_gen_p256(void);
// TLS over memory BIOs (Sources/TLS).
long swiftlet_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *x509);
long swiftlet_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
long swiftlet_BIO_set_mem_eof_return(BIO *bio, int value);
long swiftlet_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);

// Opus: opus_encoder_ctl is variadic.
int swiftlet_opus_set_bitrate(OpusEncoder *enc, int32_t bitrate);
int swiftlet_opus_set_dtx(OpusEncoder *enc, int32_t on);
int swiftlet_opus_set_complexity(OpusEncoder *enc, int32_t complexity);

// Batched datagram I/O (glibc's recvmmsg/sendmmsg are not in Swift's Glibc
// module). `messages` is an array of `count` mmsghdr laid out by the caller
// through the accessors below, so Swift never needs the struct layout.
size_t swiftlet_mmsghdr_size(void);
void swiftlet_mmsghdr_set(void *messages, unsigned index, struct iovec *iov,
                          void *address, socklen_t address_length);
unsigned swiftlet_mmsghdr_length(const void *messages, unsigned index);
socklen_t swiftlet_mmsghdr_address_length(const void *messages, unsigned index);
int swiftlet_recvmmsg(int fd, void *messages, unsigned count, int flags);
int swiftlet_sendmmsg(int fd, void *messages, unsigned count, int flags);

// Local addresses of datagrams on a wildcard-bound socket (IP_PKTINFO,
// IPV6_PKTINFO: RFC 3542 section 6; ip(7)). Swift cannot use the CMSG_*
// macros, so the control messages are read here (and written, for a
// send, by swiftlet_gso_set_message in CShimGSO.h). `control` is a
// caller-owned buffer of at least swiftlet_pktinfo_space() bytes.
size_t swiftlet_pktinfo_space(void);
// Asks the kernel to report each datagram's destination address
// (IP_PKTINFO on AF_INET, IPV6_RECVPKTINFO on AF_INET6). 0 on success.
int swiftlet_enable_pktinfo(int fd, int ipv6);
// Socket buffers (socket(7)). Sets SO_RCVBUF / SO_SNDBUF to `bytes`,
// first with the FORCE variant (allowed with CAP_NET_ADMIN, past
// net.core.rmem_max / wmem_max), else the plain one (the kernel caps it
// there); 0 only reads. Returns the size the kernel now uses, halved (it reports double
// the value asked for, the rest being its bookkeeping), or -1.
int swiftlet_set_receive_buffer(int fd, int bytes);
int swiftlet_set_send_buffer(int fd, int bytes);
// Datagrams the kernel dropped on this socket because its receive buffer
// was full (SO_MEMINFO, SK_MEMINFO_DROPS: sock_diag), or -1.
long long swiftlet_socket_receive_drops(int fd);
// Points message `index` at `control` (capacity bytes, 0: no control).
void swiftlet_mmsghdr_set_control(void *messages, unsigned index, void *control, size_t capacity);
// After recvmmsg: the destination address of message `index` from its
// control messages, as a sockaddr_in or sockaddr_in6 with port 0 in *out;
// 1 if found, 0 if not.
int swiftlet_mmsghdr_destination(const void *messages, unsigned index, struct sockaddr_storage *out);

// Names the calling thread (pthread_setname_np, a GNU extension; at most 15
// bytes, longer is cut): /proc/PID/task/TID/comm, top -H and perf show it.
void swiftlet_set_thread_name(const char *name);

#endif
