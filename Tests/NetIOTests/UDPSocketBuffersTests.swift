import NetIO
import Testing
import Wire

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct UDPSocketBuffersTests {
    /// The kernel grants at least what it grants without privilege
    /// (net.core.rmem_max caps the plain option; with CAP_NET_ADMIN the
    /// FORCE one gives the size asked for).
    @Test func setsAndReportsTheSizes() throws {
        let s = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        // (#require cannot take an expression on a non-copyable socket.)
        let kernel = s.setBuffers(.kernelDefaults)
        let before = try #require(kernel)
        let asked = s.setBuffers(UDPSocketBuffers(receive: 1 << 20, send: 512 << 10))
        let got = try #require(asked)
        #expect(got.receive >= min(1 << 20, before.receive))
        #expect(got.send >= min(512 << 10, before.send))
        #expect(got.receive <= 1 << 20 && got.send <= 512 << 10)
        // Reading again changes nothing.
        let again = s.setBuffers(.kernelDefaults)
        #expect(again == got)
    }

    @Test func sizesOutsideTheAllowedRangeAreClamped() throws {
        let s = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let tiny = s.setBuffers(UDPSocketBuffers(receive: 1, send: 1))
        let got = try #require(tiny)
        // 1 byte asks for the smallest allowed size, not a socket that
        // holds nothing.
        #expect(got.receive >= UDPSocketBuffers.allowed.lowerBound / 2)
    }

    /// A datagram the kernel drops with the receive buffer full is counted
    /// by the socket, which is what /metrics shows per worker.
    @Test func countsWhatAFullReceiveBufferDropped() throws {
        let receiver = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        _ = receiver.setBuffers(UDPSocketBuffers(receive: UDPSocketBuffers.allowed.lowerBound, send: 0))
        let sender = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let none = receiver.receiveBufferDrops()
        #expect(none == 0)
        let target = try receiver.localAddress()
        let out = DatagramBatch(capacity: 32, slotSize: 1500)
        for i in 0..<32 {
            out.setLength(1200, at: i)
            out.setAddress(target, at: i)
        }
        var sent = 0
        for _ in 0..<20 {
            out.count = 32
            sent += sender.send(out)
        }
        receiver.setReceiveTimeout(.milliseconds(20))
        let incoming = DatagramBatch(capacity: 32, slotSize: 1500)
        var received = 0
        while case let n = try receiver.receive(into: incoming), n > 0 { received += n }
        let counted = receiver.receiveBufferDrops()
        let drops = try #require(counted)
        #expect(received < sent)
        #expect(drops == UInt64(sent - received))
    }
}
