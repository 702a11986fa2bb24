import Testing

@testable import Signaling

/// Known answer, computed independently with Python 3's standard library:
///
///     header = b'{"alg":"HS256","typ":"JWT"}'
///     payload = json.dumps(claims, separators=(",", ":"), sort_keys=True).encode()
///     signing_input = b64url(header) + "." + b64url(payload)   # padding stripped
///     sig = hmac.new(b"demo-secret-do-not-use", signing_input.encode(), hashlib.sha256).digest()
///
/// with claims = {"iss": "APIdemo", "sub": "alice", "nbf": 1700000000,
/// "exp": 1700003600, "room": "lobby", "grants": {"publish": True,
/// "subscribe": True, "admin": False}}.
private enum KnownAnswer {
    static let secret = "demo-secret-do-not-use"
    static let payloadJSON =
        #"{"exp":1700003600,"grants":{"admin":false,"publish":true,"subscribe":true},"iss":"APIdemo","nbf":1700000000,"room":"lobby","sub":"alice"}"#
    static let token =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        + ".eyJleHAiOjE3MDAwMDM2MDAsImdyYW50cyI6eyJhZG1pbiI6ZmFsc2UsInB1Ymxpc2giOnRydWUsInN1YnNjcmliZSI6dHJ1ZX0sImlzcyI6IkFQSWRlbW8iLCJuYmYiOjE3MDAwMDAwMDAsInJvb20iOiJsb2JieSIsInN1YiI6ImFsaWNlIn0"
        + ".wDILUTYC3fMJmXrmQEM3f7qp07aFXmPfn-uHsUMmqDI"
    static let signatureHex = "c0320b513602ddf309997ae64043377fbaa9d3b6855e63df9feb87b14326a832"
    static let claims = AccessTokenClaims(
        issuer: "APIdemo", subject: "alice", notBefore: 1_700_000_000, expiresAt: 1_700_003_600, room: "lobby",
        grants: AccessTokenGrants(publish: true, subscribe: true, admin: false))
}

private let verifier = AccessTokenVerifier(keys: ["APIdemo": KnownAnswer.secret, "APIother": "other-secret"])
private let now: Int64 = 1_700_001_000

private func rejection(
    _ token: String, room: String? = "lobby", grant: Grant? = .publish, at time: Int64 = now,
    verifier v: AccessTokenVerifier = verifier
) -> AccessTokenError? {
    do {
        _ = try v.verify(token, room: room, required: grant, nowSeconds: time)
        return nil
    } catch {
        return error
    }
}

/// A token with an arbitrary header and payload, signed HS256 with `secret`.
private func forge(header: String, payload: String, secret: String = KnownAnswer.secret) -> String {
    let input = Base64.encode(Array(header.utf8), .url) + "." + Base64.encode(Array(payload.utf8), .url)
    let mac = AccessToken.signature(input, secret: secret) ?? []
    return input + "." + Base64.encode(mac, .url)
}

@Suite struct AccessTokenTests {
    @Test func mintingMatchesTheIndependentlyComputedToken() {
        #expect(AccessToken.mint(claims: KnownAnswer.claims, secret: KnownAnswer.secret) == KnownAnswer.token)
    }

    @Test func knownAnswerPartsDecodeAsDocumented() throws {
        let parts = KnownAnswer.token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        #expect(Base64.decode(parts[0], .url) == Array(AccessToken.header.utf8))
        #expect(Base64.decode(parts[1], .url) == Array(KnownAnswer.payloadJSON.utf8))
        let hex = (Base64.decode(parts[2], .url) ?? []).map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }
        #expect(hex.joined() == KnownAnswer.signatureHex)
    }

    @Test func verifiesTheKnownToken() throws {
        let claims = try verifier.verify(KnownAnswer.token, room: "lobby", required: .subscribe, nowSeconds: now)
        #expect(claims == KnownAnswer.claims)
        #expect(try verifier.verify(KnownAnswer.token, room: nil, required: nil, nowSeconds: now) == KnownAnswer.claims)
    }

    @Test func mintedTokensRoundTrip() throws {
        let claims = AccessTokenClaims(
            issuer: "APIother", subject: "bob/€", notBefore: 10, expiresAt: 20, room: "a/b \"q\"",
            grants: AccessTokenGrants(admin: true))
        let token = AccessToken.mint(claims: claims, secret: "other-secret")
        #expect(try verifier.verify(token, room: "a/b \"q\"", required: .admin, nowSeconds: 15) == claims)
    }

    @Test func validityWindowIsNbfInclusiveExpExclusive() {
        let t = KnownAnswer.token
        #expect(rejection(t, at: 1_700_000_000) == nil)
        #expect(rejection(t, at: 1_699_999_999) == .notYetValid)
        #expect(rejection(t, at: 1_700_003_599) == nil)
        #expect(rejection(t, at: 1_700_003_600) == .expired)
        #expect(AccessTokenError.expired.status == 401)
        #expect(AccessTokenError.notYetValid.status == 401)
    }

    @Test func leewayWidensBothEnds() {
        let lenient = AccessTokenVerifier(keys: ["APIdemo": KnownAnswer.secret], leewaySeconds: 30)
        #expect(rejection(KnownAnswer.token, at: 1_700_003_629, verifier: lenient) == nil)
        #expect(rejection(KnownAnswer.token, at: 1_700_003_630, verifier: lenient) == .expired)
        #expect(rejection(KnownAnswer.token, at: 1_699_999_970, verifier: lenient) == nil)
        #expect(rejection(KnownAnswer.token, at: 1_699_999_969, verifier: lenient) == .notYetValid)
    }

    @Test func extremeTimesDoNotOverflow() {
        let lenient = AccessTokenVerifier(keys: ["APIdemo": KnownAnswer.secret], leewaySeconds: 60)
        let claims = AccessTokenClaims(
            issuer: "APIdemo", subject: "s", notBefore: .min, expiresAt: .max, room: "lobby",
            grants: AccessTokenGrants(publish: true))
        let token = AccessToken.mint(claims: claims, secret: KnownAnswer.secret)
        #expect(rejection(token, at: .max - 1, verifier: lenient) == nil)
        #expect(rejection(token, at: .min, verifier: lenient) == nil)
    }

    @Test func wrongRoomAndMissingGrantAre403() {
        #expect(rejection(KnownAnswer.token, room: "kitchen") == .wrongRoom)
        #expect(rejection(KnownAnswer.token, grant: .admin) == .missingGrant(.admin))
        #expect(AccessTokenError.wrongRoom.status == 403)
        #expect(AccessTokenError.missingGrant(.admin).status == 403)
        #expect(AccessTokenError.missingGrant(.admin).reason == "token lacks the admin grant")
    }

    @Test func tamperedPayloadHasABadSignature() {
        // Same signature, payload re-encoded with admin: true.
        let parts = KnownAnswer.token.split(separator: ".").map(String.init)
        let evil = KnownAnswer.payloadJSON.replacing(#""admin":false"#, with: #""admin":true "#)
        let tampered = parts[0] + "." + Base64.encode(Array(evil.utf8), .url) + "." + parts[2]
        #expect(rejection(tampered, grant: .admin) == .badSignature)
        #expect(AccessTokenError.badSignature.status == 401)
    }

    @Test func everySignatureBitFlipIsRejected() throws {
        let parts = KnownAnswer.token.split(separator: ".").map(String.init)
        let mac = try #require(Base64.decode(parts[2], .url))
        for i in 0..<(mac.count * 8) {
            var flipped = mac
            flipped[i / 8] ^= 1 << UInt8(i % 8)
            let token = parts[0] + "." + parts[1] + "." + Base64.encode(flipped, .url)
            #expect(rejection(token) == .badSignature)
        }
        #expect(rejection(parts[0] + "." + parts[1] + ".") == .badSignature)
    }

    @Test func wrongSecretIsABadSignature() {
        let token = forge(header: AccessToken.header, payload: KnownAnswer.payloadJSON, secret: "guess")
        #expect(rejection(token) == .badSignature)
    }

    @Test func unknownIssuerIs401() {
        let payload = KnownAnswer.payloadJSON.replacing("APIdemo", with: "APInobody")
        let e = rejection(forge(header: AccessToken.header, payload: payload))
        #expect(e == .unknownKey)
        #expect(e?.status == 401)
    }

    @Test(arguments: ["none", "HS512", "RS256", "hs256", "HS384", "ES256", ""])
    func onlyHS256IsAccepted(alg: String) {
        let header = #"{"alg":"\#(alg)","typ":"JWT"}"#
        #expect(rejection(forge(header: header, payload: KnownAnswer.payloadJSON)) == .unsupportedAlgorithm(alg))
        // "none" with an empty signature, as alg-none attacks send it.
        let unsigned =
            Base64.encode(Array(header.utf8), .url) + "." + Base64.encode(Array(KnownAnswer.payloadJSON.utf8), .url) + "."
        #expect(rejection(unsigned) == .unsupportedAlgorithm(alg))
        #expect(AccessTokenError.unsupportedAlgorithm(alg).status == 401)
    }

    @Test func headerWithoutAlgOrWithCritIsMalformed() {
        #expect(isMalformed(rejection(forge(header: #"{"typ":"JWT"}"#, payload: KnownAnswer.payloadJSON))))
        #expect(isMalformed(rejection(forge(header: #"{"alg":"HS256","crit":["x"]}"#, payload: KnownAnswer.payloadJSON))))
        // A header without typ is fine.
        #expect(rejection(forge(header: #"{"alg":"HS256"}"#, payload: KnownAnswer.payloadJSON)) == nil)
    }

    @Test(arguments: [
        "", "abc", "a.b", "a.b.c.d", "!!!.e30.sig", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9=.e30.e30",
        "bm90IGpzb24.e30.e30", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.bm90IGpzb24.e30",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.e30", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.***",
    ])
    func malformedTokensAre401(token: String) {
        let e = rejection(token)
        #expect(isMalformed(e), "\(String(describing: e))")
        #expect(e?.status == 401)
    }

    @Test func signedButIncompleteClaimsAreMalformed() {
        // Signed by a known key, but without exp.
        let payload = #"{"iss":"APIdemo","sub":"alice","nbf":1,"room":"lobby","grants":{}}"#
        #expect(isMalformed(rejection(forge(header: AccessToken.header, payload: payload))))
        let stringExp = #"{"iss":"APIdemo","sub":"a","nbf":1,"exp":"2000000000","room":"lobby","grants":{}}"#
        #expect(isMalformed(rejection(forge(header: AccessToken.header, payload: stringExp))))
    }

    @Test func missingGrantFlagsAreFalse() throws {
        let payload = #"{"iss":"APIdemo","sub":"a","nbf":1,"exp":2000000000,"room":"lobby","grants":{"subscribe":true}}"#
        let claims = try verifier.verify(
            forge(header: AccessToken.header, payload: payload), room: "lobby", required: .subscribe, nowSeconds: now)
        #expect(claims.grants == AccessTokenGrants(publish: false, subscribe: true, admin: false))
        #expect(rejection(forge(header: AccessToken.header, payload: payload), grant: .publish) == .missingGrant(.publish))
    }

    @Test func oversizedTokenIsRefusedBeforeDecoding() {
        let big = String(repeating: "a", count: AccessTokenVerifier.maxTokenBytes + 1)
        #expect(rejection(big) == .tooLarge)
        #expect(AccessTokenError.tooLarge.status == 401)
    }

    private func isMalformed(_ e: AccessTokenError?) -> Bool {
        if case .malformed = e { return true }
        return false
    }
}
