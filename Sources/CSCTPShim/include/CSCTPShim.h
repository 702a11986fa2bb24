// usrsctp (RFC 4960 SCTP in userland) in its "conn" mode for data channels
// (RFC 8261: SCTP over DTLS): no sockets of its own, no threads of its own
// (usrsctp_init_nothreads), timers advanced by the caller's clock
// (usrsctp_handle_timers). usrsctp is one stack per process: every call
// into it goes through these functions, and the caller serialises them
// (SCTPStack in Swift holds one lock around each).
//
// The association is identified by an opaque pointer the caller registers
// (`usrsctp_register_address`): usrsctp hands it back as the output
// callback's `addr` and as the socket's `ulp_info`, so callbacks reach the
// Swift owner without any table lookup.
#ifndef SWIFTLET_CSCTPSHIM_H
#define SWIFTLET_CSCTPSHIM_H

#include <stddef.h>
#include <stdint.h>

/// A packet usrsctp wants sent to the association `context` (DTLS
/// application data, one SCTP packet per record).
typedef void (*swiftlet_sctp_output_fn)(void *context, const uint8_t *packet, size_t length);

/// One complete user message, or a piece of one when `end_of_record` is 0
/// (usrsctp delivers a large message in parts).
typedef void (*swiftlet_sctp_message_fn)(void *context, uint16_t stream, uint32_t ppid, int unordered,
                                         int end_of_record, const uint8_t *data, size_t length);

/// Association events: the kinds below, with a stream id for resets.
typedef void (*swiftlet_sctp_event_fn)(void *context, int kind, uint16_t stream);

/// The SCTP path MTU we fix (no PMTU discovery in conn mode): a packet
/// of this size plus DTLS's record overhead fits a 1200-byte datagram.
#define SWIFTLET_SCTP_PATH_MTU 1140

enum {
    SWIFTLET_SCTP_EVENT_UP = 1,
    SWIFTLET_SCTP_EVENT_DOWN = 2,
    SWIFTLET_SCTP_EVENT_STREAM_RESET_INCOMING = 3,
};

/// Once per process: usrsctp_init_nothreads with the conn output hook,
/// no debug output, ECN off (WebRTC peers do not negotiate it), and the
/// callbacks every association uses. Returns 0 on success.
int swiftlet_sctp_initialize(swiftlet_sctp_output_fn output, swiftlet_sctp_message_fn message,
                             swiftlet_sctp_event_fn event);

/// A one-to-one SCTP socket for the association `context` (already
/// registered): non-blocking, SO_LINGER 0 (close aborts at once, so no
/// callback outlives the socket), NODELAY, stream reset enabled (RFC 8831
/// section 6.7 closes a channel by resetting its stream), notifications
/// for association changes and stream resets, `streams` outbound and
/// inbound streams, bound to `local_port` and connecting to `remote_port`
/// (both ends connect: RFC 8841 section 4 and SCTP's INIT collision
/// handling). NULL on failure.
void *swiftlet_sctp_open(void *context, uint16_t local_port, uint16_t remote_port, uint16_t streams,
                         uint32_t buffer_bytes);

/// Sends one message on `stream` with `ppid`. `unordered` sets
/// SCTP_UNORDERED; `max_retransmits` >= 0 selects PR-SCTP with the
/// retransmission policy (RFC 3758, RFC 8831 section 6.6), < 0 full
/// reliability. Returns bytes accepted, or -errno; `*buffer_full` is set
/// to 1 when usrsctp's send buffer is full (EAGAIN/EWOULDBLOCK).
long swiftlet_sctp_send(void *socket, uint16_t stream, uint32_t ppid, int unordered, int max_retransmits,
                        const uint8_t *data, size_t length, int *buffer_full);

/// Outgoing stream reset (RFC 6525) of one stream: closes a channel.
int swiftlet_sctp_reset_stream(void *socket, uint16_t stream);

/// Aborts and frees the association (SO_LINGER 0 set at open).
void swiftlet_sctp_close(void *socket);

void swiftlet_sctp_register(void *context);
void swiftlet_sctp_deregister(void *context);
void swiftlet_sctp_input(void *context, const uint8_t *packet, size_t length);
void swiftlet_sctp_handle_timers(uint32_t elapsed_milliseconds);

#endif
