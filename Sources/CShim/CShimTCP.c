#define _GNU_SOURCE
#include "CShimTCP.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

int swiftlet_tcp_accept(int fd, struct sockaddr_storage *address, socklen_t *length) {
    return accept4(fd, (struct sockaddr *)address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

ssize_t swiftlet_tcp_send(int fd, const void *bytes, size_t count) { return send(fd, bytes, count, MSG_NOSIGNAL); }

int swiftlet_tcp_set_nodelay(int fd, int on) {
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

int swiftlet_tcp_socket_error(int fd) {
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return 0;
    return error;
}

static int interest(int epfd, int op, int fd, uint64_t tag, int readable, int writable) {
    struct epoll_event ev = {0};
    ev.events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
    ev.data.u64 = tag;
    return epoll_ctl(epfd, op, fd, &ev);
}

int swiftlet_epoll_add_interest(int epfd, int fd, uint64_t tag, int readable, int writable) {
    return interest(epfd, EPOLL_CTL_ADD, fd, tag, readable, writable);
}

int swiftlet_epoll_modify_interest(int epfd, int fd, uint64_t tag, int readable, int writable) {
    return interest(epfd, EPOLL_CTL_MOD, fd, tag, readable, writable);
}

int swiftlet_epoll_wait_ready(int epfd, uint64_t *tags, uint32_t *ready, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        uint32_t e = events[i].events;
        tags[i] = events[i].data.u64;
        ready[i] = ((e & EPOLLIN) ? SWIFTLET_READY_READABLE : 0u) | ((e & EPOLLOUT) ? SWIFTLET_READY_WRITABLE : 0u) |
                   ((e & (EPOLLHUP | EPOLLERR)) ? SWIFTLET_READY_HANGUP : 0u);
    }
    return n;
}
