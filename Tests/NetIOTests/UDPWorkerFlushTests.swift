import Testing
import Wire

@testable import NetIO

/// Sends every datagram back unchanged and never sets a deadline, so the
/// only sends are the echoes.
final class MirrorEngine: WorkerEngine {
    enum Control: Sendable { case none }
    func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?, now: Instant,
        transmit: TransmitQueue
    ) {
        transmit.send(UnsafeRawBufferPointer(datagram), to: source, from: local)
    }
    func control(_ message: Control, now: Instant, transmit: TransmitQueue) {}
    func timeout(now: Instant, transmit: TransmitQueue) {}
    func nextDeadline() -> Instant? { nil }
}

@Suite struct UDPWorkerFlushTests {
    /// Ten datagrams waiting before the worker starts are read in its first
    /// turn; their echoes leave in one flush: one sendmmsg, one GSO message.
    @Test func oneTurnsEchoesLeaveInOneSendCallAsOneGSOMessage() throws {
        let worker = try UDPWorker(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, engine: MirrorEngine())
        let client = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        client.setReceiveTimeout(.seconds(2))
        let out = DatagramBatch(capacity: 10, slotSize: 1200)
        for i in 0..<10 {
            out.slot(i).initializeMemory(as: UInt8.self, repeating: UInt8(i))
            out.setLength(1200, at: i)
            out.setAddress(worker.localAddress, at: i)
        }
        out.count = 10
        #expect(client.send(out) == 10)
        let thread = WorkerThread { worker.run() }
        let incoming = DatagramBatch(capacity: 16, slotSize: 2048)
        var firsts: [UInt8] = []
        while firsts.count < 10 {
            let n = try client.receive(into: incoming)
            if n == 0 { break }
            for i in 0..<n { firsts.append(incoming.datagram(i)[0]) }
        }
        worker.requestStop()
        thread.join()
        #expect(firsts == (0..<10).map { UInt8($0) })
        #expect(worker.segmentation.sendCalls == 1)
        #expect(worker.segmentation.messages == 1 && worker.segmentation.segments == 10)
        #expect(worker.sendCounters.snapshot == worker.segmentation)
    }
}
