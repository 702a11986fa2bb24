import DTLS
import MediaWorker
import NetIO
import Testing
import Wire

/// The set-up: a server bound to the wildcard in a network
/// namespace with two IPv4 and two IPv6 addresses, and a client in
/// another namespace reaching each. Each client sits on the other subnet's
/// prefix from the address it reaches, so the kernel's own choice of
/// source for the answer is the wrong one (the address on the client's
/// subnet): only answering from the arrival address lets ICE complete.
@Suite(.serialized) struct WildcardNamespaceTests {
    static let serverAddresses = ["10.77.1.1/24", "10.77.2.1/24", "fd00:77::1/64", "fd00:78::1/64"]
    static let clientAddresses = ["10.77.1.2/24", "10.77.2.2/24", "fd00:77::2/64", "fd00:78::2/64"]

    @Test func wildcardServerIsReachedOnEachOfItsAddresses() throws {
        let namespaces: VethNamespaces
        do {
            namespaces = try VethNamespaces(serverAddresses: Self.serverAddresses, clientAddresses: Self.clientAddresses)
        } catch {
            print("WildcardNamespaceTests skipped: cannot make network namespaces: \(error)")
            return
        }
        defer { namespaces.delete() }

        let (server, announced) = try namespaces.inside(namespaces.server) {
            let server = try EchoServer(bindingTo: SocketAddress(ip: "::", port: 0)!)
            let announced = try MediaAddresses.choose(
                bind: server.worker.localAddress.transportAddress, dualStack: server.worker.isDualStack, announce: nil,
                interfaces: NetworkInterfaces.current())
            return (server, announced)
        }
        // Every address of the namespace's veth end, not lo, not the
        // veth's own fe80:: address.
        let expected = Self.serverAddresses.map { SocketAddress(ip: String($0.prefix { $0 != "/" }), port: 0)!.transportAddress }
        #expect(Set(announced.addresses) == Set(expected))
        #expect(announced.addresses.count == expected.count)

        server.start()
        defer { server.stop() }
        let port = server.worker.localAddress.port
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let routes = [("10.77.1.2", "10.77.2.1"), ("10.77.2.2", "10.77.1.1"), ("fd00:77::2", "fd00:78::1"), ("fd00:78::2", "fd00:77::1")]
        for (index, (clientIP, serverIP)) in routes.enumerated() {
            let client = try namespaces.inside(namespaces.client) {
                try UDPClient(certificate: certificate, profiles: [.aeadAES128GCM], ip: clientIP)
            }
            let candidate = SocketAddress(ip: serverIP, port: port)!.transportAddress
            try server.connectAndEcho(client, on: candidate, profile: .aeadAES128GCM, id: UInt64(index + 1))
        }
    }
}
