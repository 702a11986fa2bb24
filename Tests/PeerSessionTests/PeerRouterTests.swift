import PeerSession
import STUN
import Testing
import Wire

@Suite struct PeerRouterTests {
    let alice = TransportAddress(ipv4: 192, 0, 2, 1, port: 5000)
    let bob = TransportAddress(ipv4: 192, 0, 2, 2, port: 6000)

    private func check(to localUfrag: String, from remoteUfrag: String = "peer") throws -> [UInt8] {
        try STUNMessageBuilder.bindingRequest(
            transactionID: .random(), username: "\(localUfrag):\(remoteUfrag)",
            priority: 1, control: .controlling(tieBreaker: 1), useCandidate: false,
            key: Array("password-password-pass".utf8))
    }

    private func route(_ r: inout PeerRouter<Int>, _ bytes: [UInt8], from: TransportAddress) -> Int? {
        bytes.withUnsafeBytes { r.route($0, from: from) }
    }

    @Test func firstContactIsRoutedByTheUfragInUsername() throws {
        var r = PeerRouter<Int>()
        r.register(1, localUfrag: "aaaa")
        r.register(2, localUfrag: "bbbb")
        #expect(route(&r, try check(to: "aaaa"), from: alice) == 1)
        #expect(route(&r, try check(to: "bbbb"), from: alice) == 2)
        #expect(route(&r, try check(to: "cccc"), from: alice) == nil)
        #expect(r.counters.unknownUfrag == 1)
    }

    /// The ufrag is looked up from the USERNAME bytes (issue #14): among
    /// thousands of transports each check finds its own, a re-registered
    /// ufrag moves, and a removed one is gone.
    @Test func ufragLookupScalesAndFollowsRegistrations() throws {
        var r = PeerRouter<Int>()
        for i in 0..<3000 { r.register(i, localUfrag: "u\(i)") }
        for i in stride(from: 0, to: 3000, by: 97) { #expect(route(&r, try check(to: "u\(i)"), from: alice) == i) }
        r.register(7000, localUfrag: "u5")
        #expect(route(&r, try check(to: "u5"), from: alice) == 7000)
        r.remove(7000)
        #expect(route(&r, try check(to: "u5"), from: alice) == nil)
        #expect(route(&r, try check(to: "u6"), from: alice) == 6)
        // A prefix or an extension of a ufrag is another ufrag.
        #expect(route(&r, try check(to: "u1000x"), from: alice) == nil)
    }

    @Test func mediaFromAnUnboundAddressIsDropped() {
        var r = PeerRouter<Int>()
        r.register(1, localUfrag: "aaaa")
        #expect(route(&r, [0x80, 0x60, 0, 1], from: alice) == nil)
        #expect(route(&r, [0x16, 0xFE, 0xFD], from: alice) == nil)
        #expect(r.counters.unroutable == 2)
    }

    @Test func validatedAddressesRouteEverythingToTheirTransport() throws {
        var r = PeerRouter<Int>()
        r.register(1, localUfrag: "aaaa")
        r.register(2, localUfrag: "bbbb")
        r.noteValidated(alice, by: 1)
        r.noteValidated(bob, by: 2)
        #expect(route(&r, [0x80, 0x60, 0, 1], from: alice) == 1)
        #expect(route(&r, [0x80, 0x60, 0, 1], from: bob) == 2)
        // A check from Alice's address naming Bob's transport goes to Bob's
        // transport (which validates it or not), never silently to Alice's.
        #expect(route(&r, try check(to: "bbbb"), from: alice) == 2)
        // Only a validation moves the address.
        #expect(route(&r, [0x80, 0x60, 0, 1], from: alice) == 1)
        r.noteValidated(alice, by: 2)
        #expect(route(&r, [0x80, 0x60, 0, 1], from: alice) == 2)
        #expect(r.boundAddresses(of: 1).isEmpty)
    }

    @Test func removingATransportForgetsItsAddressesAndUfrag() throws {
        var r = PeerRouter<Int>()
        r.register(1, localUfrag: "aaaa")
        r.noteValidated(alice, by: 1)
        r.remove(1)
        #expect(route(&r, [0x80, 0x60, 0, 1], from: alice) == nil)
        #expect(route(&r, try check(to: "aaaa"), from: alice) == nil)
        #expect(r.transportCount == 0)
    }

    @Test func addressesPerTransportAreBounded() {
        var r = PeerRouter<Int>(maxAddressesPerTransport: 4)
        r.register(1, localUfrag: "aaaa")
        for port in UInt16(1)...10 { r.noteValidated(TransportAddress(ipv4: 192, 0, 2, 1, port: port), by: 1) }
        #expect(r.boundAddresses(of: 1).map(\.port) == [7, 8, 9, 10])
    }
}
