// See include/CSCTPShim.h. Why C: usrsctp's callbacks take a union and a
// struct by value and its debug hook is variadic, and its socket options
// are C structs with flexible array members.
#include "CSCTPShim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <usrsctp.h>

static swiftlet_sctp_output_fn output_hook;
static swiftlet_sctp_message_fn message_hook;
static swiftlet_sctp_event_fn event_hook;

static int conn_output(void *addr, void *buffer, size_t length, uint8_t tos, uint8_t set_df) {
    (void)tos;
    (void)set_df;
    output_hook(addr, (const uint8_t *)buffer, length);
    return 0;
}

static void notification(void *context, const union sctp_notification *note, size_t length) {
    if (length < sizeof(note->sn_header)) return;
    switch (note->sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE:
        if (length < sizeof(struct sctp_assoc_change)) return;
        switch (note->sn_assoc_change.sac_state) {
        case SCTP_COMM_UP:
        case SCTP_RESTART:
            event_hook(context, SWIFTLET_SCTP_EVENT_UP, 0);
            break;
        case SCTP_COMM_LOST:
        case SCTP_SHUTDOWN_COMP:
        case SCTP_CANT_STR_ASSOC:
            event_hook(context, SWIFTLET_SCTP_EVENT_DOWN, 0);
            break;
        default:
            break;
        }
        break;
    case SCTP_STREAM_RESET_EVENT: {
        const struct sctp_stream_reset_event *reset = &note->sn_strreset_event;
        if (length < sizeof(*reset) || !(reset->strreset_flags & SCTP_STREAM_RESET_INCOMING_SSN)) return;
        size_t count = (length - sizeof(*reset)) / sizeof(uint16_t);
        for (size_t i = 0; i < count; i++) {
            event_hook(context, SWIFTLET_SCTP_EVENT_STREAM_RESET_INCOMING, reset->strreset_stream_list[i]);
        }
        break;
    }
    default:
        break;
    }
}

// usrsctp calls this from inside usrsctp_conninput / usrsctp_handle_timers
// (no threads of its own), with a buffer it malloc'ed for us to free.
static int receive(struct socket *sock, union sctp_sockstore addr, void *data, size_t length,
                   struct sctp_rcvinfo info, int flags, void *context) {
    (void)sock;
    (void)addr;
    if (data == NULL) {
        // End of file: the association is gone.
        event_hook(context, SWIFTLET_SCTP_EVENT_DOWN, 0);
        return 1;
    }
    if (flags & MSG_NOTIFICATION) {
        notification(context, (const union sctp_notification *)data, length);
    } else {
        message_hook(context, info.rcv_sid, ntohl(info.rcv_ppid), (info.rcv_flags & SCTP_UNORDERED) != 0,
                     (flags & MSG_EOR) != 0, (const uint8_t *)data, length);
    }
    free(data);
    return 1;
}

int swiftlet_sctp_initialize(swiftlet_sctp_output_fn output, swiftlet_sctp_message_fn message,
                             swiftlet_sctp_event_fn event) {
    output_hook = output;
    message_hook = message;
    event_hook = event;
    // Port 0: no UDP encapsulation socket; conn mode only.
    usrsctp_init_nothreads(0, conn_output, NULL);
    usrsctp_sysctl_set_sctp_ecn_enable(0);
    return 0;
}

static int set_option(struct socket *sock, int level, int name, const void *value, socklen_t length) {
    return usrsctp_setsockopt(sock, level, name, value, length);
}

void *swiftlet_sctp_open(void *context, uint16_t local_port, uint16_t remote_port, uint16_t streams,
                         uint32_t buffer_bytes) {
    struct socket *sock = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, receive, NULL, 0, context);
    if (sock == NULL) return NULL;
    int on = 1;
    struct linger linger = {.l_onoff = 1, .l_linger = 0};
    struct sctp_assoc_value reset = {.assoc_id = SCTP_ALL_ASSOC, .assoc_value = SCTP_ENABLE_RESET_STREAM_REQ};
    struct sctp_initmsg init = {.sinit_num_ostreams = streams, .sinit_max_instreams = streams};
    int buffer = (int)buffer_bytes;
    if (usrsctp_set_non_blocking(sock, 1) != 0 ||
        set_option(sock, SOL_SOCKET, SO_LINGER, &linger, sizeof(linger)) != 0 ||
        set_option(sock, IPPROTO_SCTP, SCTP_NODELAY, &on, sizeof(on)) != 0 ||
        set_option(sock, IPPROTO_SCTP, SCTP_ENABLE_STREAM_RESET, &reset, sizeof(reset)) != 0 ||
        set_option(sock, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof(init)) != 0 ||
        set_option(sock, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer)) != 0 ||
        set_option(sock, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer)) != 0) {
        usrsctp_close(sock);
        return NULL;
    }
    const uint16_t events[] = {SCTP_ASSOC_CHANGE, SCTP_STREAM_RESET_EVENT};
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        struct sctp_event event = {.se_assoc_id = SCTP_ALL_ASSOC, .se_type = events[i], .se_on = 1};
        if (set_option(sock, IPPROTO_SCTP, SCTP_EVENT, &event, sizeof(event)) != 0) {
            usrsctp_close(sock);
            return NULL;
        }
    }
    // Each SCTP packet becomes one DTLS record in one datagram of at most
    // 1200 bytes (our DTLS MTU, as browsers use): a fixed SCTP path MTU
    // leaves room for the record header, explicit nonce and GCM tag.
    struct sctp_paddrparams params;
    memset(&params, 0, sizeof(params));
    params.spp_assoc_id = SCTP_FUTURE_ASSOC;
    params.spp_flags = SPP_PMTUD_DISABLE;
    params.spp_pathmtu = SWIFTLET_SCTP_PATH_MTU;
    if (set_option(sock, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &params, sizeof(params)) != 0) {
        usrsctp_close(sock);
        return NULL;
    }
    struct sockaddr_conn local = {0};
    local.sconn_family = AF_CONN;
    local.sconn_port = htons(local_port);
    local.sconn_addr = context;
    if (usrsctp_bind(sock, (struct sockaddr *)&local, sizeof(local)) != 0) {
        usrsctp_close(sock);
        return NULL;
    }
    struct sockaddr_conn remote = local;
    remote.sconn_port = htons(remote_port);
    // Non-blocking: EINPROGRESS is the normal answer.
    if (usrsctp_connect(sock, (struct sockaddr *)&remote, sizeof(remote)) != 0 && errno != EINPROGRESS) {
        usrsctp_close(sock);
        return NULL;
    }
    return sock;
}

long swiftlet_sctp_send(void *socket, uint16_t stream, uint32_t ppid, int unordered, int max_retransmits,
                        const uint8_t *data, size_t length, int *buffer_full) {
    *buffer_full = 0;
    struct sctp_sendv_spa spa = {0};
    spa.sendv_flags = SCTP_SEND_SNDINFO_VALID;
    spa.sendv_sndinfo.snd_sid = stream;
    spa.sendv_sndinfo.snd_ppid = htonl(ppid);
    spa.sendv_sndinfo.snd_flags = SCTP_EOR | (unordered ? SCTP_UNORDERED : 0);
    if (max_retransmits >= 0) {
        spa.sendv_flags |= SCTP_SEND_PRINFO_VALID;
        spa.sendv_prinfo.pr_policy = SCTP_PR_SCTP_RTX;
        spa.sendv_prinfo.pr_value = (uint32_t)max_retransmits;
    }
    ssize_t sent = usrsctp_sendv((struct socket *)socket, data, length, NULL, 0, &spa, sizeof(spa),
                                 SCTP_SENDV_SPA, 0);
    if (sent >= 0) return (long)sent;
    int error = errno;
    if (error == EAGAIN || error == EWOULDBLOCK) *buffer_full = 1;
    return -(long)error;
}

int swiftlet_sctp_reset_stream(void *socket, uint16_t stream) {
    size_t size = sizeof(struct sctp_reset_streams) + sizeof(uint16_t);
    struct sctp_reset_streams *reset = calloc(1, size);
    if (reset == NULL) return -ENOMEM;
    reset->srs_assoc_id = SCTP_ALL_ASSOC;
    reset->srs_flags = SCTP_STREAM_RESET_OUTGOING;
    reset->srs_number_streams = 1;
    reset->srs_stream_list[0] = stream;
    int result = usrsctp_setsockopt((struct socket *)socket, IPPROTO_SCTP, SCTP_RESET_STREAMS, reset, (socklen_t)size);
    free(reset);
    return result == 0 ? 0 : -errno;
}

void swiftlet_sctp_close(void *socket) { usrsctp_close((struct socket *)socket); }
void swiftlet_sctp_register(void *context) { usrsctp_register_address(context); }
void swiftlet_sctp_deregister(void *context) { usrsctp_deregister_address(context); }
void swiftlet_sctp_input(void *context, const uint8_t *packet, size_t length) {
    usrsctp_conninput(context, packet, length, 0);
}
void swiftlet_sctp_handle_timers(uint32_t elapsed_milliseconds) { usrsctp_handle_timers(elapsed_milliseconds); }
