import DTLS
import ICE
import MediaWorker
import NetIO
import PeerSession
import SRTP
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// What `EchoServer.connectAndEcho` needs of a client: a client-role
/// transport pumped on the test thread, and what it received.
protocol EchoClient: AnyObject {
    var transport: PeerTransport { get }
    var certificate: DTLSCertificate { get }
    /// The client's own candidate address.
    var local: TransportAddress { get }
    var received: [(kind: ReceivedDatagram, bytes: [UInt8], at: Instant)] { get }
    func pump(for limit: Duration, until done: () -> Bool) throws
    @discardableResult func sendMedia(_ packet: [UInt8], rtcp: Bool) -> Bool
}

extension UDPClient: EchoClient {}

/// A client-role transport over one ICE-TCP connection (RFC 6544, active
/// side; RFC 4571 framing), pumped on the test thread with the real clock:
/// what a browser whose UDP is blocked does against our passive candidate.
final class TCPMediaClient: EchoClient {
    let socket: TCPClientSocket
    let transport: PeerTransport
    let local: TransportAddress
    /// The server's passive candidate, as ICE sees it (marked TCP).
    let server: TransportAddress
    let certificate: DTLSCertificate
    private var decoder = StreamFrameDecoder(maxFrameLength: 4096)
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8192, alignment: 16)
    private(set) var received: [(kind: ReceivedDatagram, bytes: [UInt8], at: Instant)] = []
    /// The server closed the connection (or it failed).
    private(set) var closed = false

    /// Connects to `server` (a TCP listening address), waiting up to 2 s.
    init(certificate: DTLSCertificate, connectingTo server: SocketAddress, profiles: [SRTPProfile]? = nil) throws {
        self.certificate = certificate
        socket = try TCPClientSocket(connectingTo: server)
        let end = MonotonicClock.now() + .seconds(2)
        var progress = socket.initialProgress
        while progress == .inProgress, MonotonicClock.now() < end {
            usleep(1000)
            progress = socket.finishConnect()
        }
        guard progress == .connected else { throw SocketError(operation: "connect \(server)", errno: ETIMEDOUT) }
        local = try socket.localAddress().transportAddress.overTCP
        self.server = server.transportAddress.overTCP
        var configuration = PeerTransport.Configuration()
        if let profiles { configuration.dtls.srtpProfiles = profiles }
        transport = try PeerTransport(
            role: .client, certificate: certificate, configuration: configuration, now: MonotonicClock.now())
    }

    deinit { readBuffer.deallocate() }

    /// Writes one frame: the RFC 4571 prefix, then the packet. Small
    /// test writes on a local connection: the kernel takes them whole.
    func sendFrame(_ bytes: UnsafeRawBufferPointer) {
        var framed = [UInt8](repeating: 0, count: StreamFraming.headerLength + bytes.count)
        framed.withUnsafeMutableBytes { out in
            StreamFraming.writeHeader(length: bytes.count, into: out)
            UnsafeMutableRawBufferPointer(rebasing: out[2...]).copyMemory(from: bytes)
        }
        writeAll(framed)
    }

    /// Writes raw bytes, waiting while the kernel's buffer is full (1 s at most).
    func writeAll(_ bytes: [UInt8]) {
        var offset = 0
        let end = MonotonicClock.now() + .seconds(1)
        while offset < bytes.count, MonotonicClock.now() < end {
            let r = bytes.withUnsafeBytes { socket.stream.send(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            switch r {
            case .bytes(let n): offset += n
            case .wouldBlock: usleep(500)
            case .endOfStream, .failed: closed = true; return
            }
        }
    }

    /// One round: timers, queued packets (every one goes on the
    /// connection, whatever address the transport names), then what the
    /// socket holds (waiting at most 2 ms).
    func step() {
        let now = MonotonicClock.now()
        if let d = transport.nextDeadline, d <= now { transport.handleTimeout(now: now) }
        while let out = transport.pollTransmit() { out.bytes.withUnsafeBytes { sendFrame($0) } }
        var poll = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        guard !closed, Glibc.poll(&poll, 1, 2) > 0 else { return }
        switch socket.stream.receive(into: readBuffer) {
        case .bytes(let n):
            var input = UnsafeMutableRawBufferPointer(rebasing: readBuffer[0..<n])
            while let frame = try? decoder.nextFrame(from: &input) {
                let arrival = MonotonicClock.now()
                let result = transport.receive(frame, from: server, to: local, now: arrival)
                switch result {
                case .handled: break
                case .rtp(let k), .rtcp(let k): received.append((result, Array(frame[0..<k]), arrival))
                }
            }
        case .wouldBlock: break
        case .endOfStream, .failed: closed = true
        }
    }

    func pump(for limit: Duration, until done: () -> Bool = { false }) throws {
        let end = MonotonicClock.now() + limit
        while MonotonicClock.now() < end, !done() { step() }
    }

    @discardableResult
    func sendMedia(_ packet: [UInt8], rtcp: Bool = false) -> Bool {
        var buffer = packet + [UInt8](repeating: 0, count: SRTPSession.rtcpTrailerRoom)
        return buffer.withUnsafeMutableBytes { raw in
            let r = rtcp ? transport.protectRTCP(raw, length: packet.count) : transport.protectRTP(raw, length: packet.count)
            guard let r, r.to == server else { return false }
            sendFrame(UnsafeRawBufferPointer(rebasing: raw[0..<r.length]))
            return true
        }
    }
}
