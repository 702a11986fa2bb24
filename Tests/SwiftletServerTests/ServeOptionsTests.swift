import Foundation
import Testing

@testable import SwiftletServer

@Suite struct ServeOptionsTests {
    @Test func devModeHasDefaultsAndDevKeys() throws {
        let o = try ServeOptions.parse(["--dev"])
        #expect(o.udpPort == 10000)
        #expect(o.httpAddress.description == "127.0.0.1:8080")
        #expect(o.workers == 0)
        #expect(o.mediaBind == "127.0.0.1")
        #expect(o.keys == ["devkey": "devsecret"])
    }

    /// Dev mode mints tokens for anyone who asks: only on loopback.
    @Test func devModeRefusesANonLoopbackHTTPAddress() throws {
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev", "--http", "0.0.0.0:8080"]) }
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev", "--http", "[::]:8080"]) }
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev", "--http", "192.168.1.5:8080"]) }
        #expect(try ServeOptions.parse(["--dev", "--http", "127.0.0.2:8080"]).httpAddress.port == 8080)
        #expect(try ServeOptions.parse(["--dev", "--http", "[::1]:8080"]).httpAddress.port == 8080)
    }

    @Test func productionModeRefusesToStartWithoutKeys() {
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse([]) }
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse([], environment: ["SWIFTLET_API_KEY": "k"]) }
        // A short secret is refused.
        #expect(throws: ServeOptions.Invalid.self) {
            try ServeOptions.parse([], environment: ["SWIFTLET_API_KEY": "k", "SWIFTLET_API_SECRET": "short"])
        }
        let o = try? ServeOptions.parse([], environment: ["SWIFTLET_API_KEY": "k", "SWIFTLET_API_SECRET": "0123456789abcdef"])
        #expect(o?.keys == ["k": "0123456789abcdef"])
        #expect(o?.mediaBind == "::")
    }

    @Test func parsesEveryFlag() throws {
        let o = try ServeOptions.parse([
            "--dev", "--http", "[::1]:9000", "--udp-port", "20000", "--workers", "4", "--media-bind", "::1",
            "--announce-ip", "2001:db8::7", "--drain-seconds", "5",
        ])
        #expect(o.httpAddress.description == "[::1]:9000")
        #expect(o.udpPort == 20000)
        #expect(o.workers == 4)
        #expect(o.mediaBind == "::1")
        #expect(o.announcedIP == "2001:db8::7")
        #expect(o.drainSeconds == 5)
    }

    @Test func theConfigFileSetsEverythingAndFlagsWin() throws {
        let file = #"""
            {"http": "0.0.0.0:8443", "udpPort": 30000, "workers": 2, "mediaBind": "0.0.0.0", "announceIP": "203.0.113.7",
             "drainSeconds": 12, "keys": {"prod": "a-long-random-secret-0123456789"}}
            """#
        let o = try ServeOptions.parse(["--config", "swiftlet.json", "--workers", "3"], readFile: { _ in Data(file.utf8) })
        #expect(o.httpAddress.description == "0.0.0.0:8443")
        #expect(o.udpPort == 30000)
        #expect(o.workers == 3)
        #expect(o.announcedIP == "203.0.113.7")
        #expect(o.drainSeconds == 12)
        #expect(o.keys == ["prod": "a-long-random-secret-0123456789"])
    }

    @Test func aBadConfigFileIsAClearError() {
        #expect(throws: ServeOptions.Invalid.self) {
            try ServeOptions.parse(["--config", "x.json"], readFile: { _ in Data("{\"workers\": \"many\"}".utf8) })
        }
        #expect(throws: ServeOptions.Invalid.self) {
            try ServeOptions.parse(["--config", "x.json"], readFile: { _ in throw CocoaError(.fileNoSuchFile) })
        }
        #expect(throws: ServeOptions.Invalid.self) {
            try ServeOptions.parse(["--config", "x.json"], readFile: { _ in Data(#"{"announceIP": "example.com"}"#.utf8) })
        }
    }

    @Test func rejectsBadValuesWithAMessage() {
        for bad in [
            ["--udp-port", "70000"], ["--workers", "0"], ["--http", "localhost"], ["--bogus"], ["--udp-port"],
            ["--udp-port", "65535", "--workers", "2"], ["--media-bind", "eth0"], ["--drain-seconds", "-1"], ["--config"],
        ] {
            #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev"] + bad) }
        }
    }

    @Test func announceLinkLocalComesFromTheFlagOrTheConfigFile() throws {
        #expect(try ServeOptions.parse(["--dev"]).announceLinkLocal == false)
        #expect(try ServeOptions.parse(["--dev", "--announce-link-local"]).announceLinkLocal)
        let o = try ServeOptions.parse(
            ["--dev", "--config", "c.json"], readFile: { _ in Data(#"{"announceLinkLocal": true}"#.utf8) })
        #expect(o.announceLinkLocal)
    }
}
