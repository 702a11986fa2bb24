import Foundation
import HTTPClient
import NetIO
import Testing

@testable import RoomBot

/// roombot's way to the server: host names through getaddrinfo, and the
/// first resolved address that accepts a connection.
@Suite struct RoomBotResolutionTests {
    @Test func namesAndLiteralsResolveToIPv4AndIPv6() throws {
        let v4 = try SocketAddress.resolve(host: "localhost", port: 8443)
        #expect(v4.contains(SocketAddress(ip: "127.0.0.1", port: 8443)!))
        let v6 = try SocketAddress.resolve(host: "::1", port: 443)
        #expect(v6 == [SocketAddress(ip: "::1", port: 443)!])
        #expect(throws: NameResolutionError.self) { try SocketAddress.resolve(host: "no-such-host.invalid", port: 1) }
    }

    @Test func firstReachableSkipsAnAddressWithoutListener() throws {
        let listener = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        // A port that was free a moment ago: connecting there is refused.
        let closedPort = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!).localAddress
        let open = listener.localAddress
        #expect(ServerEndpoint.firstReachable([closedPort, open]) == open)
        #expect(ServerEndpoint.firstReachable([closedPort], timeoutMilliseconds: 500) == nil)
    }
}
