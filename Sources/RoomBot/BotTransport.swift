import DTLS
import ICE
import NetIO
import PeerSession
import RTCP
import RTP
import SCTP
import SRTP
import Wire

/// One client-role PeerTransport (full ICE controlling agent, DTLS client)
/// on its own non-blocking UDP socket: the server tells peers apart by
/// address, so every transport needs its own port. The bot loop watches
/// the socket with epoll and calls `pump` on readiness and deadlines.
final class BotTransport {
    let socket: UDPSocket
    let transport: PeerTransport
    let local: TransportAddress
    private let batch: DatagramBatch
    private let out = DatagramBatch(capacity: 1)
    private var remoteCredentials: ICECredentials?
    private var remoteCandidates: Set<TransportAddress> = []
    private(set) var connectedAt: Instant?
    /// Data channel events since the bot last took them (`--data-rate`).
    var dataEvents: [DataChannelEvent] = []
    /// Why the transport died, as an error kind (`ice_failed`,
    /// `consent_expired`, `dtls_failed`, `srtp_failed`, `dtls_closed`) and a
    /// detail; nil while it lives.
    private(set) var failure: (kind: String, detail: String)?

    init(bindIP: String, certificate: DTLSCertificate, now: Instant, batch: DatagramBatch) throws {
        guard let address = SocketAddress(ip: bindIP, port: 0) else { throw BotError.badAddress(bindIP) }
        socket = try UDPSocket(bindingTo: address)
        socket.setNonBlocking()
        // The server's socket sizes (UDPSocketBuffers): a bot's loop drains
        // many sockets in turn, and a burst to one (a keyframe) must wait
        // there, not be dropped as the bot's loss.
        _ = socket.setBuffers(.standard)
        local = try socket.localAddress().transportAddress
        self.batch = batch
        transport = try PeerTransport(role: .client, certificate: certificate, now: now)
        transport.addLocalCandidate(ICECandidate.host(local), now: now)
    }

    /// Light transports only: `transport.nextDeadline`, kept until the
    /// transport is touched again: the ICE agent computes it from every
    /// pair, and the loop asks each round while light receiving never
    /// touches the transport. Other transports ask every time: with the
    /// cache a publisher's H.264 subscribers saw 15 undecodable frames
    /// where 0 to 2 is usual (RoomBotH264Tests), cause not found.
    private var deadline: Instant?
    private var deadlineKnown = false

    var descriptor: Int32 { socket.descriptor }
    var isConnected: Bool { transport.state == .connected }

    /// The server's credentials, fingerprints and candidates from its SDP;
    /// on renegotiation only what changed is given again.
    func setRemote(credentials: ICECredentials, fingerprints: [CertificateFingerprint], candidates: [ICECandidate], now: Instant)
    {
        deadlineKnown = false
        if credentials != remoteCredentials {
            remoteCredentials = credentials
            transport.setRemoteParameters(credentials: credentials, fingerprints: fingerprints, now: now)
        }
        for c in candidates where remoteCandidates.insert(c.address).inserted {
            transport.addRemoteCandidate(c, now: now)
        }
        flushControl()
    }

    /// Light receiving (issue #14): once connected, SRTP packets go to
    /// `headerOnly` still encrypted instead of through the transport.
    var countsHeadersOnly = false

    /// Reads what the socket holds, hands each datagram to the transport
    /// and media to `media` (or, with `countsHeadersOnly`, SRTP to
    /// `headerOnly` undecrypted); then timers and queued control datagrams.
    func pump(
        now: Instant, media: (ReceivedDatagram, UnsafeMutableRawBufferPointer, Instant) -> Void,
        headerOnly: (UnsafeMutableRawBufferPointer, Instant) -> Void = { _, _ in }
    ) {
        let light = countsHeadersOnly && isConnected
        while true {
            let n: Int
            do { n = try socket.receive(into: batch) } catch { break }
            if n == 0 { break }
            let arrival = MonotonicClock.now()
            for i in 0..<n {
                let length = batch.length(i)
                guard length <= batch.slotSize, let source = batch.address(i)?.transportAddress else { continue }
                let buffer = UnsafeMutableRawBufferPointer(rebasing: batch.slot(i)[0..<length])
                if light, Self.isSRTP(buffer) {
                    headerOnly(buffer, arrival)
                    continue
                }
                deadlineKnown = false
                let result = transport.receive(buffer, from: source, to: local, now: arrival)
                switch result {
                case .handled: break
                case .rtp(let k), .rtcp(let k): media(result, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<k]), arrival)
                }
            }
            if n < batch.capacity { break }
        }
        // Header-only packets leave the transport as it was.
        if !deadlineKnown || !countsHeadersOnly { tick(now: MonotonicClock.now()) }
    }

    /// RTP, not RTCP, STUN or DTLS: first byte 128...191 (RFC 7983
    /// section 7) and a second byte outside RTCP's 192...223 (RFC 5761
    /// section 4).
    static func isSRTP(_ bytes: UnsafeMutableRawBufferPointer) -> Bool {
        bytes.count >= 12 && (128...191).contains(bytes[0]) && !(192...223).contains(bytes[1])
    }

    func tick(now: Instant) {
        if let d = nextDeadline, d <= now {
            transport.handleTimeout(now: now)
            deadlineKnown = false
        }
        flushControl()
        while let e = transport.pollEvent() {
            switch e {
            case .connected: if connectedAt == nil { connectedAt = now }
            case .failed(let f): failure = failure ?? Self.kind(of: f)
            // close_notify (RFC 5246 section 7.2.1): the server ended DTLS.
            case .closed: failure = failure ?? ("dtls_closed", "close_notify from the server")
            case .selectedAddressChanged: break
            case .dataChannel(let event):
                // Taken by the bot each tick; bounded in case it does not.
                if dataEvents.count < 1024 { dataEvents.append(event) }
            }
        }
    }

    var nextDeadline: Instant? {
        if !deadlineKnown || !countsHeadersOnly {
            deadline = transport.nextDeadline
            deadlineKnown = true
        }
        return deadline
    }

    static func kind(of f: PeerTransportFailure) -> (kind: String, detail: String) {
        switch f {
        case .iceFailed: ("ice_failed", "no ICE check succeeded (RFC 8445 section 8.1)")
        case .consentExpired: ("consent_expired", "no consent response for 30 s (RFC 7675 section 5.1)")
        case .dtls(let e): ("dtls_failed", "\(e)")
        case .srtpSetupFailed: ("srtp_failed", "DTLS-SRTP keys unusable")
        }
    }

    /// Protects the RTP (or RTCP) packet at the start of `buffer` in place
    /// and sends it to the selected address.
    @discardableResult
    func sendMedia(_ buffer: UnsafeMutableRawBufferPointer, length: Int, rtcp: Bool = false) -> Bool {
        deadlineKnown = false
        let r = rtcp ? transport.protectRTCP(buffer, length: length) : transport.protectRTP(buffer, length: length)
        guard let r else { return false }
        send(UnsafeRawBufferPointer(rebasing: buffer[0..<r.length]), to: r.to)
        return true
    }

    func close(now: Instant) {
        deadlineKnown = false
        transport.close(now: now)
        flushControl()
    }

    private func flushControl() {
        while let d = transport.pollTransmit() { d.bytes.withUnsafeBytes { send($0, to: d.to) } }
    }

    private func send(_ bytes: UnsafeRawBufferPointer, to: TransportAddress) {
        guard bytes.count <= out.slotSize else { return }
        out.slot(0).copyMemory(from: bytes)
        out.setLength(bytes.count, at: 0)
        out.setAddress(to, at: 0)
        out.count = 1
        _ = socket.send(out)
    }
}

enum BotError: Error, CustomStringConvertible {
    case badAddress(String)
    var description: String {
        switch self {
        case .badAddress(let a): "not an IP address: \(a)"
        }
    }
}
