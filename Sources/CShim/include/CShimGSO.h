// UDP generic segmentation offload (UDP_SEGMENT, Linux 4.18+; udp(7)):
// one sendmsg carries several equal-sized datagrams to one destination,
// which the kernel (or the NIC) cuts into separate datagrams. Swift cannot
// use the CMSG_* macros, so the control message is written here.
#ifndef SWIFTLET_CSHIM_GSO_H
#define SWIFTLET_CSHIM_GSO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

// Bytes of control space one message needs for IP_PKTINFO / IPV6_PKTINFO
// plus a UDP_SEGMENT cmsg.
size_t swiftlet_gso_control_space(void);
// Whether the kernel knows UDP_SEGMENT on `fd`: sets the socket-wide
// segment size to 0 (segment per message only). 0 on success, else errno.
int swiftlet_gso_probe(int fd);
// Points message `index` of an mmsghdr array at `iov_count` iovecs and the
// destination, and writes into `control` (swiftlet_gso_control_space()
// bytes) a source cmsg when `source` is AF_INET/AF_INET6 and a UDP_SEGMENT
// cmsg when `segment_size` is not 0. No control message: msg_control NULL.
void swiftlet_gso_set_message(void *messages, unsigned index, struct iovec *iov, size_t iov_count, void *address,
                              socklen_t address_length, void *control, const struct sockaddr_storage *source,
                              uint16_t segment_size);

#endif
