import Testing
import Wire

@testable import NetIO

#if canImport(Glibc)
    import Glibc
#endif

/// Waits until the connect settles, accepting on `listener` meanwhile.
private func settle(_ client: borrowing TCPClientSocket) -> TCPConnectProgress {
    var progress = client.initialProgress
    _ = eventually {
        if progress == .inProgress { progress = client.finishConnect() }
        return progress != .inProgress
    }
    return progress
}

@Suite struct TCPClientSocketTests {
    @Test(arguments: ["127.0.0.1", "::1"])
    func connectsToALoopbackListenerAndExchangesBytes(ip: String) throws {
        let listener = try TCPListener(bindingTo: SocketAddress(ip: ip, port: 0)!)
        let client = try TCPClientSocket(connectingTo: listener.localAddress)
        var accepted: TCPStream?
        #expect(
            eventually {
                accepted = try? listener.accept(); return accepted != nil
            })
        #expect(settle(client) == .connected)
        let local = try client.localAddress()
        #expect(accepted?.peer?.port == local.port)
        #expect(client.remote == listener.localAddress)

        #expect(Array("hello".utf8).withUnsafeBytes { client.stream.send($0) } == .bytes(5))
        var buffer = [UInt8](repeating: 0, count: 16)
        var result = TCPTransfer.wouldBlock
        _ = eventually {
            result = buffer.withUnsafeMutableBytes { accepted!.receive(into: $0) }
            return result != .wouldBlock
        }
        #expect(result == .bytes(5))
        #expect(Array(buffer[0..<5]) == Array("hello".utf8))
        // Non-blocking on the client side too: nothing to read yet.
        #expect(buffer.withUnsafeMutableBytes { client.stream.receive(into: $0) } == .wouldBlock)

        accepted = nil  // closes the server side
        _ = eventually {
            result = buffer.withUnsafeMutableBytes { client.stream.receive(into: $0) }
            return result != .wouldBlock
        }
        #expect(result == .endOfStream)
    }

    @Test func connectingToAClosedPortFails() throws {
        // Bind, learn the port, close: nothing listens there now.
        let port = try TCPListener(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!).localAddress.port
        let target = SocketAddress(ip: "127.0.0.1", port: port)!
        do {
            let client = try TCPClientSocket(connectingTo: target)
            #expect(settle(client) == .failed(errno: ECONNREFUSED))
        } catch {
            #expect(error.errno == ECONNREFUSED)
        }
    }
}
