import COpenSSL
import CShim
import CryptoPrimitives
import Wire

/// OpenSSL's retransmission timer length: one hour, far beyond any handshake
/// (ours gives up after about two minutes), and within `unsigned int` µs.
private let openSSLTimerMicroseconds: UInt32 = 3_600_000_000

/// A DTLS 1.2 endpoint for DTLS-SRTP (RFC 6347, RFC 5764), sans-IO.
///
/// Datagrams and time go in (`handle(datagram:now:)`, `handleTimeout(now:)`,
/// `start(now:)`); datagrams to send, events and the next deadline come out
/// (`pollTransmit()`, `pollEvent()`, `nextDeadline`). After any input,
/// drain `pollTransmit()` and `pollEvent()`, then wait until `nextDeadline`.
///
/// OpenSSL does the protocol; this type keeps it off sockets and clocks:
/// a custom BIO (`DatagramQueues`) carries datagrams one at a time, and the
/// retransmission timer runs on the caller's `now` (see README.md).
///
/// Peer authentication (RFC 5763 section 5, RFC 8827 section 6.5): any
/// certificate is accepted during the handshake; once it finishes, the
/// peer's certificate must match one of the expected fingerprints from its
/// SDP. If none has been set yet, the check waits: `.connected` (or
/// `.failed(.fingerprintMismatch)`) is reported from
/// `setExpectedPeerFingerprints(_:)`. No keying material is reported
/// before the check passes.
///
/// Owns one `SSL_CTX` and one `SSL` (which owns the BIO) and frees them in
/// `deinit`. Single owner, not `Sendable`: drive it from one loop.
package struct DTLSEndpoint: ~Copyable {
    package enum Role: Sendable, Equatable {
        /// Sends the ClientHello (`a=setup:active`, RFC 5763 section 5).
        case client
        /// Waits for the ClientHello (`a=setup:passive`).
        case server
    }

    enum Phase: Equatable {
        case idle, handshaking, awaitingFingerprints, connected, closed, failed
    }

    package let role: Role
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let queues: DatagramQueues
    private var timer: RetransmissionTimer
    private(set) var phase: Phase = .idle
    private var expectedFingerprints: [CertificateFingerprint]
    private var events: [DTLSEvent] = []
    /// Datagrams screened out as malformed before reaching OpenSSL.
    package private(set) var droppedDatagrams = 0
    private var eventHead = 0
    /// Application data records received (RFC 8261: each one SCTP packet),
    /// oldest first, at most `maximumQueuedApplicationRecords`.
    private var applicationRecords: [[UInt8]] = []
    /// Records dropped because the queue was full (SCTP retransmits them).
    package private(set) var droppedApplicationRecords = 0
    /// Bound on `applicationRecords`: the owner drains after every input.
    package static let maximumQueuedApplicationRecords = 64

    /// - Parameters:
    ///   - expectedPeerFingerprints: the peer's SDP `a=fingerprint` values,
    ///     if already known; any one matching is enough.
    package init(
        role: Role,
        certificate: DTLSCertificate,
        expectedPeerFingerprints: [CertificateFingerprint] = [],
        configuration: DTLSConfiguration = DTLSConfiguration()
    ) throws(DTLSError) {
        let queues = DatagramQueues(mtu: configuration.maximumDatagramSize)
        let (context, ssl) = try Self.makeSession(
            role: role, certificate: certificate, queues: queues,
            configuration: configuration)
        self.role = role
        self.context = context
        self.ssl = ssl
        self.queues = queues
        self.expectedFingerprints = expectedPeerFingerprints
        self.timer = RetransmissionTimer(
            initialInterval: configuration.initialRetransmissionInterval,
            maximumInterval: configuration.maximumRetransmissionInterval,
            maximumRetransmissions: configuration.maximumRetransmissions)
    }

    deinit {
        SSL_free(ssl)  // frees the BIO, which releases `queues`
        SSL_CTX_free(context)
    }

    // MARK: Input

    /// Client only: sends the first flight (ClientHello). Does nothing for a
    /// server, or once started.
    package mutating func start(now: Instant) {
        guard role == .client, phase == .idle else { return }
        phase = .handshaking
        advanceHandshake(now: now)
    }

    /// One received datagram (RFC 7983 demultiplexing already done by the
    /// caller: first byte 20 to 63). Malformed records are dropped and
    /// counted (`droppedDatagrams`, see `DatagramScreen`); the rest goes to
    /// OpenSSL, which drops what it cannot authenticate (RFC 6347 section
    /// 4.1.2.7) or fails the handshake.
    package mutating func handle(datagram: [UInt8], now: Instant) {
        // An empty read would look like end-of-file to OpenSSL; malformed
        // records are dropped here (DatagramScreen).
        guard !datagram.isEmpty else { return }
        do {
            try DatagramScreen.check(datagram.span.bytes)
        } catch {
            droppedDatagrams &+= 1
            return
        }
        switch phase {
        case .closed, .failed:
            return
        case .idle:
            // A server starts on the ClientHello; a client that hears from
            // its peer before `start` starts now.
            phase = .handshaking
            queues.receive(datagram)
            advanceHandshake(now: now)
        case .handshaking:
            queues.receive(datagram)
            advanceHandshake(now: now)
        case .awaitingFingerprints, .connected:
            queues.receive(datagram)
            readRecords()
        }
    }

    package mutating func handle(datagram: UnsafeRawBufferPointer, now: Instant) {
        handle(datagram: Array(datagram), now: now)
    }

    /// Retransmits the current flight if its deadline has passed, or fails
    /// with `.timeout` after the last retransmission went unanswered.
    package mutating func handleTimeout(now: Instant) {
        guard phase == .handshaking else { return }
        switch timer.expire(now: now) {
        case .notYet:
            return
        case .giveUp:
            fail(.timeout)
        case .retransmit:
            // OpenSSL's own timer is an hour long and never expires by
            // itself; expire it now so that it retransmits on our schedule.
            guard queues.expireOpenSSLTimer() else {
                timer.disarm()
                return
            }
            ERR_clear_error()
            if swiftlet_DTLSv1_handle_timeout(ssl) < 0 {
                fail(.handshakeFailed(reason: drainOpenSSLErrors(fallback: "retransmission failed")))
                return
            }
            if !openSSLTimerIsRunning { timer.disarm() }
        }
    }

    /// The peer's SDP fingerprints (any one may match). Completes a
    /// handshake that finished before they were known.
    package mutating func setExpectedPeerFingerprints(_ fingerprints: [CertificateFingerprint]) {
        expectedFingerprints = fingerprints
        if phase == .awaitingFingerprints { authenticatePeer() }
    }

    /// Sends close_notify (RFC 5246 section 7.2.1) if the handshake has
    /// finished, and stops the endpoint. Reports no event.
    package mutating func close() {
        switch phase {
        case .closed, .failed:
            return
        case .awaitingFingerprints, .connected:
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        case .idle, .handshaking:
            break
        }
        phase = .closed
        timer.disarm()
        queues.clearIncoming()
    }

    // MARK: Output

    /// The next application data record received (an SCTP packet, RFC 8261
    /// section 5); nil when none. Only records that arrived after the
    /// handshake, and only once the peer is authenticated: before
    /// `.connected` this returns nil and keeps them.
    package mutating func pollApplicationData() -> [UInt8]? {
        guard phase == .connected, !applicationRecords.isEmpty else { return nil }
        return applicationRecords.removeFirst()
    }

    /// Sends one application data record (RFC 8261: one SCTP packet per
    /// DTLS record; usrsctp keeps packets under the path MTU we give it).
    /// Nothing is sent unless connected and authenticated.
    package mutating func send(applicationData: UnsafeRawBufferPointer) -> Bool {
        guard phase == .connected, applicationData.count > 0, applicationData.count <= 16_384 else { return false }
        ERR_clear_error()
        let written = SSL_write(ssl, applicationData.baseAddress, Int32(applicationData.count))
        ERR_clear_error()
        return written == applicationData.count
    }

    /// The next datagram to send, boundaries preserved; nil when none.
    package mutating func pollTransmit() -> [UInt8]? { queues.popOutgoing() }

    package mutating func pollEvent() -> DTLSEvent? {
        guard eventHead < events.count else { return nil }
        let event = events[eventHead]
        eventHead += 1
        if eventHead == events.count { events.removeAll(keepingCapacity: true); eventHead = 0 }
        return event
    }

    /// When to call `handleTimeout(now:)`; nil when no flight awaits a reply.
    package var nextDeadline: Instant? { phase == .handshaking ? timer.deadline : nil }

    // MARK: Driving OpenSSL

    /// Whether OpenSSL has a flight out and is waiting for the reply. Its
    /// own deadline is meaningless (an hour out); only whether it runs matters.
    var openSSLTimerIsRunning: Bool {
        var seconds = 0, microseconds = 0
        return swiftlet_DTLSv1_get_timeout(ssl, &seconds, &microseconds) == 1
    }

    private mutating func advanceHandshake(now: Instant) {
        let writtenBefore = queues.written
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            timer.disarm()
            phase = .awaitingFingerprints
            authenticatePeer()
            // Records that arrived with the last flight (an alert, say).
            if phase == .connected || phase == .awaitingFingerprints { readRecords() }
            return
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            break
        default:
            fail(.handshakeFailed(reason: drainOpenSSLErrors(fallback: "SSL_do_handshake failed")))
            return
        }
        if !openSSLTimerIsRunning {
            timer.disarm()
        } else if queues.written != writtenBefore || timer.deadline == nil {
            // A new flight (or a resend OpenSSL chose, on a repeated peer
            // flight) went out: the schedule starts over at 1 s.
            timer.arm(now: now)
        }
    }

    /// Reads post-handshake records: alerts, and application data (SCTP
    /// packets for data channels, RFC 8261), queued with a bound.
    private mutating func readRecords() {
        guard queues.hasIncoming else { return }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        // Bounded by the queue, in case OpenSSL ever answers > 0 without
        // consuming a datagram; a datagram may carry several records.
        var passesLeft = (queues.incoming.count - queues.incomingHead) * 16 + 1
        while passesLeft > 0 {
            passesLeft -= 1
            ERR_clear_error()
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                if applicationRecords.count < Self.maximumQueuedApplicationRecords {
                    applicationRecords.append(Array(buffer[0..<Int(count)]))
                } else {
                    droppedApplicationRecords &+= 1
                }
                continue
            }
            let code = SSL_get_error(ssl, count)
            switch code {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return
            case SSL_ERROR_ZERO_RETURN:
                // close_notify: answer with ours and stop.
                ERR_clear_error()
                _ = SSL_shutdown(ssl)
                ERR_clear_error()
                phase = .closed
                queues.clearIncoming()
                events.append(.closed)
                return
            default:
                fail(.connectionFailed(reason: drainOpenSSLErrors(fallback: "SSL_read failed (SSL_get_error \(code))")))
                return
            }
        }
    }

    /// RFC 5763 section 5: the certificate must match a fingerprint from the
    /// peer's SDP. Then the SRTP profile and keys (RFC 5764 section 4.2).
    private mutating func authenticatePeer() {
        guard !expectedFingerprints.isEmpty else { return }
        guard let peer = SSL_get1_peer_certificate(ssl) else {
            fail(.handshakeFailed(reason: "peer sent no certificate"))
            return
        }
        defer { X509_free(peer) }
        var matched: CertificateFingerprint? = nil
        for expected in expectedFingerprints where certificateFingerprint(of: peer, expected.algorithm) == expected {
            matched = expected
            break
        }
        guard let matched else {
            fail(.fingerprintMismatch)
            return
        }
        guard let selected = SSL_get_selected_srtp_profile(ssl),
            let profile = SRTPProfile(dtlsProfileID: UInt16(truncatingIfNeeded: selected.pointee.id))
        else {
            fail(.noSRTPProfile)
            return
        }
        var material = [UInt8](repeating: 0, count: profile.keyingMaterialLength)
        let label = "EXTRACTOR-dtls_srtp"
        ERR_clear_error()
        let exported = material.withUnsafeMutableBufferPointer { out in
            SSL_export_keying_material(ssl, out.baseAddress, out.count, label, label.utf8.count, nil, 0, 0)
        }
        guard exported == 1 else {
            fail(.keyingMaterialExportFailed)
            return
        }
        phase = .connected
        events.append(
            .connected(
                DTLSConnected(
                    srtpProfileID: profile.dtlsProfileID, keyingMaterial: material, peerFingerprint: matched)))
    }

    private mutating func fail(_ error: DTLSError) {
        // Whatever OpenSSL queued (a fatal alert) still goes out.
        ERR_clear_error()
        phase = .failed
        timer.disarm()
        queues.clearIncoming()
        events.append(.failed(error))
    }

    // MARK: Setup

    /// ECDSA (our key type) with AES-GCM only: what Chromium, Firefox and
    /// aiortc all offer, and what lets `DatagramScreen` know the minimum
    /// size of a protected record.
    static let cipherList = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"

    private static func makeSession(
        role: Role, certificate: DTLSCertificate, queues: DatagramQueues, configuration: DTLSConfiguration
    ) throws(DTLSError) -> (OpaquePointer, OpaquePointer) {
        // Expiring OpenSSL's timer writes its `struct timeval` deadline, a
        // layout checked on 3.0 only (3.2 moved to OSSL_TIME).
        let version = OpenSSL_version_num()
        guard version >> 20 == 0x300 else {
            throw .setupFailed(
                reason: "OpenSSL \(String(version, radix: 16)): the caller-clock DTLS timer is verified on 3.0 only")
        }
        ERR_clear_error()
        guard let context = SSL_CTX_new(DTLS_method()) else {
            throw .setupFailed(reason: drainOpenSSLErrors(fallback: "SSL_CTX_new failed"))
        }
        func failure(_ what: String) -> DTLSError {
            .setupFailed(reason: drainOpenSSLErrors(fallback: what))
        }
        let profiles = configuration.srtpProfiles.map(\.openSSLName).joined(separator: ":")
        guard !configuration.srtpProfiles.isEmpty,
            // OpenSSL 3.0 has no DTLS 1.3; refuse DTLS 1.0 (RFC 8996).
            swiftlet_SSL_CTX_set_min_proto_version(context, DTLS1_2_VERSION) == 1,
            swiftlet_SSL_CTX_set_max_proto_version(context, DTLS1_2_VERSION) == 1,
            SSL_CTX_set_cipher_list(context, cipherList) == 1,
            SSL_CTX_use_certificate(context, certificate.x509) == 1,
            SSL_CTX_use_PrivateKey(context, certificate.privateKey) == 1,
            SSL_CTX_set_tlsext_use_srtp(context, profiles) == 0  // 0 is success
        else {
            let error = failure("configuring SSL_CTX failed")
            SSL_CTX_free(context)
            throw error
        }
        _ = swiftlet_SSL_CTX_set_read_ahead(context, 0)
        // Ask for the peer's certificate both ways; accept any chain (WebRTC
        // certificates are self-signed) and check the fingerprint after.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) { _, _ in 1 }

        guard let ssl = SSL_new(context) else {
            let error = failure("SSL_new failed")
            SSL_CTX_free(context)
            throw error
        }
        let mtu = configuration.maximumDatagramSize
        _ = swiftlet_SSL_set_options_no_query_mtu(ssl)
        // SSL_set_mtu answers the MTU it set, DTLS_set_link_mtu 1; both 0 if too small.
        guard swiftlet_SSL_set_mtu(ssl, mtu) > 0, swiftlet_DTLS_set_link_mtu(ssl, mtu) == 1,
            let bio = makeDatagramBIO(queues)
        else {
            let error = failure("setting the MTU or BIO failed")
            SSL_free(ssl)
            SSL_CTX_free(context)
            throw error
        }
        SSL_set_bio(ssl, bio, bio)  // one BIO, one reference, owned by ssl
        // OpenSSL's timer is set an hour out so that its read path never
        // retransmits on the real clock; DTLSEndpoint expires it when the
        // caller's clock says so (README.md, "Timer").
        DTLS_set_timer_cb(ssl) { _, _ in openSSLTimerMicroseconds }
        switch role {
        case .client: SSL_set_connect_state(ssl)
        case .server: SSL_set_accept_state(ssl)
        }
        return (context, ssl)
    }
}
