import Foundation
import Signaling
import Wire

/// `swiftlet token`: prints an access token (docs/TOKENS.md).
enum TokenCommand {
    struct Options: Equatable {
        var room = ""
        var identity = ""
        var grants = AccessTokenGrants()
        var ttlSeconds: Int64 = 3600
        var key = ""
        var secret = ""
    }

    typealias Invalid = UsageError

    /// Parsed, before the checks that need more than one option.
    struct Given {
        var options = Options()
        var dev = false
    }

    static let parser = OptionParser<Given>(command: "swiftlet token", specs: table)

    static let table: [OptionSpec<Given>] = [
        OptionSpec(
            key: "room", flag: "--room", kind: .value(placeholder: "ROOM", json: .string), expects: "a room name",
            defaultText: "required", help: "the room the token admits to", example: "--room demo",
            set: { g, v in
                g.options.room = v
                return !v.isEmpty
            }),
        OptionSpec(
            key: "identity", flag: "--identity", kind: .value(placeholder: "NAME", json: .string),
            expects: "a participant name", defaultText: "required", help: "who the bearer is (the token's sub)",
            example: "--identity alice",
            set: { g, v in
                g.options.identity = v
                return !v.isEmpty
            }),
        grant("publish", \.publish, "may publish tracks"),
        grant("subscribe", \.subscribe, "may receive others' tracks"),
        grant("admin", \.admin, "may administer the room"),
        OptionSpec(
            key: "ttl", flag: "--ttl", kind: .value(placeholder: "DURATION", json: .duration),
            expects: "a duration from 1s (90s, 30m, 1h, 2d; a bare number is seconds)", defaultText: "1h",
            help: "how long the token is valid", example: "--ttl 15m",
            set: { g, v in
                guard let d = Duration(parsing: v), d >= .seconds(1) else { return false }
                g.options.ttlSeconds = Int64(d.inSeconds.rounded(.down))
                return true
            }),
        OptionSpec(
            key: "dev", flag: "--dev", kind: .toggle, expects: "true or false", defaultText: "off",
            help: "sign with the development key of swiftlet serve --dev", example: "--dev",
            set: { g, v in
                g.dev = v == "true"
                return true
            }),
        OptionSpec(
            key: "key", flag: "--key", environment: "SWIFTLET_API_KEY", kind: .value(placeholder: "KEY", json: .string),
            expects: "an API key name", defaultText: "none", help: "the API key (the token's iss)", example: "--key prod",
            set: { g, v in
                g.options.key = v
                return true
            }),
        OptionSpec(
            key: "secret", flag: "--secret", environment: "SWIFTLET_API_SECRET",
            kind: .value(placeholder: "SECRET", json: .string),
            expects: "the API key's secret, \(AccessTokenVerifier.minimumSecretBytes) bytes or more", defaultText: "none",
            help: "the API key's secret (prefer SWIFTLET_API_SECRET: flags show in ps)", secret: true,
            set: { g, v in
                g.options.secret = v
                return true
            }),
    ]

    private static func grant(
        _ name: String, _ path: WritableKeyPath<AccessTokenGrants, Bool> & Sendable, _ help: String
    ) -> OptionSpec<Given> {
        OptionSpec(
            key: name, flag: "--\(name)", kind: .toggle, expects: "true or false", defaultText: "off",
            help: "\(help) (with no grant given: publish and subscribe)",
            set: { g, v in
                g.options.grants[keyPath: path] = v == "true"
                return true
            })
    }

    /// nil when `--help` was asked for.
    static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(Invalid) -> Options? {
        let result = try parser.parse(arguments, environment: environment, defaults: Given(), readFile: { _ in [] })
        if result.helpRequested { return nil }
        var o = result.options.options
        guard !o.room.isEmpty else { throw Invalid("--room ROOM is required; e.g. --room demo") }
        guard !o.identity.isEmpty else { throw Invalid("--identity NAME is required; e.g. --identity alice") }
        if result.options.dev {
            guard result.sources["key"] != .flag, result.sources["secret"] != .flag else {
                throw Invalid("--dev and --key/--secret exclude each other")
            }
            o.key = ServeOptions.devKey
            o.secret = ServeOptions.devSecret
        } else {
            guard !o.key.isEmpty, !o.secret.isEmpty else {
                throw Invalid("give --dev, or --key and --secret (or SWIFTLET_API_KEY and SWIFTLET_API_SECRET)")
            }
            // The server refuses such a key: a token signed with it would
            // never be accepted.
            if let problem = AccessTokenVerifier.secretProblem(o.secret) {
                throw Invalid("the secret \(problem); swiftlet serve refuses it")
            }
        }
        // A token that grants nothing is useless: default to both.
        if !o.grants.publish, !o.grants.subscribe, !o.grants.admin {
            o.grants.publish = true
            o.grants.subscribe = true
        }
        return o
    }

    static func token(for o: Options, nowSeconds: Int64) -> String {
        let claims = AccessTokenClaims(
            issuer: o.key, subject: o.identity, notBefore: nowSeconds, expiresAt: nowSeconds + o.ttlSeconds,
            room: o.room, grants: o.grants)
        return AccessToken.mint(claims: claims, secret: o.secret)
    }

    static func run(_ arguments: [String]) -> Int32 {
        do {
            guard let o = try parse(arguments, environment: ProcessInfo.processInfo.environment) else {
                print(Help.text(for: "token") ?? "")
                return 0
            }
            print(token(for: o, nowSeconds: Int64(Date().timeIntervalSince1970)))
            return 0
        } catch {
            FileHandleStderr.write("swiftlet token: \(error)\n")
            return 64
        }
    }
}
