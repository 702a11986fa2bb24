import NetIO
import Signaling
import Testing

@testable import SignalingServer

@Suite struct ForwardedClientTests {
    private static let proxies = ["10.0.0.0/8", "::1"].map { AddressPrefix($0)! }

    private func client(_ headers: [(String, String)], peer: String = "10.1.2.3") -> String? {
        let request = HTTPRequest(method: "GET", target: "/", headers: HTTPHeaders(headers))
        return ForwardedClient.address(of: request, peer: SocketAddress(ip: peer, port: 4000), trusted: Self.proxies)?.ip
    }

    @Test(
        arguments: [
            // (headers, peer, expected client)
            ([("X-Forwarded-For", "203.0.113.7")], "10.1.2.3", "203.0.113.7"),
            // The rightmost untrusted hop: what the client wrote on the left is not believed.
            ([("X-Forwarded-For", "6.6.6.6, 203.0.113.7, 10.9.9.9")], "10.1.2.3", "203.0.113.7"),
            ([("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "203.0.113.7")], "10.1.2.3", "203.0.113.7"),
            // Every hop a proxy: the leftmost is the client.
            ([("X-Forwarded-For", "10.4.4.4, 10.5.5.5")], "10.1.2.3", "10.4.4.4"),
            // Not from a trusted proxy: the header is ignored.
            ([("X-Forwarded-For", "203.0.113.7")], "192.0.2.1", "192.0.2.1"),
            // No header: the proxy itself.
            ([], "10.1.2.3", "10.1.2.3"),
            // Garbage stops the walk at the last trusted hop (limited, not exempt).
            ([("X-Forwarded-For", "203.0.113.7, unknown")], "10.1.2.3", "10.1.2.3"),
            ([("X-Forwarded-For", "203.0.113.7, 10.2.2.2, bogus!")], "10.1.2.3", "10.1.2.3"),
            ([("X-Forwarded-For", "203.0.113.7:5555")], "10.1.2.3", "203.0.113.7"),
            ([("X-Forwarded-For", "[2001:db8::1]:5555")], "::1", "2001:db8::1"),
            ([("X-Forwarded-For", "2001:db8::2")], "::1", "2001:db8::2"),
            // RFC 7239 section 4 wins over X-Forwarded-For when both are present.
            (
                [("Forwarded", #"for=192.0.2.60;proto=https, For="[2001:db8:cafe::17]:4711""#), ("X-Forwarded-For", "6.6.6.6")],
                "10.1.2.3", "2001:db8:cafe::17"
            ),
            ([("Forwarded", "proto=https;for=198.51.100.17")], "10.1.2.3", "198.51.100.17"),
            ([("Forwarded", "for=unknown")], "10.1.2.3", "10.1.2.3"),
            ([("Forwarded", "by=10.0.0.1")], "10.1.2.3", "10.1.2.3"),
        ] as [([(String, String)], String, String)])
    func theClientIsTheRightmostHopThatIsNotATrustedProxy(headers: [(String, String)], peer: String, expected: String) {
        #expect(client(headers, peer: peer) == expected)
    }

    /// Past `maxHops` the walk stops: the work per request is bounded
    /// whatever the head holds, and the client is the hop where it stopped.
    @Test func aLongChainIsReadOnlyToItsLastHops() {
        let hops = (0..<10_000).map { "10.0.\($0 / 256 % 256).\($0 % 256)" }
        let expected = hops[hops.count - ForwardedClient.maxHops]
        #expect(client([("X-Forwarded-For", (["203.0.113.1"] + hops).joined(separator: ", "))]) == expected)
    }
}
