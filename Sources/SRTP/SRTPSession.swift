import CSRTP
import Wire

/// `srtp_init` must run once before any other libsrtp call. Swift runs a
/// global's initializer exactly once and thread-safely (`swift_once`), so
/// every session reads this and the library is initialized once per process.
///
/// libsrtp 2.5's `srtp_init` is not idempotent: a second call (from other
/// code in the same process that initialized it first) returns `bad_param`
/// because its debug module is already registered, and the library stays
/// usable (checked on this machine). So `bad_param` counts as initialized;
/// any real failure shows up again in `srtp_create`.
private let libraryReady: Result<Void, SRTPError> = {
    let status = srtp_init()
    if status == srtp_err_status_ok || status == srtp_err_status_bad_param { return .success(()) }
    return .failure(.other(code: status.rawValue))
}()

/// One direction of SRTP and SRTCP for one transport (RFC 3711, RFC 7714),
/// on one backend (`SRTPBackend`): our `OpenSSLSRTPEngine` (the default) or
/// a libsrtp `srtp_t`, which this value alone owns and frees. Both give the
/// same bytes and the same errors.
///
/// - Inbound sessions (`ssrc_any_inbound`) unprotect whatever SSRC the peer
///   sends; libsrtp clones a stream for a new SSRC only after its first
///   packet authenticates, so garbage cannot create state.
/// - Outbound sessions (`ssrc_any_outbound`) protect any SSRC we forward.
///
/// Not thread-safe and not `Sendable` in spirit: one worker owns it. Every
/// call works in place on the caller's buffer and allocates nothing.
package struct SRTPSession: ~Copyable {
    package enum Direction: Sendable, Hashable { case inbound, outbound }

    /// Replay window for inbound SRTP, in packets (RFC 3711 section 3.3.2
    /// asks for at least 64). A packet lost and re-sent after a NACK (RFC
    /// 4585) without RTX keeps its sequence number and arrives a round trip
    /// plus the receiver's NACK delay late, possibly after a retry or two:
    /// at 1000 packets/s (a high simulcast layer) and 500 ms that is 500
    /// packets behind the newest. With the RFC's 64 such packets would be
    /// dropped as `replayOld` after costing the sender a retransmission.
    /// 1024 (what libwebrtc uses) keeps them; a packet seen once inside the
    /// window is still rejected as `replayFail`. SRTCP has its own fixed
    /// 128-packet window inside libsrtp.
    package static let defaultReplayWindow = 1024

    /// Free bytes the buffer must have after an RTP packet to protect it:
    /// libsrtp's documented contract is that `srtp_protect` may write up to
    /// `SRTP_MAX_TRAILER_LEN` (tag plus the largest MKI), though with our
    /// profiles it writes only `profile.rtpTrailerLength`.
    package static let rtpTrailerRoom = Int(SRTP_MAX_TRAILER_LEN)

    /// Free bytes needed after an RTCP packet: `SRTP_MAX_TRAILER_LEN + 4`
    /// for the E flag and SRTCP index (libsrtp 2.5 has no
    /// `SRTP_MAX_SRTCP_TRAILER_LEN`).
    package static let rtcpTrailerRoom = Int(SRTP_MAX_TRAILER_LEN) + 4

    /// The most SSRCs one session keeps state for on the OpenSSL backend
    /// (about 180 bytes each with the default window, allocated only when
    /// an SSRC first appears: 3 MB at the bound). Inbound, `PeerTransport`
    /// admits far fewer (`maxInboundSSRCs`, 64 by default, at most 1024
    /// from the server options); outbound this is the hard ceiling on the
    /// SSRCs one transport is forwarded.
    package static let defaultMaxStreams = 16384

    package let profile: SRTPProfile
    package let direction: Direction
    package let backend: SRTPBackend
    /// libsrtp's session, for `.libsrtp2`.
    private let context: OpaquePointer?
    /// Ours, for `.openssl`.
    private let engine: OpenSSLSRTPEngine?

    /// Creates the session. `replayWindow` applies to inbound SRTP (and to
    /// the outbound check that no index is protected twice) and must lie in
    /// libsrtp's range 64 ..< 32768 on either backend. `maxStreams` bounds
    /// the OpenSSL backend's per-SSRC table.
    package init(
        profile: SRTPProfile, masterKey: SRTPMasterKey, direction: Direction,
        replayWindow: Int = SRTPSession.defaultReplayWindow,
        backend: SRTPBackend = .default, maxStreams: Int = SRTPSession.defaultMaxStreams
    ) throws(SRTPError) {
        guard masterKey.key.count == profile.masterKeyLength else {
            throw .wrongKeyLength(expected: profile.masterKeyLength, actual: masterKey.key.count)
        }
        guard masterKey.salt.count == profile.masterSaltLength else {
            throw .wrongKeyLength(expected: profile.masterSaltLength, actual: masterKey.salt.count)
        }
        guard replayWindow >= 64 && replayWindow < 0x8000, maxStreams > 0 else { throw .badParameter }
        var engine: OpenSSLSRTPEngine? = nil
        var context: OpaquePointer? = nil
        switch backend {
        case .openssl:
            // RFC 3711 section 4.3; the derived keys live only until the
            // cipher contexts hold them.
            var keys = try SRTPSessionKeys(deriving: masterKey, profile: profile)
            defer { keys.erase() }
            engine = try OpenSSLSRTPEngine(
                profile: profile, sessionKeys: keys, encrypt: direction == .outbound,
                replayWindow: replayWindow, maxStreams: maxStreams)
        case .libsrtp2:
            context = try Self.makeLibSRTP(
                profile: profile, masterKey: masterKey, direction: direction, replayWindow: replayWindow)
        }
        self.profile = profile
        self.direction = direction
        self.backend = backend
        self.engine = engine
        self.context = context
    }

    /// A session on the OpenSSL backend keyed with session keys as given,
    /// skipping the key derivation: for known-answer vectors stated in
    /// session keys (RFC 7714 sections 16 and 17). libsrtp2's API takes
    /// only a master key and derives the session keys itself, so this has
    /// no libsrtp2 form; DTLS-SRTP always goes through the master key.
    package init(
        profile: SRTPProfile, sessionKeys: SRTPSessionKeys, direction: Direction,
        replayWindow: Int = SRTPSession.defaultReplayWindow, maxStreams: Int = SRTPSession.defaultMaxStreams
    ) throws(SRTPError) {
        // Keys checked for another profile have other lengths.
        guard sessionKeys.profile == profile, replayWindow >= 64 && replayWindow < 0x8000, maxStreams > 0 else {
            throw .badParameter
        }
        let engine = try OpenSSLSRTPEngine(
            profile: profile, sessionKeys: sessionKeys, encrypt: direction == .outbound,
            replayWindow: replayWindow, maxStreams: maxStreams)
        self.profile = profile
        self.direction = direction
        self.backend = .openssl
        self.engine = engine
        self.context = nil
    }

    private static func makeLibSRTP(
        profile: SRTPProfile, masterKey: SRTPMasterKey, direction: Direction, replayWindow: Int
    ) throws(SRTPError) -> OpaquePointer {
        if case .failure(let error) = libraryReady { throw error }

        var policy = srtp_policy_t()
        switch profile {
        case .aesCM128HMACSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc = srtp_ssrc_t(
            type: direction == .inbound ? ssrc_any_inbound : ssrc_any_outbound,
            value: 0)
        policy.window_size = UInt(replayWindow)
        // Never protect one index twice: with AES-GCM a second packet under
        // the same (SSRC, index) reuses the IV (RFC 7714 section 8.1 forbids
        // it), and with AES-CM the keystream. libsrtp refuses a repeated
        // index (`replayFail`) or one older than the window (`replayOld`)
        // unless `allow_repeat_tx` is set: it stays off, so the protect seam
        // itself enforces the rule for every sender (retransmissions, gap
        // fills, probes). Retransmissions go out on RTX under a new index
        // (docs/TRANSPORT.md, "One index, one packet"). SRTCP needs nothing:
        // libsrtp gives every SRTCP packet the next index itself.
        policy.allow_repeat_tx = 0

        var material = masterKey.concatenated
        var created: OpaquePointer?
        let status = material.withUnsafeMutableBufferPointer { bytes in
            policy.key = bytes.baseAddress
            return srtp_create(&created, &policy)
        }
        // libsrtp derived its session keys; do not leave the master key in
        // this temporary.
        for i in material.indices { material[i] = 0 }
        guard status == srtp_err_status_ok, let created else { throw SRTPError(status: status) }
        return created
    }

    deinit { if let context { srtp_dealloc(context) } }

    /// Protects the RTP packet in `buffer[0 ..< length]` in place (RFC 3711
    /// section 3.3, RFC 7714 section 5) and returns the new length, which is
    /// `length + profile.rtpTrailerLength`. The buffer must have
    /// `rtpTrailerRoom` bytes free after the packet.
    package mutating func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard direction == .outbound else { throw .wrongDirection }
        try Self.checkRoom(buffer, length: length, trailer: Self.rtpTrailerRoom)
        let header = try PacketBounds.rtpHeaderLength(Self.packet(buffer, length))
        if let base = buffer.baseAddress, let sealed = try engine?.protectRTP(base, length: length, header: header) {
            return sealed
        }
        return try call(srtp_protect, buffer, length)
    }

    /// Verifies and decrypts the SRTP packet in `buffer[0 ..< length]` in
    /// place (RFC 3711 section 3.3, RFC 7714 section 5) and returns the RTP
    /// length without the trailer. On any error the buffer's content is
    /// unspecified and the packet must be dropped.
    package mutating func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard direction == .inbound else { throw .wrongDirection }
        try Self.checkRoom(buffer, length: length, trailer: 0)
        let header = try PacketBounds.rtpHeaderLength(Self.packet(buffer, length))
        guard length - header >= profile.rtpTrailerLength else { throw .truncated }
        if let base = buffer.baseAddress, let opened = try engine?.unprotectRTP(base, length: length, header: header) {
            return opened
        }
        return try call(srtp_unprotect, buffer, length)
    }

    /// Protects the (compound) RTCP packet in `buffer[0 ..< length]` in
    /// place (RFC 3711 section 3.4, RFC 7714 section 9) and returns the new
    /// length, `length + profile.rtcpTrailerLength`. The buffer must have
    /// `rtcpTrailerRoom` bytes free after the packet.
    package mutating func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard direction == .outbound else { throw .wrongDirection }
        try Self.checkRoom(buffer, length: length, trailer: Self.rtcpTrailerRoom)
        try PacketBounds.checkRTCPHeader(Self.packet(buffer, length))
        if let base = buffer.baseAddress, let sealed = try engine?.protectRTCP(base, length: length) { return sealed }
        return try call(srtp_protect_rtcp, buffer, length)
    }

    /// Verifies and decrypts the SRTCP packet in `buffer[0 ..< length]` in
    /// place and returns the RTCP length without the trailer.
    package mutating func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard direction == .inbound else { throw .wrongDirection }
        try Self.checkRoom(buffer, length: length, trailer: 0)
        try PacketBounds.checkRTCPHeader(Self.packet(buffer, length))
        guard length - PacketBounds.rtcpHeaderLength >= profile.rtcpTrailerLength else { throw .truncated }
        if let base = buffer.baseAddress, let opened = try engine?.unprotectRTCP(base, length: length) { return opened }
        return try call(srtp_unprotect_rtcp, buffer, length)
    }

    // MARK: - Calling into libsrtp

    private static func checkRoom(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int,
        trailer: Int
    ) throws(SRTPError) {
        guard length >= 0, length <= buffer.count, buffer.count - length >= trailer else {
            throw .bufferTooSmall
        }
    }

    private static func packet(_ buffer: UnsafeMutableRawBufferPointer, _ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<length])
    }

    /// libsrtp 2.5's calls take the length in and out through `int *`.
    private func call(
        _ function: (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> srtp_err_status_t,
        _ buffer: UnsafeMutableRawBufferPointer, _ length: Int
    ) throws(SRTPError) -> Int {
        guard let base = buffer.baseAddress, var inOut = Int32(exactly: length) else { throw .badParameter }
        let status = function(context, base, &inOut)
        guard status == srtp_err_status_ok else { throw SRTPError(status: status) }
        return Int(inOut)
    }
}
