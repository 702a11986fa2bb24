import DTLS
import ICE
import MediaWorker
import NetIO
import PeerSession
import RTCP
import RTP
import SRTP
import Wire

/// A client-role transport on its own UDP socket, pumped on the test
/// thread with the real clock: what roombot will do, minus the rooms.
final class UDPClient {
    let socket: UDPSocket
    let transport: PeerTransport
    let local: TransportAddress
    let certificate: DTLSCertificate
    private let batch = DatagramBatch(capacity: 16)
    private(set) var received: [(kind: ReceivedDatagram, bytes: [UInt8], at: Instant)] = []
    /// Every SRTP datagram as it came off the wire, before (and whether or
    /// not) it decrypted: a second packet under one index is refused by the
    /// replay check, so only the wire shows it.
    private(set) var protectedRTP: [[UInt8]] = []

    init(certificate: DTLSCertificate, profiles: [SRTPProfile]? = nil, ip: String = "127.0.0.1") throws {
        self.certificate = certificate
        socket = try UDPSocket(bindingTo: SocketAddress(ip: ip, port: 0)!)
        socket.setReceiveTimeout(.milliseconds(2))
        local = try socket.localAddress().transportAddress
        var configuration = PeerTransport.Configuration()
        if let profiles { configuration.dtls.srtpProfiles = profiles }
        transport = try PeerTransport(
            role: .client, certificate: certificate, configuration: configuration,
            now: MonotonicClock.now())
    }

    var isConnected: Bool { transport.state == .connected }

    /// Decrypted RTP packets received, in arrival order.
    var receivedRTP: [[UInt8]] {
        received.compactMap { if case .rtp = $0.kind { $0.bytes } else { nil } }
    }

    /// Decrypted RTCP compounds received, parsed, with their arrival time.
    var receivedRTCP: [(packets: [RTCPPacket], at: Instant)] {
        received.compactMap { r in
            guard case .rtcp = r.kind, let c = try? RTCPCompoundPacket.parse(r.bytes.span.bytes) else { return nil }
            return (c.expandedPackets(r.bytes.span.bytes), r.at)
        }
    }

    func send(_ bytes: UnsafeRawBufferPointer, to: TransportAddress) {
        let out = DatagramBatch(capacity: 1)
        out.slot(0).copyMemory(from: bytes)
        out.setLength(bytes.count, at: 0)
        out.setAddress(to, at: 0)
        out.count = 1
        socket.send(out)
    }

    /// One round: timers, queued datagrams, then what the socket holds
    /// (waiting at most the socket's 2 ms receive timeout).
    func step() throws {
        let now = MonotonicClock.now()
        if let d = transport.nextDeadline, d <= now { transport.handleTimeout(now: now) }
        while let out = transport.pollTransmit() { out.bytes.withUnsafeBytes { send($0, to: out.to) } }
        let n = try socket.receive(into: batch)
        for i in 0..<n {
            guard let source = batch.address(i)?.transportAddress else { continue }
            let length = batch.length(i)
            let buffer = UnsafeMutableRawBufferPointer(rebasing: batch.slot(i)[0..<length])
            // RFC 7983 / RFC 5761 section 4: RTP, not RTCP (PT 192...223).
            if length >= 12, (128...191).contains(buffer[0]), !(192...223).contains(buffer[1]) {
                protectedRTP.append(Array(buffer))
            }
            let arrival = MonotonicClock.now()
            let result = transport.receive(buffer, from: source, to: local, now: arrival)
            switch result {
            case .handled: break
            case .rtp(let k), .rtcp(let k): received.append((result, Array(buffer[0..<k]), arrival))
            }
        }
    }

    /// Runs the transport against the socket until `done()` or `limit`.
    func pump(for limit: Duration, until done: () -> Bool = { false }) throws {
        try UDPClient.pump([self], for: limit, until: done)
    }

    /// Runs several clients in turn until `done()` or `limit`.
    static func pump(_ clients: [UDPClient], for limit: Duration, until done: () -> Bool = { false }) throws {
        let end = MonotonicClock.now() + limit
        while MonotonicClock.now() < end, !done() {
            for c in clients { try c.step() }
        }
    }

    /// Protects and sends one packet to the selected address.
    @discardableResult
    func sendMedia(_ packet: [UInt8], rtcp: Bool = false) -> Bool {
        var buffer = packet + [UInt8](repeating: 0, count: SRTPSession.rtcpTrailerRoom)
        return buffer.withUnsafeMutableBytes { raw in
            let r = rtcp ? transport.protectRTCP(raw, length: packet.count) : transport.protectRTP(raw, length: packet.count)
            guard let r else { return false }
            send(UnsafeRawBufferPointer(rebasing: raw[0..<r.length]), to: r.to)
            return true
        }
    }
}
