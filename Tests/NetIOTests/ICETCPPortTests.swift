import Synchronization
import Testing
import Wire

@testable import NetIO

#if canImport(Glibc)
    import Glibc
#endif

/// Answers a one-byte frame "F" with `count` numbered 1000-byte packets to
/// its sender, at once: more than the connection's output buffer and the
/// kernel's socket buffer hold while the client is not reading.
final class FloodEngine: WorkerEngine {
    let count: Int
    init(count: Int) { self.count = count }

    func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?, now: Instant,
        transmit: TransmitQueue
    ) {
        guard datagram.count == 1, datagram[0] == UInt8(ascii: "F") else { return }
        for n in 0..<count {
            transmit.send(to: source) { slot in
                slot.storeBytes(of: UInt32(n).bigEndian, as: UInt32.self)
                for i in 4..<1000 { slot[i] = UInt8(truncatingIfNeeded: n) }
                return 1000
            }
        }
    }
    func control(_ message: Void, now: Instant, transmit: TransmitQueue) {}
    func timeout(now: Instant, transmit: TransmitQueue) {}
    func nextDeadline() -> Instant? { nil }
}

/// The ICE-TCP port of a real worker: RFC 4571 frames in and out over a
/// loopback connection, whatever the read boundaries, and a bounded output.
@Suite(.serialized) struct ICETCPPortTests {
    static func connect(_ address: SocketAddress) throws -> TCPClientSocket {
        let socket = try TCPClientSocket(connectingTo: address)
        let end = MonotonicClock.now() + .seconds(2)
        while socket.finishConnect() == .inProgress, MonotonicClock.now() < end { usleep(1000) }
        return socket
    }

    /// Reads frames until `count` arrived, the peer closed, or `limit`.
    static func readFrames(_ socket: borrowing TCPClientSocket, count: Int, limit: Duration) -> [[UInt8]] {
        var decoder = StreamFrameDecoder(maxFrameLength: 4096)
        var frames: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 7)  // odd reads on purpose
        let end = MonotonicClock.now() + limit
        while frames.count < count, MonotonicClock.now() < end {
            let r = buffer.withUnsafeMutableBytes { socket.stream.receive(into: $0) }
            switch r {
            case .bytes(let n):
                buffer.withUnsafeMutableBytes { raw in
                    var input = UnsafeMutableRawBufferPointer(rebasing: raw[0..<n])
                    while let frame = try? decoder.nextFrame(from: &input) { frames.append(Array(frame)) }
                }
            case .wouldBlock: usleep(200)
            case .endOfStream, .failed: return frames
            }
        }
        return frames
    }

    @Test func echoesFramesSplitAcrossWritesBackFramedOnTheConnection() throws {
        let worker = try UDPWorker(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, engine: EchoEngine(),
            tcp: (SocketAddress(ip: "127.0.0.1", port: 0)!, ICETCPLimits()))
        let thread = WorkerThread { worker.run() }
        var stopped = false
        defer {
            if !stopped {
                worker.requestStop()
                thread.join()
            }
        }
        let port = try #require(worker.tcpPort)
        let socket = try Self.connect(port.localAddress)
        // Two frames, "abc" and "hello", written in three pieces that cut
        // the second prefix in half.
        let stream: [UInt8] = [0, 3] + Array("abc".utf8) + [0, 5] + Array("hello".utf8)
        for piece in [stream[0..<4], stream[4..<6], stream[6...]] {
            _ = Array(piece).withUnsafeBytes { socket.stream.send($0) }
            usleep(5000)
        }
        let frames = Self.readFrames(socket, count: 2, limit: .seconds(2))
        #expect(frames == [Array("cba".utf8), Array("olleh".utf8)])
        worker.requestStop()
        thread.join()
        stopped = true
        // Read after the worker thread ended: the answers went out on TCP only.
        #expect(worker.transmittedDatagrams == 0)
        #expect(port.counters.framesReceived == 2 && port.counters.framesSent == 2)
    }

    /// A client that stops reading: the port keeps at most its output
    /// buffer, drops whole packets beyond it (counted), and what arrives is
    /// still well framed and in order.
    @Test func dropsWholePacketsWhenTheOutputBufferIsFull() throws {
        let sent = 20_000  // 20 MB: far beyond loopback's socket buffers
        let worker = try UDPWorker(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, engine: FloodEngine(count: sent),
            tcp: (SocketAddress(ip: "127.0.0.1", port: 0)!, ICETCPLimits(sendBufferBytes: 16384)))
        let thread = WorkerThread { worker.run() }
        var stopped = false
        defer {
            if !stopped {
                worker.requestStop()
                thread.join()
            }
        }
        let port = try #require(worker.tcpPort)
        let socket = try Self.connect(port.localAddress)
        _ = [UInt8]([0, 1, UInt8(ascii: "F")]).withUnsafeBytes { socket.stream.send($0) }
        usleep(300_000)
        let frames = Self.readFrames(socket, count: sent, limit: .seconds(3))
        worker.requestStop()
        thread.join()
        stopped = true
        #expect(frames.count > 0 && frames.count < sent)
        // A burst in one round goes to the kernel as the buffer fills, so
        // more than the output buffer's 16 frames arrive.
        #expect(frames.count > 16384 / 1002 + 1, "\(frames.count) frames")
        #expect(frames.allSatisfy { $0.count == 1000 })
        let numbers = frames.map { UInt32($0[0]) << 24 | UInt32($0[1]) << 16 | UInt32($0[2]) << 8 | UInt32($0[3]) }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        #expect(port.counters.sendBufferDrops == sent - port.counters.framesSent)
        #expect(port.counters.framesSent == frames.count)
    }
}
