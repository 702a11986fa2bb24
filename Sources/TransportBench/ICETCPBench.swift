import NetIO
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Echoes every frame back to the connection it came on: the worker's
/// ICE-TCP path without ICE or SRTP (framing in, the engine, framing out).
final class FrameEchoEngine: WorkerEngine {
    func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?, now: Instant,
        transmit: TransmitQueue
    ) {
        transmit.send(to: source) { slot in
            guard datagram.count <= slot.count else { return 0 }
            slot.copyMemory(from: UnsafeRawBufferPointer(datagram))
            return datagram.count
        }
    }
    func control(_ message: Void, now: Instant, transmit: TransmitQueue) {}
    func timeout(now: Instant, transmit: TransmitQueue) {}
    func nextDeadline() -> Instant? { nil }
}

/// A client thread sends windows of `window` framed 1200-byte packets to a
/// worker's ICE-TCP port and reads each window's echo back: the cost and,
/// under Scripts/bench-support/malloc_count.c, the allocations per packet of
/// the TCP media path in both directions (the client side allocates
/// nothing in steady state, so the count is the worker's).
struct ICETCPBench {
    struct Result {
        var packets: Int
        var nanosecondsPerPacket: Double
        var allocationsPerPacket: Double?
        var counters: ICETCPCounters
    }

    let packets: Int
    let window = 32
    let length = 1200

    func run() throws -> Result {
        let limits = ICETCPLimits(bindingTimeout: .seconds(3600), idleTimeout: .seconds(3600))
        let worker = try UDPWorker(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, engine: FrameEchoEngine(),
            tcp: (SocketAddress(ip: "127.0.0.1", port: 0)!, limits))
        let thread = WorkerThread { worker.run() }
        defer {
            worker.requestStop()
            thread.join()
        }
        let port = worker.tcpPort!
        let socket = try TCPClientSocket(connectingTo: port.localAddress)
        var pollState = pollfd(fd: socket.descriptor, events: Int16(POLLOUT), revents: 0)
        _ = poll(&pollState, 1, 2000)
        let frame = StreamFraming.headerLength + length
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: window * frame, alignment: 16)
        let back = UnsafeMutableRawBufferPointer.allocate(byteCount: window * frame, alignment: 16)
        defer {
            out.deallocate()
            back.deallocate()
        }
        for i in 0..<window {
            StreamFraming.writeHeader(length: length, into: UnsafeMutableRawBufferPointer(rebasing: out[(i * frame)...]))
            UnsafeMutableRawBufferPointer(rebasing: out[(i * frame + 2)..<((i + 1) * frame)]).initializeMemory(
                as: UInt8.self, repeating: UInt8(truncatingIfNeeded: i))
        }
        func round() -> Bool {
            var sent = 0
            var received = 0
            while received < out.count {
                if sent < out.count, case .bytes(let n) = socket.stream.send(UnsafeRawBufferPointer(rebasing: out[sent...])) {
                    sent += n
                }
                switch socket.stream.receive(into: UnsafeMutableRawBufferPointer(rebasing: back[received...])) {
                case .bytes(let n): received += n
                case .wouldBlock:
                    var p = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&p, 1, 100)
                case .endOfStream, .failed: return false
                }
            }
            return true
        }
        let rounds = max(1, packets / window)
        for _ in 0..<max(10, rounds / 10) { guard round() else { throw SocketError(operation: "echo", errno: EPIPE) } }
        let before = FeedbackBench.allocationCount()
        let start = MonotonicClock.now()
        for _ in 0..<rounds { guard round() else { throw SocketError(operation: "echo", errno: EPIPE) } }
        let elapsed = MonotonicClock.now() - start
        let after = FeedbackBench.allocationCount()
        let total = rounds * window
        var perPacket: Double?
        if let a = before, let b = after, b >= a { perPacket = Double(b - a) / Double(total) }
        guard memcmp(out.baseAddress!, back.baseAddress!, out.count) == 0 else {
            throw SocketError(operation: "echo differs", errno: EIO)
        }
        worker.requestStop()
        thread.join()
        return Result(
            packets: total, nanosecondsPerPacket: Double(elapsed.nanoseconds) / Double(total),
            allocationsPerPacket: perPacket, counters: port.counters)
    }
}
