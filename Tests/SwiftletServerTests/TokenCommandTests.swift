import Signaling
import Testing

@testable import SwiftletServer

@Suite struct TokenCommandTests {
    static let secret = "0123456789abcdef-long"

    @Test func devTokensVerifyWithTheDevKeyAndCarryTheGrants() throws {
        let o = try #require(
            try TokenCommand.parse(["--room", "demo", "--identity", "alice", "--publish", "--ttl", "2h", "--dev"]))
        #expect(o.ttlSeconds == 7200)
        let token = TokenCommand.token(for: o, nowSeconds: 1_800_000_000)
        let claims = try AccessTokenVerifier(keys: ["devkey": "devsecret"]).verify(
            token, room: "demo", required: .publish, nowSeconds: 1_800_000_100)
        #expect(claims.subject == "alice")
        #expect(claims.expiresAt == 1_800_007_200)
        #expect(claims.grants == AccessTokenGrants(publish: true))
        #expect(throws: AccessTokenError.self) {
            try AccessTokenVerifier(keys: ["devkey": "devsecret"]).verify(
                token, room: "demo", required: .subscribe, nowSeconds: 1_800_000_100)
        }
    }

    @Test func keysComeFromFlagsOrTheEnvironmentAndFlagsWin() throws {
        let flags = try #require(
            try TokenCommand.parse(["--room", "r", "--identity", "i", "--key", "k", "--secret", Self.secret]))
        #expect(flags.key == "k")
        let env = try #require(
            try TokenCommand.parse(
                ["--room", "r", "--identity", "i"], environment: ["SWIFTLET_API_KEY": "ek", "SWIFTLET_API_SECRET": Self.secret]))
        #expect(env.key == "ek" && env.secret == Self.secret)
        // No grant asked: publish and subscribe.
        #expect(env.grants == AccessTokenGrants(publish: true, subscribe: true))
        let both = try #require(
            try TokenCommand.parse(
                ["--room", "r", "--identity", "i", "--key=fk"],
                environment: ["SWIFTLET_API_KEY": "ek", "SWIFTLET_API_SECRET": Self.secret]))
        #expect(both.key == "fk")
        // --dev with keys in the environment (a server's shell) is fine.
        let dev = try #require(
            try TokenCommand.parse(
                ["--room", "r", "--identity", "i", "--dev"], environment: ["SWIFTLET_API_KEY": "ek"]))
        #expect(dev.key == "devkey")
    }

    /// The server refuses secrets under 16 bytes; so does the token it
    /// would never accept.
    @Test func refusesASecretTheServerWouldRefuse() throws {
        #expect(throws: UsageError.self) {
            try TokenCommand.parse(["--room", "r", "--identity", "i", "--key", "k", "--secret", "fifteen-bytes!!"])
        }
        #expect(try TokenCommand.parse(["--room", "r", "--identity", "i", "--key", "k", "--secret", "sixteen-bytes!!!"]) != nil)
        do {
            _ = try TokenCommand.parse(["--room", "r", "--identity", "i", "--key", "k", "--secret", "short"])
            Issue.record("a 5-byte secret was accepted")
        } catch {
            #expect(error.description.contains("16 bytes"))
            #expect(!error.description.contains("short"))
        }
    }

    @Test func durationsTakeUnits() throws {
        for (text, seconds) in [("90", 90), ("90s", 90), ("15m", 900), ("1h", 3600), ("2d", 172_800), ("1.5m", 90)] {
            let o = try #require(try TokenCommand.parse(["--room", "r", "--identity", "i", "--dev", "--ttl=\(text)"]))
            #expect(o.ttlSeconds == Int64(seconds), "\(text)")
        }
    }

    @Test func helpIsNotAnError() throws {
        #expect(try TokenCommand.parse(["--help"]) == nil)
        #expect(try TokenCommand.parse(["--room", "r", "-h"]) == nil)
        let help = try #require(Help.text(for: "token"))
        for flag in ["--room ROOM", "--identity NAME", "--publish", "--ttl DURATION", "--key KEY", "--secret SECRET"] {
            #expect(help.contains(flag), "\(flag)")
        }
        #expect(help.contains("(default: 1h)"))
        #expect(help.contains("env SWIFTLET_API_SECRET"))
    }

    @Test func rejectsIncompleteOrContradictoryOptions() {
        for bad in [
            ["--identity", "i", "--dev"], ["--room", "r", "--dev"], ["--room", "r", "--identity", "i"],
            ["--room", "r", "--identity", "i", "--dev", "--key", "k"],
            ["--room", "r", "--identity", "i", "--dev", "--ttl", "soon"],
            ["--room", "r", "--identity", "i", "--dev", "--ttl", "0"], ["--room", "r", "--identity", "i", "--dev", "--bogus"],
            ["--room", "r", "--identity", "i", "--dev", "--ttl", "9223372036854775807d"],
            ["--room", "r", "--identity", "i", "--dev", "--publish=maybe"], ["--room"], ["token"],
        ] {
            #expect(throws: TokenCommand.Invalid.self, "\(bad)") { try TokenCommand.parse(bad) }
        }
    }

    @Test func errorsSayWhatWasExpected() {
        func message(_ arguments: [String]) -> String {
            do {
                _ = try TokenCommand.parse(arguments)
                return ""
            } catch { return error.description }
        }
        #expect(message(["--room", "r", "--identity", "i", "--dev", "--ttl", "soon"]).contains("a duration"))
        #expect(message(["--rooom", "r"]).contains("did you mean '--room'?"))
        #expect(message(["--room"]).contains("--room needs a value"))
    }
}
