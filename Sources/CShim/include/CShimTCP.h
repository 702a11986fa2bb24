// TCP and epoll-interest helpers for NetIO's TCP server: accept4 and
// MSG_NOSIGNAL need _GNU_SOURCE or are not in Swift's Glibc module, and the
// epoll event struct is packed on x86-64, so Swift never sees it.
#ifndef SWIFTLET_CSHIM_TCP_H
#define SWIFTLET_CSHIM_TCP_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/// Readiness bits reported by swiftlet_epoll_wait_ready.
#define SWIFTLET_READY_READABLE 1u
#define SWIFTLET_READY_WRITABLE 2u
/// EPOLLHUP or EPOLLERR: reported whether asked for or not.
#define SWIFTLET_READY_HANGUP 4u

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC.
int swiftlet_tcp_accept(int fd, struct sockaddr_storage *address, socklen_t *length);
/// send with MSG_NOSIGNAL: a peer that reset gives EPIPE, not SIGPIPE.
ssize_t swiftlet_tcp_send(int fd, const void *bytes, size_t count);
int swiftlet_tcp_set_nodelay(int fd, int on);
/// The pending socket error (SO_ERROR), or 0.
int swiftlet_tcp_socket_error(int fd);

/// Adds or changes the watch on `fd`: readable and/or writable (level-triggered).
int swiftlet_epoll_add_interest(int epfd, int fd, uint64_t tag, int readable, int writable);
int swiftlet_epoll_modify_interest(int epfd, int fd, uint64_t tag, int readable, int writable);
/// Like swiftlet_epoll_wait, also writing each tag's SWIFTLET_READY_* bits.
int swiftlet_epoll_wait_ready(int epfd, uint64_t *tags, uint32_t *ready, int max, int timeout_ms);

#endif
