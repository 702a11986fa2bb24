import Foundation
import Signaling

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

    struct Invalid: Error, CustomStringConvertible { let description: String }

    static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(Invalid) -> Options {
        var o = Options()
        var dev = false
        var i = 0
        func value(_ name: String) throws(Invalid) -> String {
            i += 1
            guard i < arguments.count else { throw Invalid(description: "\(name) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            let a = arguments[i]
            switch a {
            case "--room": o.room = try value(a)
            case "--identity": o.identity = try value(a)
            case "--publish": o.grants.publish = true
            case "--subscribe": o.grants.subscribe = true
            case "--admin": o.grants.admin = true
            case "--ttl":
                let v = try value(a)
                guard let seconds = parseDuration(v), seconds > 0 else {
                    throw Invalid(description: "--ttl wants a duration like 90s, 30m, 1h or 2d, got '\(v)'")
                }
                o.ttlSeconds = seconds
            case "--dev": dev = true
            case "--key": o.key = try value(a)
            case "--secret": o.secret = try value(a)
            default: throw Invalid(description: "unknown option '\(a)'; see swiftlet --help")
            }
            i += 1
        }
        guard !o.room.isEmpty else { throw Invalid(description: "--room is required") }
        guard !o.identity.isEmpty else { throw Invalid(description: "--identity is required") }
        if dev {
            guard o.key.isEmpty, o.secret.isEmpty else {
                throw Invalid(description: "--dev and --key/--secret exclude each other")
            }
            o.key = ServeOptions.devKey
            o.secret = ServeOptions.devSecret
        } else {
            if o.key.isEmpty { o.key = environment["SWIFTLET_API_KEY"] ?? "" }
            if o.secret.isEmpty { o.secret = environment["SWIFTLET_API_SECRET"] ?? "" }
            guard !o.key.isEmpty, !o.secret.isEmpty else {
                throw Invalid(description: "give --dev, or --key and --secret (or SWIFTLET_API_KEY and SWIFTLET_API_SECRET)")
            }
        }
        // A token that grants nothing is useless: default to both.
        if !o.grants.publish, !o.grants.subscribe, !o.grants.admin {
            o.grants.publish = true
            o.grants.subscribe = true
        }
        return o
    }

    /// "90", "90s", "30m", "1h", "2d" in seconds.
    static func parseDuration(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let last = text.last, let unit = units[last] {
            return Int64(text.dropLast()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit }
        }
        return Int64(text)
    }

    static func token(for o: Options, nowSeconds: Int64) -> String {
        let claims = AccessTokenClaims(
            issuer: o.key, subject: o.identity, notBefore: nowSeconds, expiresAt: nowSeconds + o.ttlSeconds,
            room: o.room, grants: o.grants)
        return AccessToken.mint(claims: claims, secret: o.secret)
    }

    static func run(_ arguments: [String]) -> Int32 {
        do {
            let o = try parse(arguments, environment: ProcessInfo.processInfo.environment)
            print(token(for: o, nowSeconds: Int64(Date().timeIntervalSince1970)))
            return 0
        } catch {
            FileHandleStderr.write("swiftlet token: \(error)\n")
            return 64
        }
    }
}
