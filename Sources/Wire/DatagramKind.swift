/// What a datagram on a WebRTC port carries, decided by its first bytes
/// (RFC 7983 section 7, as updated by RFC 9443 section 3.1):
///
///                  +----------------+
///                  |        [0..3] -+--> STUN
///                  |      [16..19] -+--> ZRTP (dropped)
///     packet -->   |      [20..63] -+--> DTLS
///                  |      [64..79] -+--> TURN channel (dropped)
///                  |    [128..191] -+--> RTP or RTCP (RFC 5761 section 4:
///                  |                |    second byte 192...223 is RTCP)
///                  +----------------+
///
/// Everything else is dropped. One port carries all of it, so this is the
/// first decision for every datagram and must be cheap.
package enum DatagramKind: Equatable, Sendable {
    case stun, dtls, rtp, rtcp, unknown

    @inline(__always)
    package static func classify(_ bytes: UnsafeRawBufferPointer) -> DatagramKind {
        guard let first = bytes.first else { return .unknown }
        switch first {
        case 0...3: return .stun
        case 20...63: return .dtls
        case 128...191:
            guard bytes.count >= 2 else { return .unknown }
            return (192...223).contains(bytes[1]) ? .rtcp : .rtp
        default: return .unknown
        }
    }
}
