import Testing

@testable import SwiftletServer

@Suite struct ServeOptionsTests {
    @Test func devModeHasDefaultsAndDevKeys() throws {
        let o = try ServeOptions.parse(["--dev"])
        #expect(o.udpPort == 10000)
        #expect(o.httpAddress.description == "127.0.0.1:8080")
        #expect(o.workers == 0)
        #expect(o.mediaBindIP == "127.0.0.1")
        #expect(o.apiKey == "devkey" && o.apiSecret == "devsecret")
    }

    @Test func productionModeRefusesToStartWithoutKeys() {
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse([]) }
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse([], environment: ["SWIFTLET_API_KEY": "k"]) }
        let o = try? ServeOptions.parse([], environment: ["SWIFTLET_API_KEY": "k", "SWIFTLET_API_SECRET": "s"])
        #expect(o?.apiKey == "k")
        #expect(o?.mediaBindIP == "0.0.0.0")
    }

    @Test func parsesEveryFlag() throws {
        let o = try ServeOptions.parse(["--dev", "--http", "[::1]:9000", "--udp-port", "20000", "--workers", "4"])
        #expect(o.httpAddress.description == "[::1]:9000")
        #expect(o.udpPort == 20000)
        #expect(o.workers == 4)
    }

    @Test func rejectsBadValuesWithAMessage() {
        for bad in [
            ["--udp-port", "70000"], ["--workers", "0"], ["--http", "localhost"],
            ["--bogus"], ["--udp-port"], ["--udp-port", "65535", "--workers", "2"],
        ] {
            #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev"] + bad) }
        }
    }
}
