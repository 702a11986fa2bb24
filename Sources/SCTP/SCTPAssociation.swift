import CSCTPShim
import Wire

/// One SCTP association over DTLS (RFC 8261), on usrsctp in conn mode.
///
/// Bytes in (`handle(packet:now:)`: DTLS application data, one SCTP packet
/// per record); bytes out (`pollTransmit()`: hand each to DTLS as one
/// record); messages and association events out (`pollEvent()`); time in
/// (`handleTimeout(now:)` at `nextDeadline`, which advances usrsctp's
/// timers). After any input, drain `pollTransmit()` and `pollEvent()`.
///
/// Not sans-IO in the strict sense: usrsctp is one global stack per process
/// with its own locks, so this type takes `SCTPStack`'s lock around each
/// call into it (never on the RTP path), and a timer advanced by another
/// association's owner can queue packets here; they leave on our next poll,
/// at most one timer tick (50 ms) later.
///
/// Single owner, not `Sendable`. `close()` (or deinit) aborts the
/// association: SO_LINGER 0 makes usrsctp free it at once, so no callback
/// can name its address afterwards.
package final class SCTPAssociation {
    /// usrsctp's timers tick in milliseconds; we advance them this often
    /// while the association lives. usrsctp has no "next timer" call, so
    /// this is a fixed wake-up per association: 50 ms keeps it at 20 a
    /// second while staying well under its shortest timeout (the delayed
    /// SACK, 200 ms; retransmissions start at 1 s).
    package static let timerTick: Duration = .milliseconds(50)

    package let configuration: SCTPConfiguration
    private let queues: SCTPAssociationQueues
    private let context: UnsafeMutableRawPointer
    private var socket: UnsafeMutableRawPointer?
    private var lastTimerAdvance: Instant
    /// Our own clock's origin and usrsctp's fed total then: our timeouts
    /// run the wheel to base + (now - origin) (see `SCTPStack`).
    private let timerOrigin: Instant
    private var timerBase: Int64 = 0

    /// Registers the association and sends INIT (both ends of a WebRTC
    /// association connect; SCTP resolves the collision, RFC 4960 section
    /// 5.2.4).
    package init(configuration: SCTPConfiguration = SCTPConfiguration(), now: Instant) throws(SCTPError) {
        self.configuration = configuration
        self.queues = SCTPAssociationQueues(configuration: configuration)
        self.context = Unmanaged.passRetained(queues).toOpaque()
        self.lastTimerAdvance = now
        self.timerOrigin = now
        let stack = SCTPStack.shared
        var socket: UnsafeMutableRawPointer?
        var base: Int64 = 0
        let context = self.context
        stack.withLock {
            base = stack.totalMilliseconds
            swiftlet_sctp_register(context)
            socket = swiftlet_sctp_open(
                context, configuration.localPort, configuration.remotePort, configuration.streams,
                configuration.bufferBytes)
            if socket == nil { swiftlet_sctp_deregister(context) }
        }
        guard let socket else {
            Unmanaged<SCTPAssociationQueues>.fromOpaque(context).release()
            throw .setupFailed
        }
        self.socket = socket
        self.timerBase = base
    }

    deinit {
        close()
        Unmanaged<SCTPAssociationQueues>.fromOpaque(context).release()
    }

    // MARK: Input

    /// One SCTP packet from the peer (a DTLS application data record).
    /// usrsctp checks its CRC32c and verification tag and drops what does
    /// not belong (RFC 4960 sections 8.5, 6.8): garbage costs the packet.
    package func handle(packet: UnsafeRawBufferPointer, now: Instant) {
        guard socket != nil, packet.count > 0 else { return }
        let context = self.context
        SCTPStack.shared.withLock {
            swiftlet_sctp_input(context, packet.baseAddress!.assumingMemoryBound(to: UInt8.self), packet.count)
        }
    }

    package func handle(packet: [UInt8], now: Instant) {
        packet.withUnsafeBytes { handle(packet: $0, now: now) }
    }

    /// Advances usrsctp's timers (shared by every association in the
    /// process) by the time elapsed on our clock since we began.
    package func handleTimeout(now: Instant) {
        lastTimerAdvance = now
        guard socket != nil, now > timerOrigin else { return }
        let target = timerBase + (now - timerOrigin).nanoseconds / 1_000_000
        let stack = SCTPStack.shared
        stack.withLock { stack.advanceTimers(toTotal: target) }
    }

    /// Sends one message. Refused, with nothing sent, when larger than the
    /// configured maximum, on a stream we did not allow, or when usrsctp's
    /// send buffer is full.
    package func send(
        _ payload: UnsafeRawBufferPointer, stream: UInt16, ppid: UInt32, reliability: SCTPReliability
    ) throws(SCTPError) {
        guard payload.count <= configuration.maximumMessageSize else {
            throw .messageTooLarge(size: payload.count, limit: configuration.maximumMessageSize)
        }
        guard stream < configuration.streams else { throw .streamOutOfRange(stream) }
        guard let socket else { throw .notEstablished }
        var result = 0
        var bufferFull: Int32 = 0
        var established = false
        let queues = self.queues
        SCTPStack.shared.withLock {
            established = queues.established
            guard established else { return }
            let retransmits = reliability.maximumRetransmits.map { Int32(clamping: $0) } ?? -1
            result = swiftlet_sctp_send(
                socket, stream, ppid, reliability.unordered ? 1 : 0, retransmits,
                payload.baseAddress?.assumingMemoryBound(to: UInt8.self), payload.count, &bufferFull)
        }
        guard established else { throw .notEstablished }
        if result >= 0 { return }
        if bufferFull != 0 { throw .sendBufferFull }
        throw .sendFailed(errno: Int32(clamping: -result))
    }

    package func send(
        _ payload: [UInt8], stream: UInt16, ppid: UInt32, reliability: SCTPReliability
    )
        throws(SCTPError)
    {
        var failure: SCTPError?
        payload.withUnsafeBytes { bytes in
            do throws(SCTPError) {
                try send(bytes, stream: stream, ppid: ppid, reliability: reliability)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Resets our outgoing stream (RFC 6525): closes the data channel on
    /// it (RFC 8831 section 6.7).
    package func resetStream(_ stream: UInt16) {
        guard let socket, stream < configuration.streams else { return }
        SCTPStack.shared.withLock { _ = swiftlet_sctp_reset_stream(socket, stream) }
    }

    /// Aborts the association (an ABORT chunk may be queued for the peer)
    /// and deregisters its address. Idempotent.
    package func close() {
        guard let socket else { return }
        self.socket = nil
        let context = self.context
        let queues = self.queues
        SCTPStack.shared.withLock {
            swiftlet_sctp_close(socket)
            swiftlet_sctp_deregister(context)
            queues.notify(kind: Int32(SWIFTLET_SCTP_EVENT_DOWN), stream: 0)
        }
    }

    // MARK: Output

    /// The next SCTP packet for the peer; nil when none.
    package func pollTransmit() -> [UInt8]? {
        var packet: [UInt8]?
        let queues = self.queues
        SCTPStack.shared.withLock {
            if !queues.packets.isEmpty { packet = queues.packets.removeFirst() }
        }
        return packet
    }

    package func pollEvent() -> SCTPEvent? {
        var event: SCTPEvent?
        let queues = self.queues
        SCTPStack.shared.withLock {
            if !queues.events.isEmpty { event = queues.events.removeFirst() }
        }
        return event
    }

    /// When to call `handleTimeout(now:)`: one timer tick after the last,
    /// while the association lives.
    package var nextDeadline: Instant? { socket == nil ? nil : lastTimerAdvance + Self.timerTick }

    package var isEstablished: Bool {
        var established = false
        let queues = self.queues
        SCTPStack.shared.withLock { established = queues.established }
        return established
    }

    /// Messages dropped for exceeding the maximum size on receipt.
    package var oversizedMessagesReceived: Int {
        var count = 0
        let queues = self.queues
        SCTPStack.shared.withLock { count = queues.oversizedMessages }
        return count
    }
}
