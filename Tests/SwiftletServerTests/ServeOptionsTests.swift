import Cluster
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

    /// A node's cluster limits (docs/CLUSTER.md): 0 rooms or participants
    /// makes an entry-only node; a room's capacity on a node is at least 1;
    /// nothing above a million, nothing negative or not a number.
    @Test func nodeLimitsAreBoundedAndZeroMakesAnEntryNode() throws {
        let entry = try ServeOptions.parse(["--dev", "--node-max-rooms", "0", "--node-max-participants", "0"])
        #expect(entry.nodeLimits.maxRooms == 0 && entry.nodeLimits.maxParticipants == 0)
        #expect(try ServeOptions.parse(["--dev", "--room-node-capacity", "1"]).nodeLimits.roomNodeCapacity == 1)
        #expect(try ServeOptions.parse(["--dev"]).nodeLimits == NodeLimits())
        for bad in [
            ["--node-max-rooms", "-1"], ["--node-max-rooms", "1000001"], ["--node-max-participants", "x"],
            ["--room-node-capacity", "0"],
        ] {
            #expect(throws: ServeOptions.Invalid.self, "\(bad)") { try ServeOptions.parse(["--dev"] + bad) }
        }
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

    @Test func limitsComeFromANestedObjectTheEnvironmentAndFlags() throws {
        let file = #"{"limits": {"participantsPerRoom": 50, "joinTimeout": "5s", "connectionRate": 3}}"#
        let o = try ServeOptions.parse(
            ["--dev", "--config", "s.json", "--limits-sections-per-offer", "4"],
            environment: ["SWIFTLET_LIMITS_CONNECTIONS_PER_ADDRESS": "7"], readFile: { _ in Data(file.utf8) })
        #expect(o.roomLimits.participantsPerRoom == 50)
        #expect(o.roomLimits.sectionsPerOffer == 4)
        #expect(o.roomLimits.tracksPerParticipant == 8)
        #expect(o.joinTimeout == .seconds(5) && o.signalingTimeouts.join == .seconds(5))
        #expect(o.connectionLimits.ratePerSecond == 3 && o.connectionLimits.perAddress == 7)
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev", "--limits-rooms", "0"]) }
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev", "--limits-join-timeout", "1h"]) }
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
            ["--log-level", "loud"], ["--log-format", "xml"], ["--dev=perhaps"], ["serve"], ["--drain-seconds", "2h"],
        ] {
            #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev"] + bad) }
        }
    }

    private func message(
        _ arguments: [String], environment: [String: String] = [:], file: String? = nil
    ) -> String {
        do {
            _ = try ServeOptions.parse(arguments, environment: environment, readFile: { _ in Data((file ?? "").utf8) })
            return ""
        } catch { return error.description }
    }

    /// `{"udpport": 18000, "workerz": 2}` used to run on defaults.
    @Test func unknownConfigKeysAreErrorsWithASuggestion() {
        let text = message(["--dev", "--config", "s.json"], file: "{\n  \"udpPort\": 18000,\n  \"workerz\": 2\n}")
        #expect(text.contains("s.json:3:3"), "\(text)")
        #expect(text.contains("unknown key 'workerz'; did you mean 'workers'?"), "\(text)")
        #expect(message(["--dev", "--config", "s.json"], file: #"{"udpport": 18000}"#).contains("did you mean 'udpPort'?"))
        // Nothing close: no suggestion, still an error.
        let far = message(["--dev", "--config", "s.json"], file: #"{"zzzzzzzz": 1}"#)
        #expect(far.contains("unknown key 'zzzzzzzz'") && !far.contains("did you mean"))
    }

    @Test func malformedJSONSaysLineAndColumn() {
        let text = message(["--dev", "--config", "s.json"], file: "{\n  \"udpPort\": 18000\n  \"workers\": 2\n}")
        #expect(text.contains("s.json:3:3: expected ',' or '}'"), "\(text)")
        #expect(message(["--dev", "--config", "s.json"], file: "{\"workers\": 2,}").contains("s.json:1:15"))
        #expect(message(["--dev", "--config", "s.json"], file: "[1]").contains("expected a JSON object"))
        #expect(message(["--dev", "--config", "s.json"], file: "{\"workers\": \"many\"}").contains("found a string"))
        #expect(message(["--dev", "--config", "s.json"], file: "").contains("1:1"))
    }

    @Test func flagsBeatTheEnvironmentWhichBeatsTheFile() throws {
        let file = #"{"udpPort": 30000, "workers": 2, "logLevel": "error"}"#
        let env = ["SWIFTLET_UDP_PORT": "31000", "SWIFTLET_WORKERS": "3"]
        let parsed = try ServeOptions.read(
            ["--dev", "--config", "s.json", "--workers=4"], environment: env, readFile: { _ in Data(file.utf8) })
        let o = parsed.options
        #expect(o.udpPort == 31000)
        #expect(o.workers == 4)
        #expect(o.logLevel == .error)
        #expect(o.drainSeconds == 30)
        #expect(parsed.sources["udpPort"] == .environment)
        #expect(parsed.sources["workers"] == .flag)
        #expect(parsed.sources["logLevel"] == .file)
        #expect(parsed.sources["drainSeconds"] == nil)
        // The config file may come from the environment too.
        let fromEnv = try ServeOptions.parse(
            ["--dev"], environment: ["SWIFTLET_CONFIG": "s.json"], readFile: { _ in Data(file.utf8) })
        #expect(fromEnv.workers == 2)
    }

    @Test func everyTableOptionHasAnEnvironmentVariableAndAConfigKey() throws {
        for spec in ServeOptions.table {
            #expect(spec.environment?.hasPrefix("SWIFTLET_") == true, "\(spec.key)")
        }
        let o = try ServeOptions.parse(
            [],
            environment: [
                "SWIFTLET_HTTP": "127.0.0.1:9000", "SWIFTLET_DEV": "1", "SWIFTLET_DRAIN_SECONDS": "1m",
                "SWIFTLET_LOG_FORMAT": "json", "SWIFTLET_MEDIA_BIND": "127.0.0.1", "SWIFTLET_ANNOUNCE_IP": "203.0.113.9",
                "SWIFTLET_LOG_LEVEL": "warning",
            ])
        #expect(o.dev && o.httpAddress.port == 9000 && o.drainSeconds == 60 && o.logFormat == .json)
        #expect(o.announcedIP == "203.0.113.9" && o.logLevel == .warning)
        let keyed = try ServeOptions.parse([], environment: ["SWIFTLET_KEYS": "a:0123456789abcdef,b:fedcba9876543210"])
        #expect(keyed.keys == ["a": "0123456789abcdef", "b": "fedcba9876543210"])
        #expect(message([], environment: ["SWIFTLET_WORKERS": "lots", "SWIFTLET_DEV": "1"]).contains("SWIFTLET_WORKERS wants"))
    }

    @Test func nestedObjectsAndDurationsInTheFile() throws {
        let o = try ServeOptions.parse(
            ["--dev", "--config", "s.json"],
            readFile: { _ in Data(#"{"drainSeconds": "2m", "keys": {"x": "0123456789abcdef"}}"#.utf8) })
        #expect(o.drainSeconds == 120)
        #expect(o.keys["x"] == "0123456789abcdef")
        #expect(message(["--dev", "--config", "s.json"], file: #"{"keys": {"x": 5}}"#).contains("'keys.x' wants a string"))
    }

    @Test func flagEqualsValueAndDurationsWithUnits() throws {
        let o = try ServeOptions.parse(["--dev", "--udp-port=20000", "--drain-seconds=15s", "--http=[::1]:9000"])
        #expect(o.udpPort == 20000 && o.drainSeconds == 15 && o.httpAddress.port == 9000)
        #expect(try ServeOptions.parse(["--dev", "--drain-seconds", "500ms"]).drainSeconds == 1)
        #expect(message(["--dev", "--udp-prot", "1"]).contains("did you mean '--udp-port'?"))
        #expect(message(["--dev", "--workers"]).contains("--workers needs a value: --workers N (a whole number 1...256)"))
        #expect(message(["--dev", "--workers", "0"]).contains("--workers wants a whole number 1...256, got '0'"))
    }

    @Test func helpListsEveryOptionWithDefaultEnvironmentAndExample() throws {
        #expect(try ServeOptions.read(["--help"]).helpRequested)
        #expect(try ServeOptions.read(["--workers", "x", "-h"]).helpRequested)
        let help = try #require(Help.text(for: "serve"))
        for spec in ServeOptions.table {
            if let flag = spec.flag { #expect(help.contains(flag), "\(flag)") }
            #expect(help.contains("(default: \(spec.defaultText))"), "\(spec.key)")
            if let env = spec.environment { #expect(help.contains(env)) }
            #expect(help.contains("config \"\(spec.key)\""))
        }
        #expect(help.contains("--config FILE"))
        #expect(!help.lowercased().contains("not built"))
    }

    /// The start-up print: every value and its source; secrets never.
    @Test func effectiveConfigurationRedactsSecrets() throws {
        let secret = "prod-secret-0123456789"
        let parsed = try ServeOptions.read(
            ["--workers", "2"], environment: ["SWIFTLET_API_KEY": "prod", "SWIFTLET_API_SECRET": secret])
        let text = ServeOptions.parser.effectiveConfiguration(parsed)
        #expect(!text.contains(secret))
        #expect(text.contains("prod=<redacted>"))
        #expect(text.contains("workers") && text.contains("2  (flag)"))
        #expect(text.contains("127.0.0.1:8080  (default)"))
        #expect(text.contains("keys") && text.contains("(environment)"))
    }

    /// Dotted keys are nested objects in the file (the coming `tls`
    /// object, say): found, checked and suggested like top-level ones.
    @Test func dottedKeysAreNestedObjects() throws {
        #expect(try TLSTable.parse(#"{"tls": {"cert": "c.pem", "key": "k.pem"}}"#) == TLSTable(cert: "c.pem", key: "k.pem"))
        #expect(try TLSTable.parse(#"{"tls": {"cert": "c.pem"}}"#, ["--tls-cert=d.pem"]).cert == "d.pem")
        #expect(
            TLSTable.message(#"{"tls": {"crt": "c.pem"}}"#).contains(
                "t.json:1:10: unknown key 'tls.crt'; did you mean 'tls.cert'?"))
        #expect(TLSTable.message(#"{"tls": "c.pem"}"#).contains("'tls' wants an object"))
        #expect(TLSTable.message(#"{"tsl": {}}"#).contains("did you mean 'tls'?"))
    }

    @Test func aMisspeltVariableIsAWarningWithASuggestion() {
        let warnings = ServeOptions.parser.misspeltEnvironment(
            ["SWIFTLET_WORKERZ": "2", "SWIFTLET_ARTIFACTS": "/tmp", "SWIFTLET_WORKERS": "2", "HOME": "/"])
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("SWIFTLET_WORKERZ") == true && warnings.first?.contains("SWIFTLET_WORKERS?") == true)
    }

    @Test func announceLinkLocalComesFromTheFlagOrTheConfigFile() throws {
        #expect(try ServeOptions.parse(["--dev"]).announceLinkLocal == false)
        #expect(try ServeOptions.parse(["--dev", "--announce-link-local"]).announceLinkLocal)
        let o = try ServeOptions.parse(
            ["--dev", "--config", "c.json"], readFile: { _ in Data(#"{"announceLinkLocal": true}"#.utf8) })
        #expect(o.announceLinkLocal)
    }
}

/// `--ice-tcp-port` (RFC 6544): on by default on the UDP port numbers, so
/// `--udp-port 0` (tests) gives free TCP ports too; `off` turns it off.
/// A two-option table with dotted keys, for `dottedKeysAreNestedObjects`.
/// At file scope rather than local to the test: as local functions, the
/// module-emitting pass of the Swift 6.3 compiler warned that their `try`
/// had no throwing call and their `catch` was unreachable, though the
/// parser throws (the test of the messages below passed all along).
private struct TLSTable: Equatable {
    var cert = "", key = ""

    static let parser = OptionParser<TLSTable>(
        command: "test",
        specs: [
            OptionSpec(
                key: "tls.cert", flag: "--tls-cert", environment: "SWIFTLET_TLS_CERT",
                kind: .value(placeholder: "FILE", json: .string), expects: "a file", defaultText: "none", help: "",
                set: { o, v in
                    o.cert = v
                    return true
                }),
            OptionSpec(
                key: "tls.key", flag: "--tls-key", kind: .value(placeholder: "FILE", json: .string), expects: "a file",
                defaultText: "none", help: "",
                set: { o, v in
                    o.key = v
                    return true
                }),
        ], configFlag: "--config")

    /// The options from config file text `file` (as t.json) and `arguments`.
    static func parse(_ file: String, _ arguments: [String] = []) throws(UsageError) -> TLSTable {
        try parser.parse(
            ["--config", "t.json"] + arguments, environment: [:], defaults: TLSTable(), readFile: { _ in Array(file.utf8) }
        ).options
    }

    /// The usage error `file` gets, "" if none.
    static func message(_ file: String) -> String {
        do {
            _ = try parse(file)
            return ""
        } catch { return error.description }
    }
}

@Suite struct ICETCPOptionTests {
    @Test func followsTheUDPPortUnlessGivenAndTurnsOff() throws {
        #expect(try ServeOptions.parse(["--dev"]).iceTCPFirstPort == 10000)
        #expect(try ServeOptions.parse(["--dev", "--udp-port", "0"]).iceTCPFirstPort == 0)
        #expect(try ServeOptions.parse(["--dev", "--udp-port", "20000"]).iceTCPFirstPort == 20000)
        #expect(try ServeOptions.parse(["--dev", "--ice-tcp-port", "443"]).iceTCPFirstPort == 443)
        #expect(try ServeOptions.parse(["--dev", "--ice-tcp-port", "off"]).iceTCPFirstPort == nil)
        #expect(try ServeOptions.parse(["--dev"], environment: ["SWIFTLET_ICE_TCP_PORT": "off"]).iceTCPFirstPort == nil)
        #expect(throws: ServeOptions.Invalid.self) { try ServeOptions.parse(["--dev", "--ice-tcp-port", "tcp"]) }
        #expect(throws: ServeOptions.Invalid.self) {
            try ServeOptions.parse(["--dev", "--ice-tcp-port", "65535", "--workers", "2"])
        }
    }
}
