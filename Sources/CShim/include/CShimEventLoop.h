// eventfd and epoll for NetIO's worker loop: not in Swift's Glibc module.
#ifndef SWIFTLET_CSHIM_EVENTLOOP_H
#define SWIFTLET_CSHIM_EVENTLOOP_H

#include <stdint.h>

int swiftlet_eventfd_create(void);
int swiftlet_epoll_create(void);
/// Watches `fd` for readability; `tag` comes back from swiftlet_epoll_wait.
int swiftlet_epoll_add_readable(int epfd, int fd, uint64_t tag);
int swiftlet_epoll_remove(int epfd, int fd);
/// Waits up to `timeout_ms` (-1: forever); writes up to `max` ready tags.
int swiftlet_epoll_wait(int epfd, uint64_t *tags, int max, int timeout_ms);

#endif
