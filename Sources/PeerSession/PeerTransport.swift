import DTLS
import DataChannel
import ICE
import SCTP
import SRTP
import Wire

/// The secure transport to one remote peer over one UDP 5-tuple family:
/// ICE (lite on the server, full and controlling on the client), DTLS-SRTP
/// key agreement, and SRTP/SRTCP in both directions, demultiplexed per
/// RFC 7983. The same type serves the SFU and roombot.
///
/// Sans-IO: the owner feeds datagrams (`receive`) and time
/// (`handleTimeout`), sends what `pollTransmit()` returns, reacts to
/// `pollEvent()`, and wakes at `nextDeadline`. Media passes through in
/// place: `receive` decrypts into the caller's buffer and `protectRTP`
/// encrypts it there, so the media path allocates nothing here.
///
/// Invariants:
/// - media and DTLS are sent only to an address that passed an ICE check
///   (RFC 8445 section 7.3.1.4; consent: RFC 7675), and media only to the
///   selected one;
/// - media is accepted only from validated addresses and only after DTLS
///   matched the peer's fingerprint and installed SRTP keys;
/// - `failed` and `closed` are terminal.
package final class PeerTransport {
    package enum Role: Sendable, Equatable {
        /// SFU side: ICE-lite, DTLS server (we answer `a=setup:passive`).
        case server
        /// Client side (roombot, tests): full controlling ICE agent, DTLS client.
        case client
    }

    package struct Configuration: Sendable {
        package var dtls = DTLSConfiguration()
        package var iceLite = ICELiteAgent.Configuration()
        package var iceFull = ICEAgent.Configuration()
        /// Inbound SRTP replay window (packets); see Sources/SRTP/README.md.
        package var replayWindow = SRTPSession.defaultReplayWindow
        /// Most SSRCs the peer may send SRTP or SRTCP from on this transport
        /// (`PeerTransport.defaultMaxInboundSSRCs`); see `admitInbound`.
        package var maxInboundSSRCs = PeerTransport.defaultMaxInboundSSRCs
        /// Which SRTP implementation both directions use (`--srtp-backend`).
        package var srtpBackend = SRTPBackend.default
        package init() {}
    }

    package enum State: Equatable, Sendable { case connecting, connected, failed, closed }

    package let role: Role
    package let localCredentials: ICECredentials
    package private(set) var state: State = .connecting
    package private(set) var counters = PeerTransportCounters()
    /// The profile DTLS negotiated, once connected.
    package private(set) var srtpProfile: SRTPProfile?

    // Exactly one of the two is set, by role. Two optionals rather than
    // an enum: `lite?.handleSTUN(...)` mutates the agent in place, where
    // taking it out of an enum payload and putting it back would leave two
    // references to its arrays during the call and copy them on write:
    // allocations on every consent check (issue #14).
    private var lite: ICELiteAgent?
    private var full: ICEAgent?
    private var dtls: DTLSEndpoint
    private var dtlsStarted = false
    /// Where DTLS answers go on the server: the validated address the
    /// peer's last DTLS datagram came from.
    private var dtlsPeer: TransportAddress?
    /// Our address that datagram arrived on (nil: the socket has one).
    private var dtlsLocal: TransportAddress?
    private var inbound: SRTPSession?
    private var outbound: SRTPSession?
    /// SSRCs whose SRTP or SRTCP has authenticated, at most
    /// `configuration.maxInboundSSRCs` (reserved up front: no allocation
    /// per packet). libsrtp (`ssrc_any_inbound`) keeps a stream per SSRC
    /// that authenticates until the transport closes and looks streams up
    /// in a list, so a peer with valid keys sending a new SSRC per packet
    /// would grow it without bound and make every lookup slower. A packet
    /// from an SSRC outside this set, once it is full, never reaches
    /// libsrtp.
    private var inboundSSRCs: [UInt32] = []
    private var transmitQueue: [OutgoingDatagram] = []
    /// Client only: the first local candidate added, the local address of
    /// datagrams whose socket does not say (one bound address).
    private var firstLocalCandidate: TransportAddress?
    private var events: [PeerTransportEvent] = []
    /// Data channels (RFC 8831) over this transport's DTLS (RFC 8261),
    /// when the negotiation accepted an `m=application` section: the SCTP
    /// configuration asked for, and the endpoint once DTLS is connected.
    /// Only DTLS application data and timers reach it, never RTP.
    private var dataChannelConfiguration: SCTPConfiguration?
    package private(set) var dataChannels: DataChannelEndpoint?

    package init(
        role: Role, certificate: DTLSCertificate, localCredentials: ICECredentials = .random(),
        configuration: Configuration = Configuration(), now: Instant
    ) throws(DTLSError) {
        self.role = role
        self.localCredentials = localCredentials
        self.configuration = configuration
        switch role {
        case .server:
            lite = ICELiteAgent(localCredentials: localCredentials, configuration: configuration.iceLite, now: now)
            dtls = try DTLSEndpoint(role: .server, certificate: certificate, configuration: configuration.dtls)
        case .client:
            full = ICEAgent(localCredentials: localCredentials, configuration: configuration.iceFull)
            dtls = try DTLSEndpoint(role: .client, certificate: certificate, configuration: configuration.dtls)
        }
    }

    private let configuration: Configuration

    // MARK: Signalling input

    /// The peer's ICE credentials and certificate fingerprints from its SDP.
    /// Fingerprints may arrive after the DTLS handshake: keys are released
    /// only once one matches.
    package func setRemoteParameters(credentials: ICECredentials, fingerprints: [CertificateFingerprint], now: Instant) {
        lite?.setRemoteCredentials(credentials)
        full?.setRemoteCredentials(credentials, now: now)
        dtls.setExpectedPeerFingerprints(fingerprints)
        drain(now: now)
    }

    /// Client only: a local address the owner has bound.
    package func addLocalCandidate(_ candidate: ICECandidate, now: Instant) {
        guard full != nil else { return }
        if firstLocalCandidate == nil { firstLocalCandidate = candidate.address }
        full?.addLocalCandidate(candidate)
        drain(now: now)
    }

    /// Client only: a local address went away (interface down, handover).
    /// If it carried the selected pair, ICE nominates a pair on another
    /// local address and media follows.
    package func removeLocalCandidate(_ address: TransportAddress, now: Instant) {
        guard full != nil else { return }
        full?.removeLocalCandidate(address)
        drain(now: now)
    }

    /// Client only: a candidate from the peer's SDP or trickle.
    package func addRemoteCandidate(_ candidate: ICECandidate, now: Instant) {
        guard full != nil else { return }
        full?.addRemoteCandidate(candidate)
        drain(now: now)
    }

    // MARK: Datagrams

    /// One datagram received from `source` on the local address `local`.
    /// STUN and DTLS are consumed; SRTP and SRTCP are authenticated and
    /// decrypted in place and returned for the owner to route.
    package func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress,
        to local: TransportAddress? = nil, now: Instant
    ) -> ReceivedDatagram {
        guard state == .connecting || state == .connected else { return .handled }
        switch DatagramKind.classify(UnsafeRawBufferPointer(datagram)) {
        case .stun:
            let bytes = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(datagram))
            lite?.handleSTUN(bytes, from: source, to: local, now: now)
            // A socket bound to one address reports no local address: the
            // client's checks then left from its one host candidate.
            full?.handleSTUN(bytes, from: source, to: local ?? firstLocalCandidate ?? source, now: now)
            drain(now: now)
            return .handled
        case .dtls:
            guard isValidated(source) else {
                counters.mediaFromUnvalidatedAddress += 1
                return .handled
            }
            dtlsPeer = source
            dtlsLocal = local
            dtls.handle(datagram: UnsafeRawBufferPointer(datagram), now: now)
            drain(now: now)
            return .handled
        case .rtp: return unprotect(datagram, from: source, rtcp: false)
        case .rtcp: return unprotect(datagram, from: source, rtcp: true)
        case .unknown:
            counters.unknownDatagrams += 1
            return .handled
        }
    }

    /// SRTP or SRTCP from `source`, authenticated and decrypted in place;
    /// counted and dropped when the address is unvalidated, keys are not
    /// installed yet, or authentication or replay checks fail.
    private func unprotect(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, rtcp: Bool
    )
        -> ReceivedDatagram
    {
        guard isValidated(source) else {
            counters.mediaFromUnvalidatedAddress += 1
            return .handled
        }
        guard inbound != nil else {
            counters.mediaBeforeKeys += 1
            return .handled
        }
        // RTP's SSRC is at bytes 8..<12 (RFC 3550 section 5.1), SRTCP's
        // sender SSRC at 4..<8 of its first packet (section 6.4.1): what
        // libsrtp keys its streams by. Shorter input fails in unprotect.
        let ssrcOffset = rtcp ? 4 : 8
        let ssrc: UInt32? =
            datagram.count >= ssrcOffset + 4
            ? UInt32(datagram[ssrcOffset]) << 24 | UInt32(datagram[ssrcOffset + 1]) << 16
                | UInt32(datagram[ssrcOffset + 2]) << 8 | UInt32(datagram[ssrcOffset + 3]) : nil
        let known = ssrc.map { inboundSSRCs.contains($0) } ?? true
        guard known || inboundSSRCs.count < configuration.maxInboundSSRCs else {
            counters.ssrcLimitExceeded += 1
            return .handled
        }
        guard var session = inbound.take() else { return .handled }
        let result: ReceivedDatagram
        do {
            result =
                rtcp
                ? .rtcp(length: try session.unprotectRTCP(datagram, length: datagram.count))
                : .rtp(length: try session.unprotectRTP(datagram, length: datagram.count))
            // Only an authenticated packet takes a place: garbage cannot.
            if !known, let ssrc { inboundSSRCs.append(ssrc) }
        } catch {
            counters.srtpRejected += 1
            result = .handled
        }
        inbound = consume session
        return result
    }

    /// Default for `Configuration.maxInboundSSRCs`. A publisher transport
    /// needs per video track three simulcast layers and their RTX (6), per
    /// audio track one, and the SSRC its RTCP comes from; a subscriber
    /// transport only its receivers' RTCP SSRCs. 64 leaves room for about
    /// ten video tracks; past it libsrtp's per-packet stream search would
    /// start to cost (docs/TRANSPORT.md has the figures).
    package static let defaultMaxInboundSSRCs = 64

    /// SSRCs the peer has sent authenticated SRTP or SRTCP from.
    package var inboundSSRCCount: Int { inboundSSRCs.count }

    /// Encrypts the RTP packet in the first `length` bytes of `buffer` in
    /// place (the buffer needs `SRTPSession.rtpTrailerRoom` spare bytes) and
    /// returns the protected length and where to send it; nil when there is
    /// nowhere to send it yet (not connected, no selected address, consent
    /// lost), and the packet is dropped.
    package func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> (length: Int, to: TransportAddress)? {
        protect(buffer, length: length, rtcp: false)
    }

    /// As `protectRTP`, for an RTCP compound (`SRTPSession.rtcpTrailerRoom`).
    package func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> (length: Int, to: TransportAddress)? {
        protect(buffer, length: length, rtcp: true)
    }

    private func protect(_ buffer: UnsafeMutableRawBufferPointer, length: Int, rtcp: Bool) -> (length: Int, to: TransportAddress)?
    {
        guard state == .connected, let destination = selectedAddress, var session = outbound.take() else {
            counters.sendsWithoutRoute += 1
            return nil
        }
        var protected: Int?
        do {
            if rtcp {
                protected = try session.protectRTCP(buffer, length: length)
            } else {
                protected = try session.protectRTP(buffer, length: length)
            }
        } catch SRTPError.replayFail, SRTPError.replayOld {
            // An index protected before (allow_repeat_tx is off): refused,
            // never sent twice with other bytes (RFC 7714 section 8.1).
            counters.repeatedIndexRefused += 1
        } catch {
            counters.sendsWithoutRoute += 1
        }
        outbound = consume session
        return protected.map { ($0, destination) }
    }

    // MARK: Time and output

    package var nextDeadline: Instant? {
        guard state == .connecting || state == .connected else { return nil }
        let iceDeadline = Self.iceDeadline(&lite, full: &full)
        let deadline: Instant?
        switch (iceDeadline, dtls.nextDeadline) {
        case let (a?, b?): deadline = min(a, b)
        case let (a?, nil): deadline = a
        case let (nil, b?): deadline = b
        case (nil, nil): deadline = nil
        }
        guard let sctp = dataChannels?.nextDeadline else { return deadline }
        return deadline.map { min($0, sctp) } ?? sctp
    }

    package func handleTimeout(now: Instant) {
        guard state == .connecting || state == .connected else { return }
        lite?.handleTimeout(now: now)
        full?.handleTimeout(now: now)
        if let d = dtls.nextDeadline, d <= now { dtls.handleTimeout(now: now) }
        if let d = dataChannels?.nextDeadline, d <= now { dataChannels?.handleTimeout(now: now) }
        drain(now: now)
    }

    /// The next datagram to send, as a value (tests, roombot's client
    /// transport): the lite agent's STUN responses first, copied into an
    /// array; the server's engine uses `sendTransmits(_:)` instead.
    package func pollTransmit() -> OutgoingDatagram? {
        if let t = lite?.withNextTransmit({ bytes, to, from in OutgoingDatagram(bytes: Array(bytes), to: to, from: from) }) {
            return t
        }
        return transmitQueue.isEmpty ? nil : transmitQueue.removeFirst()
    }

    /// Hands every queued datagram to `send`, in `pollTransmit` order,
    /// the bytes valid only during the call: a STUN response goes from the
    /// lite agent's kept buffer straight to the caller (a transmit slot),
    /// so answering a consent check allocates nothing (issue #14).
    package func sendTransmits(_ send: (UnsafeRawBufferPointer, TransportAddress, TransportAddress?) -> Void) {
        while lite?.withNextTransmit(send) != nil {}
        while !transmitQueue.isEmpty {
            let out = transmitQueue.removeFirst()
            out.bytes.withUnsafeBytes { send($0, out.to, out.from) }
        }
    }

    package func pollEvent() -> PeerTransportEvent? {
        events.isEmpty ? nil : events.removeFirst()
    }

    /// Where media goes: the address ICE selected, while consent holds.
    package var selectedAddress: TransportAddress? {
        lite != nil ? lite?.selectedAddress : full?.selectedPair?.remote
    }

    /// Our side of the selected pair, which media leaves from: on a
    /// wildcard-bound server socket the address the nominating check
    /// arrived on (nil where the socket has one address).
    package var selectedLocalAddress: TransportAddress? {
        lite != nil ? lite?.selectedLocalAddress : full?.selectedPair?.local
    }

    // MARK: Data channels

    /// Runs data channels over this transport (the offer had an accepted
    /// `m=application` section, RFC 8841): SCTP starts once DTLS is
    /// connected, or now if it is. Once per transport; later calls do
    /// nothing.
    package func enableDataChannels(_ configuration: SCTPConfiguration, now: Instant) {
        guard dataChannelConfiguration == nil else { return }
        dataChannelConfiguration = configuration
        if state == .connected { startDataChannels(now: now) }
    }

    /// Sends one message on a data channel; queued as DTLS records for
    /// `pollTransmit`/`sendTransmits`.
    package func sendData(stream: UInt16, isText: Bool, payload: [UInt8], now: Instant) throws(SCTPError) {
        guard let endpoint = dataChannels, state == .connected else { throw .notEstablished }
        try endpoint.send(stream: stream, isText: isText, payload: payload)
        drain(now: now)
    }

    /// Opens a data channel of ours; nil when it cannot (see
    /// `DataChannelEndpoint.open`).
    package func openDataChannel(label: String, channelType: DataChannelType, now: Instant) -> UInt16? {
        guard let endpoint = dataChannels, state == .connected else { return nil }
        let stream = endpoint.open(label: label, channelType: channelType)
        drain(now: now)
        return stream
    }

    /// Sends `packet` as one DTLS application data record, bypassing SCTP:
    /// for tests and fuzzing of the peer's SCTP input (garbage must cost
    /// the record only). False when DTLS is not connected.
    @discardableResult
    package func sendRawApplicationRecord(_ packet: [UInt8], now: Instant) -> Bool {
        guard state == .connected else { return false }
        let sent = packet.withUnsafeBytes { dtls.send(applicationData: $0) }
        drain(now: now)
        return sent
    }

    private func startDataChannels(now: Instant) {
        guard dataChannels == nil, let configuration = dataChannelConfiguration else { return }
        do {
            dataChannels = try DataChannelEndpoint(
                role: role == .server ? .dtlsServer : .dtlsClient, configuration: configuration, now: now)
        } catch {
            // usrsctp refused a socket: media goes on without data channels.
            events.append(.dataChannel(.closed))
        }
    }

    /// Sends DTLS close_notify; the transport is closed afterwards.
    package func close(now: Instant) {
        guard state == .connecting || state == .connected else { return }
        dataChannels?.close()
        dataChannels = nil
        dtls.close()
        drain(now: now)
        state = .closed
    }

    // MARK: Internals

    /// Whether `address` passed an ICE check (the server's lite agent) or
    /// is the remote side of a valid pair (the client): only such
    /// addresses may send us media or receive DTLS.
    package func isValidated(_ address: TransportAddress) -> Bool {
        Self.validates(&lite, full: &full, address)
    }

    // Called for every media packet. The agents are passed `inout` so that
    // they are read in place: a plain read of a class's stored struct
    // copies it, with a retain and release of each of its arrays (perf,
    // issue #14).
    private static func validates(_ lite: inout ICELiteAgent?, full: inout ICEAgent?, _ address: TransportAddress) -> Bool {
        lite?.isValidatedAddress(address) ?? full?.isValidRemote(address) ?? false
    }

    // Asked on every wake-up of the owner's loop; `inout` for the same
    // reason as `validates`: roombot's full agents were copied whole on
    // each call (perf, issue #14).
    private static func iceDeadline(_ lite: inout ICELiteAgent?, full: inout ICEAgent?) -> Instant? {
        lite != nil ? lite?.nextDeadline : full?.nextDeadline
    }

    /// Moves everything the ICE agent and the DTLS endpoint produced into
    /// this transport's queues, reacting to their events.
    private func drain(now: Instant) {
        drainICE(now: now)
        drainDTLS(now: now)
        if dataChannels != nil {
            drainDataChannels(now: now)
        } else if dataChannelConfiguration == nil {
            // No data channels negotiated: application data has no
            // reader (each record costs itself, nothing is kept).
            while dtls.pollApplicationData() != nil {}
        }
    }

    /// DTLS application data into SCTP (RFC 8261 section 5: each record
    /// one SCTP packet), SCTP's packets out as records, its events out.
    private func drainDataChannels(now: Instant) {
        guard let endpoint = dataChannels else { return }
        while let record = dtls.pollApplicationData() { endpoint.handle(packet: record, now: now) }
        while let packet = endpoint.pollTransmit() {
            // A record DTLS refuses (not connected) is lost; SCTP resends.
            _ = packet.withUnsafeBytes { dtls.send(applicationData: $0) }
        }
        while let event = endpoint.pollEvent() {
            events.append(.dataChannel(event))
            if event == .closed { dataChannels = nil }
        }
        drainDTLS(now: now)
    }

    private func drainICE(now: Instant) {
        if lite != nil {
            // The lite agent's responses stay in its queue of kept buffers
            // until `pollTransmit` or `sendTransmits` takes them: a consent
            // check's answer is never copied into an array here.
            var selected: TransportAddress?
            var failure: PeerTransportFailure?
            while let e = lite?.pollEvent() {
                switch e {
                case .selectedAddressChanged(let address): selected = address
                case .consentExpired: failure = .consentExpired
                case .stateChanged(.failed): failure = failure ?? .iceFailed
                default: break
                }
            }
            if let selected { events.append(.selectedAddressChanged(selected)) }
            if let failure { fail(failure) }
        } else if var a = full {
            full = nil
            while let t = a.pollTransmit() { transmitQueue.append(OutgoingDatagram(bytes: t.bytes, to: t.to, from: t.from)) }
            var selected: TransportAddress?
            var failure: PeerTransportFailure?
            while let e = a.pollEvent() {
                switch e {
                case .selectedPairChanged(_, let remote): selected = remote
                case .consentExpired: failure = .consentExpired
                case .stateChanged(.failed): failure = failure ?? .iceFailed
                default: break
                }
            }
            full = a
            if let selected {
                events.append(.selectedAddressChanged(selected))
                // The DTLS client starts once ICE has a pair to send on.
                if !dtlsStarted, state == .connecting {
                    dtlsStarted = true
                    dtls.start(now: now)
                }
            }
            if let failure { fail(failure) }
        }
    }

    private func drainDTLS(now: Instant) {
        let destination: TransportAddress?
        let source: TransportAddress?
        if let a = lite {
            // DTLS answers the address (and leaves from our address) its
            // peer's last flight used, else the selected pair.
            if let peer = dtlsPeer, a.isValidatedAddress(peer) {
                destination = peer
                source = dtlsLocal
            } else {
                destination = a.selectedAddress
                source = a.selectedLocalAddress
            }
        } else {
            destination = full?.selectedPair?.remote
            source = full?.selectedPair?.local
        }
        while let bytes = dtls.pollTransmit() {
            // No validated address: the flight is dropped; DTLS retransmits.
            if let destination { transmitQueue.append(OutgoingDatagram(bytes: bytes, to: destination, from: source)) }
        }
        while let e = dtls.pollEvent() {
            switch e {
            case .connected(let c): installKeys(c, now: now)
            case .failed(let error): fail(.dtls(error))
            case .closed:
                if state == .connecting || state == .connected {
                    state = .closed
                    events.append(.closed)
                }
            }
        }
    }

    private func installKeys(_ connected: DTLSConnected, now: Instant) {
        guard state == .connecting, let profile = connected.srtpProfile else { fail(.srtpSetupFailed); return }
        do {
            let keys = try SRTPKeyingMaterial(
                exported: connected.keyingMaterial, profile: profile,
                role: role == .server ? .server : .client)
            inboundSSRCs.reserveCapacity(min(configuration.maxInboundSSRCs, 1024))
            inbound = try SRTPSession(
                profile: profile, masterKey: keys.remote, direction: .inbound,
                replayWindow: configuration.replayWindow, backend: configuration.srtpBackend)
            outbound = try SRTPSession(
                profile: profile, masterKey: keys.local, direction: .outbound, backend: configuration.srtpBackend)
        } catch {
            fail(.srtpSetupFailed)
            return
        }
        srtpProfile = profile
        state = .connected
        events.append(.connected(profile))
        startDataChannels(now: now)
    }

    private func fail(_ failure: PeerTransportFailure) {
        guard state == .connecting || state == .connected else { return }
        state = .failed
        inbound = nil
        outbound = nil
        events.append(.failed(failure))
    }
}
