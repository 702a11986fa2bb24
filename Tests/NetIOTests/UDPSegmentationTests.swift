import NetIO
import Testing
import Wire

/// UDP GSO on real loopback sockets: what the receiver sees must be the
/// same datagrams, bytes and per-destination order as without it.
@Suite struct UDPSegmentationTests {
    /// The bytes of datagram `index` (`length` long): unique per index.
    static func payload(_ index: Int, length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &* 31) }
    }

    /// Reads datagrams until `count` arrived or the socket's timeout passed.
    static func receive(_ socket: borrowing UDPSocket, count: Int) throws -> [[UInt8]] {
        let batch = DatagramBatch(capacity: 64, slotSize: 2048)
        var got: [[UInt8]] = []
        while got.count < count {
            let n = try socket.receive(into: batch)
            if n == 0 { break }
            for i in 0..<n { got.append(Array(batch.datagram(i))) }
        }
        return got
    }

    /// A bound loopback socket (a class: `UDPSocket` cannot sit in arrays).
    final class Receiver {
        let socket: UDPSocket
        let address: TransportAddress
        init() throws {
            socket = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
            socket.setReceiveTimeout(.milliseconds(500))
            address = try socket.localAddress().transportAddress
        }
        func receive(count: Int) throws -> [[UInt8]] { try UDPSegmentationTests.receive(socket, count: count) }
    }

    @Test func frameOfTenToOneDestinationArrivesAsTenDatagramsInOrder() throws {
        let sender = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let rx = try Receiver()
        let address = rx.address
        let queue = TransmitQueue(descriptor: sender.descriptor, capacity: 32, slotSize: 2048, segmentation: true)
        #expect(queue.segmentation.enabled)
        let sent = (0..<10).map { Self.payload($0, length: $0 == 9 ? 700 : 1200) }
        for p in sent { queue.send(p, to: address) }
        queue.flush()
        #expect(queue.segmentation.sendCalls == 1)
        #expect(queue.segmentation.messages == 1)
        #expect(queue.segmentation.segments == 10)
        #expect(queue.sent == 10)
        #expect(try rx.receive(count: 10) == sent)
    }

    /// Interleaved destinations, sizes that close a group (a shorter one)
    /// or may not join one (longer than a segment may be).
    static let mixed: [(destination: Int, length: Int)] = [
        (0, 1000), (1, 1200), (0, 1000), (2, 1500), (0, 1500), (1, 800), (0, 1000), (0, 500), (2, 300), (1, 1200),
        (0, 1000),
    ]

    func sendMixed(segmentation: Bool) throws -> (perDestination: [[[UInt8]]], received: [[[UInt8]]], UDPSegmentation) {
        let sender = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let receivers = try (0..<3).map { _ in try Receiver() }
        let queue = TransmitQueue(descriptor: sender.descriptor, capacity: 32, slotSize: 2048, segmentation: segmentation)
        var expected: [[[UInt8]]] = [[], [], []]
        for (i, d) in Self.mixed.enumerated() {
            let p = Self.payload(i, length: d.length)
            expected[d.destination].append(p)
            queue.send(p, to: receivers[d.destination].address)
        }
        queue.flush()
        #expect(queue.sent == Self.mixed.count)
        let received = try (0..<3).map { try receivers[$0].receive(count: expected[$0].count) }
        return (expected, received, queue.segmentation)
    }

    @Test func mixedDestinationsKeepPerDestinationOrderAndBytes() throws {
        let (expected, received, s) = try sendMixed(segmentation: true)
        #expect(received == expected)
        // 0: [1000 1000] [1500] [1000 500] [1000] (the 1500 may not be a
        // segment, and nothing after it may overtake it); 1: [1200 800]
        // [1200]; 2: [1500] [300].
        #expect(s.messages == 3)
        #expect(s.segments == 6)
        #expect(s.sendCalls == 1)
    }

    @Test func withSegmentationOffTheSameBytesArrive() throws {
        let (expected, received, s) = try sendMixed(segmentation: false)
        #expect(received == expected)
        #expect(!s.enabled)
        #expect(s.messages == 0 && s.segments == 0)
        #expect(try sendMixed(segmentation: true).received == received)
    }

    @Test func datagramLargerThanASegmentMayBeIsSentAlone() throws {
        let sender = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let rx = try Receiver()
        let address = rx.address
        let queue = TransmitQueue(descriptor: sender.descriptor, capacity: 8, slotSize: 2048, segmentation: true)
        let sent = (0..<3).map { Self.payload($0, length: 1500) }
        for p in sent { queue.send(p, to: address) }
        queue.flush()
        #expect(queue.segmentation.messages == 0)
        #expect(try rx.receive(count: 3) == sent)
    }

    @Test func aRunLongerThanSixtyFourSegmentsSplits() throws {
        let sender = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let rx = try Receiver()
        let address = rx.address
        let queue = TransmitQueue(descriptor: sender.descriptor, capacity: 128, slotSize: 2048, segmentation: true)
        let sent = (0..<70).map { Self.payload($0, length: 100) }
        for p in sent { queue.send(p, to: address) }
        queue.flush()
        #expect(queue.segmentation.messages == 2)
        #expect(queue.segmentation.segments == 70)
        #expect(try rx.receive(count: 70) == sent)
    }

    /// A frame of 8 packets to each of 40 subscribers, queued packet by
    /// packet across subscribers as a router does, leaves in one call.
    @Test func oneFlushOfFortySubscribersIsOneSendCall() throws {
        let sender = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let receivers = try (0..<40).map { _ in try Receiver() }
        let queue = TransmitQueue(descriptor: sender.descriptor, capacity: 512, slotSize: 2048, segmentation: true)
        for packet in 0..<8 {
            for r in receivers { queue.send(Self.payload(packet, length: 1100), to: r.address) }
        }
        queue.flush()
        #expect(queue.segmentation.sendCalls == 1)
        #expect(queue.segmentation.messages == 40)
        #expect(queue.segmentation.segments == 320)
        for r in receivers {
            #expect(try r.receive(count: 8) == (0..<8).map { Self.payload($0, length: 1100) })
        }
    }
}
