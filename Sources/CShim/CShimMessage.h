// Private to CShim's C files (not in include/, so Swift never sees it):
// the one place an mmsghdr entry is pointed at its data and its peer.
#ifndef SWIFTLET_CSHIM_MESSAGE_H
#define SWIFTLET_CSHIM_MESSAGE_H

#include <string.h>
#include <sys/socket.h>

// Clears message `index` of an mmsghdr array (no control message, msg_len
// 0) and points it at `iov_count` iovecs and at `address`: the peer to send
// to, or room for the sender's address on a receive.
static inline struct mmsghdr *swiftlet_message_point(void *messages, unsigned index, struct iovec *iov, size_t iov_count,
                                                     void *address, socklen_t address_length) {
    struct mmsghdr *m = (struct mmsghdr *)messages + index;
    memset(m, 0, sizeof *m);
    m->msg_hdr.msg_iov = iov;
    m->msg_hdr.msg_iovlen = iov_count;
    m->msg_hdr.msg_name = address;
    m->msg_hdr.msg_namelen = address_length;
    return m;
}

#endif
