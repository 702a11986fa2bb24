import NetIO
import Testing

@testable import SwiftletServer

@Suite struct UDPBufferOptionTests {
    @Test func socketBuffersComeFromTheFlagsOrTheEnvironmentAndAreBounded() throws {
        #expect(try ServeOptions.parse(["--dev"]).socketBuffers == .standard)
        let both = try ServeOptions.parse(["--dev", "--udp-receive-buffer", "8388608", "--udp-send-buffer", "0"])
        #expect(both.socketBuffers == UDPSocketBuffers(receive: 8 << 20, send: 0))
        let environment = try ServeOptions.parse(["--dev"], environment: ["SWIFTLET_UDP_RECEIVE_BUFFER": "0"])
        #expect(environment.socketBuffers.receive == 0)
        #expect(environment.socketBuffers.send == UDPSocketBuffers.standard.send)
        // Under 64 KiB (other than 0, the kernel's default), over 256 MiB,
        // or not a number: refused at start.
        for bad in ["1000", "268435457", "-1", "4M"] {
            #expect(throws: (any Error).self) { try ServeOptions.parse(["--dev", "--udp-receive-buffer", bad]) }
        }
    }
}
