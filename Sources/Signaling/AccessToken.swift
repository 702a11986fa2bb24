import CryptoPrimitives
import FoundationEssentials

/// A permission an access token may carry.
package enum Grant: String, Equatable, Sendable, CaseIterable {
    case publish, subscribe, admin
}

/// The `grants` claim: what the participant may do in the room. A flag
/// missing from the JSON is false.
package struct AccessTokenGrants: Codable, Equatable, Sendable {
    package var publish: Bool
    package var subscribe: Bool
    package var admin: Bool
    /// `publishData`: data channel messages relayed to the room; absent
    /// (nil) means the same as `publish` (docs/TOKENS.md).
    package var publishData: Bool?

    package init(publish: Bool = false, subscribe: Bool = false, admin: Bool = false, publishData: Bool? = nil) {
        self.publish = publish
        self.subscribe = subscribe
        self.admin = admin
        self.publishData = publishData
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        publish = try c.decodeIfPresent(Bool.self, forKey: .publish) ?? false
        subscribe = try c.decodeIfPresent(Bool.self, forKey: .subscribe) ?? false
        admin = try c.decodeIfPresent(Bool.self, forKey: .admin) ?? false
        publishData = try c.decodeIfPresent(Bool.self, forKey: .publishData)
    }

    package func allows(_ grant: Grant) -> Bool {
        switch grant {
        case .publish: return publish
        case .subscribe: return subscribe
        case .admin: return admin
        }
    }
}

/// The claims of a Swiftlet access token (docs/TOKENS.md). Every claim is
/// required except the flags inside `grants`.
package struct AccessTokenClaims: Codable, Equatable, Sendable {
    /// `iss`: the API key whose secret signed the token.
    package var issuer: String
    /// `sub`: the participant's identity in the room.
    package var subject: String
    /// `nbf`: seconds since the Unix epoch before which the token is refused.
    package var notBefore: Int64
    /// `exp`: seconds since the Unix epoch from which the token is refused.
    package var expiresAt: Int64
    package var room: String
    package var grants: AccessTokenGrants

    package init(
        issuer: String, subject: String, notBefore: Int64, expiresAt: Int64, room: String, grants: AccessTokenGrants
    ) {
        self.issuer = issuer
        self.subject = subject
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.room = room
        self.grants = grants
    }

    enum CodingKeys: String, CodingKey {
        case issuer = "iss"
        case subject = "sub"
        case notBefore = "nbf"
        case expiresAt = "exp"
        case room, grants
    }
}

/// Minting of access tokens: JWTs (RFC 7519) in the JWS compact
/// serialization (RFC 7515 section 7.1) signed with HMAC-SHA256 (RFC 7518
/// section 3.2).
package enum AccessToken {
    /// The protected header of every token we mint, byte for byte.
    package static let header = #"{"alg":"HS256","typ":"JWT"}"#

    /// `base64url(header) "." base64url(claims JSON) "." base64url(HMAC)`,
    /// without padding. The claims JSON has sorted keys and no whitespace;
    /// the HMAC key is the UTF-8 bytes of `secret`.
    package static func mint(claims: AccessTokenClaims, secret: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload: [UInt8]
        do {
            payload = Array(try encoder.encode(claims))
        } catch {
            // Strings, integers and booleans always encode.
            preconditionFailure("access token claims failed to encode: \(error)")
        }
        return sign(payload: payload, secret: secret)
    }

    /// Any JSON `payload` as an HS256 JWS with our header (webhook
    /// signatures carry other claims than access tokens).
    package static func sign(payload: [UInt8], secret: String) -> String {
        let signingInput =
            Base64.encode(Array(header.utf8), .url) + "." + Base64.encode(payload, .url)
        guard let mac = signature(signingInput, secret: secret) else {
            // As SecureRandom does: without working OpenSSL the server
            // cannot run at all.
            preconditionFailure("OpenSSL HMAC-SHA256 failed")
        }
        return signingInput + "." + Base64.encode(mac, .url)
    }

    static func signature(_ signingInput: String, secret: String) -> [UInt8]? {
        HMAC.authenticationCode(.sha256, key: Array(secret.utf8), message: Array(signingInput.utf8))
    }
}

extension AccessToken {
    /// The payload of an HS256 JWS signed with `secret`, or nil when it is
    /// not one (the signature compared in constant time). For receivers of
    /// our webhooks and their tests; access tokens go through
    /// `AccessTokenVerifier`, which also checks the claims.
    package static func verifiedPayload(_ token: String, secret: String) -> [UInt8]? {
        guard token.utf8.count <= AccessTokenVerifier.maxTokenBytes else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerJSON = Base64.decode(parts[0], .url),
            String(decoding: headerJSON, as: UTF8.self).contains("\"HS256\""),
            let payload = Base64.decode(parts[1], .url), let mac = Base64.decode(parts[2], .url),
            let expected = signature(String(parts[0]) + "." + String(parts[1]), secret: secret),
            AccessTokenVerifier.constantTimeEqual(expected, mac)
        else { return nil }
        return payload
    }
}
