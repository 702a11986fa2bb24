#define _GNU_SOURCE
#include "CShimGSO.h"
#include "CShimMessage.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

size_t swiftlet_gso_control_space(void) { return CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(uint16_t)); }

int swiftlet_gso_probe(int fd) {
    int zero = 0;
    return setsockopt(fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) == 0 ? 0 : errno;
}

void swiftlet_gso_set_message(void *messages, unsigned index, struct iovec *iov, size_t iov_count, void *address,
                              socklen_t address_length, void *control, const struct sockaddr_storage *source,
                              uint16_t segment_size) {
    struct msghdr *h = &swiftlet_message_point(messages, index, iov, iov_count, address, address_length)->msg_hdr;
    int v4 = source && source->ss_family == AF_INET, v6 = source && source->ss_family == AF_INET6;
    if (!v4 && !v6 && segment_size == 0) return;
    size_t space = swiftlet_gso_control_space();
    memset(control, 0, space);
    h->msg_control = control;
    h->msg_controllen = space;
    struct cmsghdr *c = CMSG_FIRSTHDR(h);
    size_t used = 0;
    if (v4) {
        struct in_pktinfo info;
        memset(&info, 0, sizeof info);
        info.ipi_spec_dst = ((const struct sockaddr_in *)source)->sin_addr;
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof info);
        memcpy(CMSG_DATA(c), &info, sizeof info);
        used += CMSG_SPACE(sizeof info);
    } else if (v6) {
        struct in6_pktinfo info;
        memset(&info, 0, sizeof info);
        info.ipi6_addr = ((const struct sockaddr_in6 *)source)->sin6_addr;
        c->cmsg_level = IPPROTO_IPV6;
        c->cmsg_type = IPV6_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof info);
        memcpy(CMSG_DATA(c), &info, sizeof info);
        used += CMSG_SPACE(sizeof info);
    }
    if (segment_size != 0) {
        c = (struct cmsghdr *)((char *)control + used);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        memcpy(CMSG_DATA(c), &segment_size, sizeof segment_size);
        used += CMSG_SPACE(sizeof(uint16_t));
    }
    h->msg_controllen = used;
}
