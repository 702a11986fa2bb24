import NetIO
import Testing
import Wire

/// A wildcard-bound socket learns where each datagram was sent and replies
/// from there. On Linux every 127.0.0.0/8 address is local on lo, so
/// 127.0.0.2 is a second address of this machine without any set-up.
@Suite struct LocalAddressTests {
    static let second = TransportAddress(ipv4: 127, 0, 0, 2, port: 0)

    private func send(_ text: String, from socket: borrowing UDPSocket, to address: TransportAddress) {
        let out = DatagramBatch(capacity: 1)
        let bytes = Array(text.utf8)
        out.slot(0).copyBytes(from: bytes)
        out.setLength(bytes.count, at: 0)
        out.setAddress(address, at: 0)
        out.count = 1
        socket.send(out)
    }

    /// Receives one datagram: its text, source and local address.
    private func receive(_ socket: borrowing UDPSocket) throws -> (String, TransportAddress?, TransportAddress?)? {
        let batch = DatagramBatch(capacity: 1)
        guard try socket.receive(into: batch) == 1 else { return nil }
        return (String(decoding: batch.datagram(0), as: UTF8.self), batch.address(0)?.transportAddress, batch.localAddress(0))
    }

    @Test(arguments: ["0.0.0.0", "::"])
    func wildcardSocketReportsEachDatagramsDestination(bindIP: String) throws {
        let server = try UDPSocket(bindingTo: SocketAddress(ip: bindIP, port: 0)!)
        let reports = server.reportsLocalAddresses, dualStack = server.isDualStack
        #expect(reports)
        #expect(dualStack == (bindIP == "::"))
        server.setReceiveTimeout(.seconds(2))
        let port = try server.localAddress().port
        let client = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let clientAddress = try client.localAddress().transportAddress

        send("one", from: client, to: TransportAddress(ipv4: 127, 0, 0, 1, port: port))
        let first = try #require(try receive(server))
        #expect(first.0 == "one")
        // On the dual-stack socket the kernel writes ::ffff:127.0.0.1; above
        // the socket it is the IPv4 address.
        #expect(first.1 == clientAddress)
        #expect(first.2 == TransportAddress(ipv4: 127, 0, 0, 1, port: 0))

        var second = Self.second
        second.port = port
        send("two", from: client, to: second)
        let next = try #require(try receive(server))
        #expect(next.0 == "two")
        #expect(next.2 == Self.second)
    }

    @Test func boundSocketReportsNoLocalAddress() throws {
        let server = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let reports = server.reportsLocalAddresses
        #expect(!reports)
        server.setReceiveTimeout(.seconds(2))
        let client = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        send("x", from: client, to: try server.localAddress().transportAddress)
        let got = try #require(try receive(server))
        #expect(got.2 == nil)
    }

    /// The kernel alone answers a client at 127.0.0.1 from 127.0.0.1 (its
    /// route's preferred source), whatever address the client wrote to; a
    /// source set on the slot overrides that.
    @Test(arguments: ["0.0.0.0", "::"])
    func replyLeavesFromTheSourceSetOnItsSlot(bindIP: String) throws {
        let server = try UDPSocket(bindingTo: SocketAddress(ip: bindIP, port: 0)!)
        let port = try server.localAddress().port
        let client = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        client.setReceiveTimeout(.seconds(2))
        let clientAddress = try client.localAddress().transportAddress

        func reply(from source: TransportAddress?) {
            let out = DatagramBatch(capacity: 1)
            out.slot(0)[0] = 0x2A
            out.setLength(1, at: 0)
            out.setAddress(clientAddress, at: 0)
            out.setLocalAddress(source, at: 0)
            out.count = 1
            #expect(server.send(out) == 1)
        }
        reply(from: nil)
        #expect(try receive(client)?.1 == TransportAddress(ipv4: 127, 0, 0, 1, port: port))
        reply(from: Self.second)
        var expected = Self.second
        expected.port = port
        #expect(try receive(client)?.1 == expected)
    }

    @Test func dualStackSocketTakesBothFamilies() throws {
        let server = try UDPSocket(bindingTo: SocketAddress(ip: "::", port: 0)!)
        server.setReceiveTimeout(.seconds(2))
        let port = try server.localAddress().port
        let v6 = try UDPSocket(bindingTo: SocketAddress(ip: "::1", port: 0)!)
        let v4 = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        v6.setReceiveTimeout(.seconds(2))
        v4.setReceiveTimeout(.seconds(2))
        let loopback6 = TransportAddress(ipv6: 0, 1, port: port)
        send("six", from: v6, to: loopback6)
        let got6 = try #require(try receive(server))
        #expect(got6.1 == (try v6.localAddress().transportAddress))
        #expect(got6.2 == TransportAddress(ipv6: 0, 1, port: 0))
        send("four", from: v4, to: TransportAddress(ipv4: 127, 0, 0, 1, port: port))
        let got4 = try #require(try receive(server))
        #expect(got4.1?.family == .ipv4)
        // Replies to both: the IPv4 one goes out as ::ffff:127.0.0.1.
        let out = DatagramBatch(capacity: 2)
        for (i, to) in [got6.1!, got4.1!].enumerated() {
            out.slot(i)[0] = UInt8(i)
            out.setLength(1, at: i)
            out.setAddress(to, at: i)
            out.setLocalAddress(i == 0 ? got6.2 : got4.2, at: i)
        }
        out.count = 2
        #expect(server.send(out) == 2)
        #expect(try receive(v6)?.1 == loopback6)
        #expect(try receive(v4)?.1 == TransportAddress(ipv4: 127, 0, 0, 1, port: port))
    }

    @Test func mappedAddressesReadAsIPv4() {
        let mapped = SocketAddress(ip: "::ffff:192.0.2.9", port: 7)!
        #expect(mapped.transportAddress == TransportAddress(ipv4: 192, 0, 2, 9, port: 7))
        let back = SocketAddress(TransportAddress(ipv4: 192, 0, 2, 9, port: 7), mappedToIPv6: true)
        #expect(back.family == .v6)
        #expect(back.ip == "::ffff:192.0.2.9")
        #expect(SocketAddress(ip: "::", port: 1)!.isWildcard)
        #expect(SocketAddress(ip: "0.0.0.0", port: 1)!.isWildcard)
        #expect(!SocketAddress(ip: "::1", port: 1)!.isWildcard)
    }
}
