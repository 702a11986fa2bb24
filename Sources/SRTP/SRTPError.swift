import CSRTP

/// Why a packet was not protected or unprotected, or a session not made.
/// The media path counts these and drops the packet; none of them is a
/// programming error except `bufferTooSmall` and `wrongDirection`.
package enum SRTPError: Error, Sendable, Hashable {
    /// The tag did not verify (RFC 3711 section 3.3 step 5): tampered,
    /// wrong key, or not SRTP at all.
    case authFailure
    /// The packet index lies behind the replay window (RFC 3711 section
    /// 3.3.2): too late to tell whether it was seen.
    case replayOld
    /// The packet index was already received inside the window: a replay or
    /// a duplicate.
    case replayFail
    /// Not acceptable as given: the backend rejected the packet or policy as
    /// malformed, the RTP/RTCP version is not 2, or an AES-CM SRTCP packet
    /// has its E flag clear (RFC 3711 section 3.4; libsrtp's `cant_check`,
    /// whatever the tag; AES-GCM accepts an authentic one, RFC 7714
    /// section 9.3).
    case badParameter
    /// The packet is shorter than its RTP/RTCP header plus trailer, or its
    /// header (version, CSRC count, extension length) does not fit in it.
    /// Found before calling into C.
    case truncated
    /// The buffer has no room after the packet for the trailer libsrtp may
    /// write (`SRTPSession.rtpTrailerRoom` / `rtcpTrailerRoom`).
    case bufferTooSmall
    /// Protect called on an inbound session, or unprotect on an outbound one.
    case wrongDirection
    /// Keying material, master key or salt of the wrong length for the
    /// profile.
    case wrongKeyLength(expected: Int, actual: Int)
    /// A new SSRC would take the session past its stream bound
    /// (`SRTPSession.defaultMaxStreams`); the OpenSSL backend's per-SSRC
    /// table never grows beyond it.
    case tooManyStreams
    /// The key may protect no more packets (RFC 3711 section 9.2: the
    /// 31-bit SRTCP index is used up); a new handshake makes a new key.
    case keyExpired
    /// Any other libsrtp status (`srtp_err_status_t` raw value).
    case other(code: UInt32)

    /// Maps a non-ok libsrtp status.
    init(status: srtp_err_status_t) {
        switch status {
        case srtp_err_status_auth_fail: self = .authFailure
        case srtp_err_status_replay_old: self = .replayOld
        case srtp_err_status_replay_fail: self = .replayFail
        case srtp_err_status_bad_param, srtp_err_status_cant_check: self = .badParameter
        case srtp_err_status_key_expired: self = .keyExpired
        default: self = .other(code: status.rawValue)
        }
    }
}
