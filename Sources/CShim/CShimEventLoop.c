#include "CShimEventLoop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <stddef.h>

int swiftlet_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
int swiftlet_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int swiftlet_epoll_add_readable(int epfd, int fd, uint64_t tag) {
    struct epoll_event ev = {0};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int swiftlet_epoll_remove(int epfd, int fd) { return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); }

int swiftlet_epoll_wait(int epfd, uint64_t *tags, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) tags[i] = events[i].data.u64;
    return n;
}
