import CryptoPrimitives
import Signaling

/// Short-lived TURN credentials in the TURN REST API convention
/// (draft-uberti-behave-turn-rest-00 section 2.2), which browsers' and
/// coturn's users know: the username is `<expiry>:<identity>` with the
/// expiry in Unix seconds, the password base64(HMAC-SHA1(secret,
/// username)). The server keeps no table of users: it recomputes the
/// password from the username, and refuses a username whose expiry has
/// passed. The signalling server issues them to a client that presented a
/// valid access token (join response, WHIP/WHEP `Link` headers).
package struct TURNCredentials: Sendable {
    /// The longest username issued or accepted. RFC 8489 section 14.3
    /// bounds USERNAME at 509 bytes (before OpaqueString processing).
    package static let maxUsernameLength = 509
    private let secret: [UInt8]

    package init(secret: [UInt8]) { self.secret = secret }

    /// The secret for `tokenSecret` (the first API key's secret): an HMAC
    /// with a label, so the TURN secret is never the token-signing secret
    /// itself and one cannot be used in the place of the other.
    package static func derived(fromTokenSecret tokenSecret: String) -> TURNCredentials {
        let key = HMAC.authenticationCode(.sha256, key: Array(tokenSecret.utf8), message: Array("swiftlet turn rest".utf8))
        return TURNCredentials(secret: key ?? Array(tokenSecret.utf8))
    }

    package struct Issued: Equatable, Sendable {
        package var username: String
        package var password: String
        /// Unix seconds.
        package var expiry: Int64
    }

    /// Credentials for `identity` valid until `nowSeconds + lifetimeSeconds`;
    /// nil when the username would be too long.
    package func issue(identity: String, nowSeconds: Int64, lifetimeSeconds: Int64) -> Issued? {
        let expiry = nowSeconds + lifetimeSeconds
        let username = "\(expiry):\(identity)"
        guard username.utf8.count <= Self.maxUsernameLength, let password = password(for: username) else { return nil }
        return Issued(username: username, password: password, expiry: expiry)
    }

    /// The password of `username`, whatever its expiry.
    package func password(for username: String) -> String? {
        guard let mac = HMAC.authenticationCode(.sha1, key: secret, message: Array(username.utf8)) else { return nil }
        return Base64.encode(mac, .standard)
    }

    package enum Refusal: Error, Equatable, Sendable {
        /// Not `<digits>:<something>`.
        case malformed
        /// Its expiry is at or before now.
        case expired
    }

    /// The password of `username` if it is well formed and unexpired.
    package func check(username: String, nowSeconds: Int64) -> Result<String, Refusal> {
        guard username.utf8.count <= Self.maxUsernameLength, let colon = username.firstIndex(of: ":"),
            let expiry = Int64(username[..<colon]), username.index(after: colon) < username.endIndex,
            let password = password(for: username)
        else { return .failure(.malformed) }
        guard expiry > nowSeconds else { return .failure(.expired) }
        return .success(password)
    }
}
