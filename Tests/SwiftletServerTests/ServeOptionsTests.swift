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
        #expect(o?.mediaBind == "0.0.0.0")
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

    @Test func tlsFromTheConfigFileOrFlags() throws {
        let file = #"""
            {"keys": {"prod": "a-long-random-secret-0123456789"}, "tls": {"cert": "/etc/swiftlet/fullchain.pem",
             "key": "/etc/swiftlet/key.pem"}, "https": "0.0.0.0:443"}
            """#
        let o = try ServeOptions.parse(["--config", "s.json"], readFile: { _ in Data(file.utf8) })
        #expect(o.servesTLS && o.tlsCertPath == "/etc/swiftlet/fullchain.pem" && o.tlsKeyPath == "/etc/swiftlet/key.pem")
        #expect(o.httpsAddress.description == "0.0.0.0:443")
        // Defaults: 8443 on all addresses, loopback in dev mode; no TLS unless asked.
        let flags = try ServeOptions.parse(
            ["--tls-cert", "c.pem", "--tls-key", "k.pem"],
            environment: [
                "SWIFTLET_API_KEY": "k", "SWIFTLET_API_SECRET": "0123456789abcdef",
            ])
        #expect(flags.servesTLS && flags.httpsAddress.description == "0.0.0.0:8443")
        let dev = try ServeOptions.parse(["--dev", "--tls"])
        #expect(dev.servesTLS && dev.devTLS && dev.httpsAddress.description == "127.0.0.1:8443")
        #expect(try !ServeOptions.parse(["--dev"]).servesTLS)
    }

    @Test func tlsMisconfigurationsAreRefused() {
        let env = ["SWIFTLET_API_KEY": "k", "SWIFTLET_API_SECRET": "0123456789abcdef"]
        // A certificate without its key, and the reverse.
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--tls-cert", "c.pem"], environment: env) }
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--tls-key", "k.pem"], environment: env) }
        // A generated self-signed certificate is for dev mode only.
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--tls"], environment: env) }
        // Dev mode keeps the TLS listener on loopback too.
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev", "--tls", "--https", "0.0.0.0:8443"]) }
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev", "--https", "localhost:1"]) }
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
}
