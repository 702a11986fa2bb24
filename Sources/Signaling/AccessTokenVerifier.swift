import CryptoPrimitives
import FoundationEssentials

/// Why a token was refused, each with the HTTP status to answer: 401 when
/// the token does not prove who the bearer is, 403 when it does but does
/// not allow the request.
package enum AccessTokenError: Error, Equatable, Sendable {
    /// Not three base64url parts of JSON, missing or mistyped claims.
    case malformed(String)
    case tooLarge
    /// Any `alg` but HS256, including "none" (RFC 8725 section 3.1).
    case unsupportedAlgorithm(String)
    /// `iss` names no API key we know.
    case unknownKey
    case badSignature
    case expired
    case notYetValid
    case wrongRoom
    case missingGrant(Grant)

    package var status: Int {
        switch self {
        case .wrongRoom, .missingGrant: return 403
        default: return 401
        }
    }

    package var reason: String {
        switch self {
        case .malformed(let why): return "malformed token: \(why)"
        case .tooLarge: return "token too large"
        case .unsupportedAlgorithm(let alg): return "unsupported token algorithm \"\(alg)\": only HS256"
        case .unknownKey: return "unknown API key"
        case .badSignature: return "bad token signature"
        case .expired: return "token expired"
        case .notYetValid: return "token not valid yet"
        case .wrongRoom: return "token is for another room"
        case .missingGrant(let grant): return "token lacks the \(grant.rawValue) grant"
        }
    }
}

/// Checks access tokens against the API keys the server knows
/// (docs/TOKENS.md). Reads no clock: the caller passes the time.
package struct AccessTokenVerifier: Sendable {
    /// Longer tokens are refused before any decoding.
    package static let maxTokenBytes = 8 * 1024

    /// The shortest API secret the server accepts and `swiftlet token`
    /// signs with. RFC 7518 section 3.2 asks HS256 keys to be at least the
    /// hash's 32 bytes (docs/TOKENS.md recommends that); below 16 bytes a
    /// secret is refused outright. The one copy of the rule.
    package static let minimumSecretBytes = 16

    /// Why `secret` may not sign tokens, or nil when it may.
    package static func secretProblem(_ secret: String) -> String? {
        guard secret.utf8.count < minimumSecretBytes else { return nil }
        return "is \(secret.utf8.count) bytes; HS256 wants a long random secret of \(minimumSecretBytes) bytes or more"
    }

    /// API key (`iss`) to secret.
    package var keys: [String: String]
    /// Seconds of clock skew tolerated on both `nbf` and `exp`.
    package var leewaySeconds: Int64

    package init(keys: [String: String], leewaySeconds: Int64 = 0) {
        self.keys = keys
        self.leewaySeconds = max(0, leewaySeconds)
    }

    private struct Header: Decodable {
        var alg: String
        var crit: [String]?
    }

    private struct Issuer: Decodable {
        var iss: String
    }

    /// The token's claims when it is well formed, signed with HS256 by a
    /// known key, valid at `nowSeconds`, for `room` (when given) and grants
    /// `grant` (when given). Checks run in that order; the claims are only
    /// decoded in full after the signature matched.
    package func verify(
        _ token: String, room: String?, required grant: Grant?, nowSeconds: Int64
    ) throws(AccessTokenError)
        -> AccessTokenClaims
    {
        guard token.utf8.count <= Self.maxTokenBytes else { throw .tooLarge }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("expected three dot-separated parts") }
        guard let headerJSON = Base64.decode(parts[0], .url) else { throw .malformed("header is not base64url") }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(headerJSON)) else {
            throw .malformed("header is not a JSON object with alg")
        }
        guard header.alg == "HS256" else { throw .unsupportedAlgorithm(header.alg) }
        // RFC 7515 section 4.1.11: critical extensions we do not know.
        guard header.crit == nil else { throw .malformed("unsupported crit header") }
        guard let payloadJSON = Base64.decode(parts[1], .url) else { throw .malformed("payload is not base64url") }
        guard let signature = Base64.decode(parts[2], .url) else { throw .malformed("signature is not base64url") }
        guard let issuer = try? JSONDecoder().decode(Issuer.self, from: Data(payloadJSON)) else {
            throw .malformed("payload is not a JSON object with iss")
        }
        guard let secret = keys[issuer.iss] else { throw .unknownKey }
        let signingInput = String(parts[0]) + "." + String(parts[1])
        guard let expected = AccessToken.signature(signingInput, secret: secret),
            Self.constantTimeEqual(expected, signature)
        else { throw .badSignature }

        let claims: AccessTokenClaims
        do {
            claims = try JSONDecoder().decode(AccessTokenClaims.self, from: Data(payloadJSON))
        } catch {
            throw .malformed("claims missing or mistyped")
        }
        let (expiry, o1) = claims.expiresAt.addingReportingOverflow(leewaySeconds)
        guard o1 || nowSeconds < expiry else { throw .expired }
        let (start, o2) = claims.notBefore.subtractingReportingOverflow(leewaySeconds)
        guard o2 || nowSeconds >= start else { throw .notYetValid }
        if let room, claims.room != room { throw .wrongRoom }
        if let grant, !claims.grants.allows(grant) { throw .missingGrant(grant) }
        return claims
    }

    /// Compares in time that depends only on the lengths (public: a MAC is
    /// always 32 bytes), never on where the bytes first differ.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
