import Testing
import Wire

@testable import NetIO

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct TCPListenerTests {
    @Test func bindsAFreePortAndAcceptsWithoutBlocking() throws {
        let listener = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        #expect(listener.localAddress.port != 0)
        #expect(listener.localAddress.ip == "127.0.0.1")
        // Nothing waiting: nil at once rather than blocking.
        #expect(try listener.accept() == nil)

        let client = try BlockingClient(connectingTo: listener.localAddress)
        var stream: TCPStream?
        #expect(
            eventually {
                stream = try? listener.accept(); return stream != nil
            })
        #expect(stream?.peer?.ip == "127.0.0.1")
        #expect(client.send("abc"))

        var buffer = [UInt8](repeating: 0, count: 16)
        var result = TCPTransfer.wouldBlock
        _ = eventually {
            result = buffer.withUnsafeMutableBytes { stream!.receive(into: $0) }
            return result != .wouldBlock
        }
        #expect(result == .bytes(3))
        #expect(Array(buffer[0..<3]) == Array("abc".utf8))
        #expect(buffer.withUnsafeMutableBytes { stream!.receive(into: $0) } == .wouldBlock)

        let sent = Array("xyz".utf8).withUnsafeBytes { stream!.send($0) }
        #expect(sent == .bytes(3))
        #expect(client.receiveString(count: 3) == "xyz")

        client.shutdownWrite()
        _ = eventually {
            result = buffer.withUnsafeMutableBytes { stream!.receive(into: $0) }
            return result != .wouldBlock
        }
        #expect(result == .endOfStream)
    }

    @Test func bindingAPortInUseFails() throws {
        let first = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        #expect(throws: SocketError.self) {
            _ = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: first.localAddress.port)!)
        }
    }
}
