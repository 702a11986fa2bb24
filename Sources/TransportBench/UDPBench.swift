import Foundation
import NetIO
import Synchronization
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Datagrams per second over 127.0.0.1 between a sender thread and a
/// receiver thread, each owning one NetIO `UDPSocket`, for a fixed time.
/// `batch` datagrams per `sendmmsg`/`recvmmsg` (1 is the plain case).
/// `wildcard` binds both sockets to `::` as the server's default media bind
/// does: every received datagram carries its destination (IPV6_PKTINFO)
/// and every sent one its source (IP_PKTINFO), the cost of answering from
/// the arrival address.
///
/// The sender sends as fast as the kernel takes datagrams; on loopback a
/// datagram that finds the receiver's queue full is dropped, so the
/// receiver's count (not the sender's) is the throughput.
struct UDPBench {
    struct Result {
        var sent: Int
        var received: Int
        var seconds: Double
        var receiveBuffer: Int32
    }

    let datagramLength = 1200
    let batch: Int
    let duration: Duration
    var wildcard = false

    /// A socket handed to the thread that owns it.
    final class Owned: @unchecked Sendable {
        let socket: UDPSocket
        init(_ socket: consuming UDPSocket) { self.socket = socket }
    }

    func run() throws -> Result {
        guard let loopback = SocketAddress(ip: "127.0.0.1", port: 0), let any = SocketAddress(ip: "::", port: 0) else {
            fatalError("loopback address")
        }
        let receiver = Owned(try UDPSocket(bindingTo: wildcard ? any : loopback))
        let sender = Owned(try UDPSocket(bindingTo: wildcard ? any : loopback))
        let bound = try receiver.socket.localAddress().transportAddress
        let destination = wildcard ? TransportAddress(ipv4: 127, 0, 0, 1, port: bound.port) : bound
        let source: TransportAddress? = wildcard ? TransportAddress(ipv4: 127, 0, 0, 1, port: 0) : nil
        // Ask for 4 MiB queues; the kernel caps this at net.core.rmem_max /
        // wmem_max. Report what we got.
        var size: Int32 = 4 << 20
        setsockopt(receiver.socket.descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(4))
        setsockopt(sender.socket.descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(4))
        var effective: Int32 = 0
        var optionLength = socklen_t(4)
        getsockopt(receiver.socket.descriptor, SOL_SOCKET, SO_RCVBUF, &effective, &optionLength)
        receiver.socket.setReceiveTimeout(.milliseconds(20))

        let stop = Atomic<Bool>(false)
        let received = Atomic<Int>(0)
        let sent = Atomic<Int>(0)
        let receiverDone = DispatchSemaphore(value: 0)
        let senderDone = DispatchSemaphore(value: 0)
        let batch = self.batch, length = datagramLength, duration = self.duration
        let elapsed = Mutex<Duration>(.zero)

        let receiveThread = Thread {
            let slots = DatagramBatch(capacity: batch, slotSize: 2048)
            var count = 0
            // Runs until the sender has stopped and the queue is drained.
            while true {
                let n = (try? receiver.socket.receive(into: slots)) ?? 0
                count += n
                if n == 0 && stop.load(ordering: .acquiring) { break }
            }
            received.store(count, ordering: .releasing)
            receiverDone.signal()
        }
        let sendThread = Thread {
            let slots = DatagramBatch(capacity: batch, slotSize: 2048)
            for i in 0..<batch {
                let slot = slots.slot(i)
                for j in 0..<length { slot[j] = UInt8(truncatingIfNeeded: j) }
                slots.setLength(length, at: i)
                slots.setAddress(destination, at: i)
                slots.setLocalAddress(source, at: i)
            }
            slots.count = batch
            let clock = ContinuousClock()
            let start = clock.now
            let deadline = start + duration
            var count = 0
            var rounds = 0
            while true {
                // Read the clock every 64 sends only.
                if rounds & 63 == 0 && clock.now >= deadline { break }
                // `send` empties the batch (as the server's transmit queue
                // does); refill the count, the slots keep their bytes.
                slots.count = batch
                count += sender.socket.send(slots)
                rounds += 1
            }
            elapsed.withLock { $0 = clock.now - start }
            sent.store(count, ordering: .releasing)
            stop.store(true, ordering: .releasing)
            senderDone.signal()
        }
        receiveThread.start()
        sendThread.start()
        senderDone.wait()
        receiverDone.wait()
        return Result(
            sent: sent.load(ordering: .acquiring), received: received.load(ordering: .acquiring),
            seconds: nanoseconds(elapsed.withLock { $0 }) / 1e9, receiveBuffer: effective)
    }
}
