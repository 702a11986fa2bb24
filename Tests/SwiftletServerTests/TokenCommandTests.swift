import Signaling
import Testing

@testable import SwiftletServer

@Suite struct TokenCommandTests {
    @Test func devTokensVerifyWithTheDevKeyAndCarryTheGrants() throws {
        let o = try TokenCommand.parse(["--room", "demo", "--identity", "alice", "--publish", "--ttl", "2h", "--dev"])
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

    @Test func keysComeFromFlagsOrTheEnvironment() throws {
        #expect(try TokenCommand.parse(["--room", "r", "--identity", "i", "--key", "k", "--secret", "s"]).key == "k")
        let env = try TokenCommand.parse(
            ["--room", "r", "--identity", "i"], environment: ["SWIFTLET_API_KEY": "ek", "SWIFTLET_API_SECRET": "es"])
        #expect(env.key == "ek" && env.secret == "es")
        // No grant asked: publish and subscribe.
        #expect(env.grants == AccessTokenGrants(publish: true, subscribe: true))
    }

    @Test func rejectsIncompleteOrContradictoryOptions() {
        for bad in [
            ["--identity", "i", "--dev"], ["--room", "r", "--dev"], ["--room", "r", "--identity", "i"],
            ["--room", "r", "--identity", "i", "--dev", "--key", "k"],
            ["--room", "r", "--identity", "i", "--dev", "--ttl", "soon"],
            ["--room", "r", "--identity", "i", "--dev", "--ttl", "0"], ["--room", "r", "--identity", "i", "--dev", "--bogus"],
        ] {
            #expect(throws: TokenCommand.Invalid.self) { try TokenCommand.parse(bad) }
        }
        #expect(TokenCommand.parseDuration("9223372036854775807d") == nil)
        #expect(TokenCommand.parseDuration("45") == 45)
    }
}
