import Foundation
import NetIO
import Wire

/// UDP GSO on the send side (issue #14): frames of `packetsPerFrame`
/// 1100-byte datagrams to each of `subscribers` loopback sockets, queued
/// packet by packet across subscribers as the router does and flushed once
/// per frame, with GSO on or off. Receivers are drained on the same thread
/// so the socket buffers never fill. Run it under `perf stat` once per mode
/// for instructions, cycles and system time per packet.
struct GSOBench {
    let frames: Int
    var subscribers = 40
    var packetsPerFrame = 8
    var length = 1100

    struct Result {
        let packets: Int
        let received: Int
        let sendCalls: Int
        let gsoMessages: Int
        let seconds: Double
    }

    func run(gso: Bool) throws -> Result {
        let sender = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        sender.setNonBlocking()
        let receivers = try (0..<subscribers).map { _ in try Receiver() }
        let queue = TransmitQueue(
            descriptor: sender.descriptor, capacity: subscribers * packetsPerFrame, slotSize: 2048, segmentation: gso)
        let payload = [UInt8](repeating: 0x5a, count: length)
        let incoming = DatagramBatch(capacity: 64, slotSize: 2048)
        var received = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<frames {
            for _ in 0..<packetsPerFrame {
                for r in receivers { queue.send(payload, to: r.address) }
            }
            queue.flush()
            for r in receivers {
                while true {
                    let n = (try? r.socket.receive(into: incoming)) ?? 0
                    received += n
                    if n < incoming.capacity { break }
                }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Result(
            packets: frames * subscribers * packetsPerFrame, received: received, sendCalls: queue.segmentation.sendCalls,
            gsoMessages: queue.segmentation.messages, seconds: seconds)
    }

    final class Receiver {
        let socket: UDPSocket
        let address: TransportAddress
        init() throws {
            socket = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
            socket.setNonBlocking()
            address = try socket.localAddress().transportAddress
        }
    }
}
