import Testing

@testable import NetIO

@Suite struct AddressPrefixTests {
    private func address(_ ip: String) -> SocketAddress { SocketAddress(ip: ip, port: 1)! }

    @Test func prefixesMatchTheirNetworkOnly() throws {
        let ten = try #require(AddressPrefix("10.0.0.0/8"))
        #expect(ten.contains(address("10.255.1.2")))
        #expect(!ten.contains(address("11.0.0.1")))
        // An IPv4 peer on a dual-stack listener shows as ::ffff:a.b.c.d.
        #expect(ten.contains(address("::ffff:10.1.1.1")))
        #expect(!ten.contains(address("::1")))
        let host = try #require(AddressPrefix("127.0.0.1"))
        #expect(host.length == 32 && host.contains(address("127.0.0.1")) && !host.contains(address("127.0.0.2")))
        let v6 = try #require(AddressPrefix("2001:db8::/33"))
        #expect(v6.contains(address("2001:db8:7fff::1")) && !v6.contains(address("2001:db8:8000::1")))
        // Host bits are cleared: 10.1.2.3/8 is 10.0.0.0/8.
        #expect(AddressPrefix("10.1.2.3/8") == ten)
        #expect(ten.description == "10.0.0.0/8")
        #expect(AddressPrefix("0.0.0.0/0")!.contains(address("8.8.8.8")))
        #expect(AddressPrefix("192.168.1.0/23")!.contains(address("192.168.0.9")))
    }

    @Test(arguments: ["", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0/8", "host.example", "10.0.0.0/8/1", "1.2.3.4/"])
    func malformedPrefixesAreRejected(text: String) {
        #expect(AddressPrefix(text) == nil)
    }

    @Test func exemptAddressesAreNeverCountedOrRefused() throws {
        var limiter = TCPAddressLimiter(
            limits: .init(
                maxConnectionsPerAddress: 1, connectionsPerSecond: 1, burst: 1, maxAddresses: 8,
                exempt: [AddressPrefix("127.0.0.5")!]))
        for _ in 0..<100 { #expect(limiter.admit(address("127.0.0.5"), now: .zero) == .admit) }
        #expect(limiter.trackedAddresses == 0)
        #expect(limiter.admit(address("127.0.0.6"), now: .zero) == .admit)
        #expect(limiter.admit(address("127.0.0.6"), now: .zero) == .tooManyConnections)
    }
}
