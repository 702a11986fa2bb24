import NetIO
import Testing
import Wire

@Suite struct UDPSocketTests {
    @Test func batchRoundTripOverLoopback() throws {
        let a = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let b = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let bAddress = try b.localAddress()
        #expect(bAddress.port != 0)
        b.setReceiveTimeout(.seconds(2))

        let out = DatagramBatch(capacity: 8, slotSize: 1500)
        for i in 0..<5 {
            let slot = out.slot(i)
            for j in 0..<100 + i { slot[j] = UInt8(truncatingIfNeeded: i &+ j) }
            out.setLength(100 + i, at: i)
            out.setAddress(bAddress, at: i)
        }
        out.count = 5
        #expect(a.send(out) == 5)

        let incoming = DatagramBatch(capacity: 8, slotSize: 1500)
        var received = 0
        var lengths: [Int] = []
        while received < 5 {
            let n = try b.receive(into: incoming)
            if n == 0 { break }
            for i in 0..<n {
                lengths.append(incoming.length(i))
                #expect(incoming.address(i) == (try a.localAddress()))
                let d = incoming.datagram(i)
                #expect(d[1] == UInt8(truncatingIfNeeded: (d.count - 100) + 1))
            }
            received += n
        }
        #expect(lengths.sorted() == [100, 101, 102, 103, 104])
    }

    @Test func receiveTimesOutWithZero() throws {
        let s = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        s.setReceiveTimeout(.milliseconds(20))
        let batch = DatagramBatch(capacity: 2)
        #expect(try s.receive(into: batch) == 0)
    }

    @Test func ipv6Loopback() throws {
        let s = try UDPSocket(bindingTo: SocketAddress(ip: "::1", port: 0)!)
        let address = try s.localAddress()
        #expect(address.family == .v6)
        #expect(address.description.hasPrefix("[::1]:"))
    }

    @Test func parsesHostAndPort() {
        #expect(SocketAddress(hostAndPort: "127.0.0.1:8080")?.port == 8080)
        #expect(SocketAddress(hostAndPort: "[::1]:10000")?.ipBytes.last == 1)
        #expect(SocketAddress(hostAndPort: "127.0.0.1") == nil)
        #expect(SocketAddress(hostAndPort: "host:99999") == nil)
        #expect(SocketAddress(hostAndPort: "999.1.1.1:80") == nil)
    }

    @Test func convertsToAndFromTransportAddress() {
        let v4 = SocketAddress(ip: "192.0.2.7", port: 5000)!
        #expect(v4.transportAddress == TransportAddress(ipv4: 192, 0, 2, 7, port: 5000))
        #expect(SocketAddress(v4.transportAddress) == v4)
        let v6 = SocketAddress(ip: "2001:db8::1", port: 443)!
        #expect(v6.transportAddress.ipv6! == (0x2001_0DB8_0000_0000, 1))
        #expect(SocketAddress(v6.transportAddress).description == "[2001:db8::1]:443")
    }

    @Test func bindingAPortInUseFails() throws {
        let a = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let taken = try a.localAddress()
        #expect(throws: SocketError.self) { _ = try UDPSocket(bindingTo: taken) }
    }
}
