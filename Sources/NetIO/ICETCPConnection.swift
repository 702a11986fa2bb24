import Wire

/// What ICE-TCP allows a worker's TCP media port (docs/SECURITY.md).
package struct ICETCPLimits: Equatable, Sendable {
    /// Open connections per worker; one more is closed at accept.
    package var maxConnections: Int
    /// Open connections per client address (IPv4, or an IPv6 /64).
    package var maxConnectionsPerAddress: Int
    /// A connection must send a STUN Binding request that a transport of
    /// this worker accepts (its ufrag and password) within this, or it is
    /// closed: an unauthenticated connection holds a slot only this long.
    package var bindingTimeout: Duration
    /// A bound connection with no frame for this long is closed. Consent
    /// checks (RFC 7675) arrive every few seconds, and the transport itself
    /// fails after 30 s without one, so 40 s only catches a peer gone quiet.
    package var idleTimeout: Duration
    /// The longest RFC 4571 frame accepted (ours, not the 65535 the prefix
    /// can say): a worker's datagram slot. A longer frame is skipped.
    package var maxFrameLength: Int
    /// Bytes queued per connection that the kernel has not taken yet
    /// (preallocated). A packet that does not fit is dropped and counted:
    /// media is loss-tolerant, and a queue without bound would only add
    /// delay and memory.
    package var sendBufferBytes: Int

    package init(
        maxConnections: Int = 256, maxConnectionsPerAddress: Int = 16, bindingTimeout: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(40), maxFrameLength: Int = 2048, sendBufferBytes: Int = 65536
    ) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.bindingTimeout = bindingTimeout
        self.idleTimeout = idleTimeout
        self.maxFrameLength = maxFrameLength
        self.sendBufferBytes = sendBufferBytes
    }
}

/// What a worker's ICE-TCP port did, for metrics and tests.
package struct ICETCPCounters: Equatable, Sendable {
    package var accepted = 0
    /// Closed at accept: over `maxConnections` or the per-address limits.
    package var refused = 0
    /// Closed for sending no accepted STUN Binding request in time.
    package var bindingTimeouts = 0
    package var idleTimeouts = 0
    /// Closed by the peer, by an error, or because their transport ended.
    package var closed = 0
    package var framesReceived = 0
    /// Frames dropped by the decoder (too long, empty).
    package var framingErrors = 0
    package var framesSent = 0
    /// Packets dropped because the connection's send buffer was full.
    package var sendBufferDrops = 0
    /// Packets to a TCP address with no open connection.
    package var noConnectionDrops = 0
    package init() {}
}

/// One accepted ICE-TCP connection (RFC 6544): the socket, its RFC 4571
/// decoder and a bounded, preallocated output buffer. Owned by the
/// worker thread's `ICETCPPort`.
final class ICETCPConnection {
    let stream: TCPStream
    /// The peer as ICE sees it: its IP and port, marked TCP.
    let remote: TransportAddress
    let peer: SocketAddress?
    let slot: Int
    var decoder: StreamFrameDecoder
    /// Framed bytes not yet taken by the kernel: `output[head..<tail]`.
    private let output: UnsafeMutableRawBufferPointer
    private var head = 0
    private var tail = 0
    /// A transport of the worker accepted this connection's checks.
    var bound = false
    /// When the connection is closed unless something happens first.
    var deadline: Instant
    var watchingWritable = false
    /// In the port's list of connections to flush this round.
    var queued = false

    init(stream: consuming TCPStream, remote: TransportAddress, slot: Int, limits: ICETCPLimits, now: Instant) {
        peer = stream.peer
        self.stream = stream
        self.remote = remote
        self.slot = slot
        decoder = StreamFrameDecoder(maxFrameLength: limits.maxFrameLength)
        output = .allocate(
            byteCount: max(limits.sendBufferBytes, limits.maxFrameLength + StreamFraming.headerLength), alignment: 16)
        deadline = now + limits.bindingTimeout
    }

    deinit { output.deallocate() }

    var descriptor: Int32 { stream.descriptor }
    var pendingBytes: Int { tail - head }

    /// Lets `write` fill a frame of at most `maxLength` bytes in place at
    /// the end of the output buffer, behind its RFC 4571 prefix. False when
    /// the buffer has no room for a frame that long (the packet is dropped).
    func appendFrame(maxLength: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) -> Bool? {
        let need = StreamFraming.headerLength + maxLength
        if output.count - tail < need, head > 0 {
            // Compact: move what the kernel has not taken to the front.
            let pending = tail - head
            if pending > 0 {
                UnsafeMutableRawBufferPointer(rebasing: output[0..<pending])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: output[head..<tail]))
            }
            head = 0
            tail = pending
        }
        guard output.count - tail >= need else { return false }
        let body = UnsafeMutableRawBufferPointer(rebasing: output[(tail + 2)..<(tail + need)])
        let length = write(body)
        guard length > 0 else { return nil }
        guard length <= maxLength else { return false }
        StreamFraming.writeHeader(length: length, into: UnsafeMutableRawBufferPointer(rebasing: output[tail..<(tail + 2)]))
        tail += StreamFraming.headerLength + length
        return true
    }

    /// Hands the kernel what it takes. False when the connection failed.
    func flush() -> Bool {
        while head < tail {
            switch stream.send(UnsafeRawBufferPointer(rebasing: output[head..<tail])) {
            case .bytes(let n): head += n
            case .wouldBlock: return true
            case .endOfStream, .failed: return false
            }
        }
        head = 0
        tail = 0
        return true
    }
}
