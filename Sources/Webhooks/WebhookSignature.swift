import CryptoPrimitives
import FoundationEssentials
import Signaling

/// How a webhook request proves it comes from this server (docs/API.md,
/// "Verifying a webhook"), as LiveKit does it: the `Authorization` header
/// is an HS256 JWT signed with an API key's secret, `iss` that key, whose
/// `sha256` claim is the base64 (standard alphabet, padded) SHA-256 of
/// the exact body bytes. A receiver checks the signature with the secret
/// it shares with us, then hashes the body and compares.
package enum WebhookSignature {
    struct Claims: Codable, Equatable {
        var iss: String
        var nbf: Int64
        var exp: Int64
        var sha256: String
    }

    /// How long a signature is valid: long enough for a retried delivery
    /// of the same bytes (each attempt is signed afresh anyway).
    package static let validSeconds: Int64 = 300

    /// The `Authorization` header value for `body` sent at `nowSeconds`.
    package static func authorization(body: [UInt8], key: String, secret: String, nowSeconds: Int64) -> String {
        let claims = Claims(
            iss: key, nbf: nowSeconds, exp: nowSeconds + validSeconds, sha256: Base64.encode(Digest.sha256(body), .standard))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload = (try? Array(encoder.encode(claims))) ?? []
        return AccessToken.sign(payload: payload, secret: secret)
    }

    /// Why `authorization` does not sign `body` for `key`/`secret` at
    /// `nowSeconds`, or nil when it does: what a receiver checks.
    package static func problem(
        authorization: String, body: [UInt8], key: String, secret: String, nowSeconds: Int64
    ) -> String? {
        let token = authorization.hasPrefix("Bearer ") ? String(authorization.dropFirst(7)) : authorization
        guard let payload = AccessToken.verifiedPayload(token, secret: secret) else { return "bad signature" }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(payload)) else { return "bad claims" }
        guard claims.iss == key else { return "signed by key '\(claims.iss)'" }
        guard claims.nbf <= nowSeconds, nowSeconds < claims.exp else { return "expired or not valid yet" }
        guard claims.sha256 == Base64.encode(Digest.sha256(body), .standard) else { return "body hash differs" }
        return nil
    }
}
