import Testing

@testable import DTLS

@Test func generatedCertificateHasValidityAroundIssuanceAndSubject() throws {
    let certificate = try makeCertificate()
    let validity = try #require(certificate.validity)
    #expect(validity.notBefore == issuedAt - 86_400)
    #expect(validity.notAfter == issuedAt + 30 * 86_400)
    #expect(certificate.subject == "/CN=swiftlet")
}

@Test func generatedCertificatesDiffer() throws {
    let a = try makeCertificate(), b = try makeCertificate()
    #expect(a.fingerprint() != b.fingerprint())
}

@Test func fingerprintLengthsFollowAlgorithm() throws {
    let certificate = try makeCertificate()
    for algorithm in CertificateFingerprint.Algorithm.allCases {
        let fingerprint = certificate.fingerprint(algorithm)
        #expect(fingerprint.algorithm == algorithm)
        #expect(fingerprint.digest.count == algorithm.digestLength)
    }
    #expect(certificate.fingerprint() == certificate.fingerprint(.sha256))
}

@Test func pemRoundTripKeepsCertificateAndKey() throws {
    let original = try makeCertificate()
    let certificatePEM = original.certificatePEM
    let keyPEM = original.privateKeyPEM
    #expect(certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
    #expect(certificatePEM.hasSuffix("-----END CERTIFICATE-----\n"))
    #expect(keyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
    let loaded = try DTLSCertificate(certificatePEM: certificatePEM, privateKeyPEM: keyPEM)
    #expect(loaded.fingerprint(.sha256) == original.fingerprint(.sha256))
    #expect(loaded.certificatePEM == certificatePEM)
    #expect(loaded.privateKeyPEM == keyPEM)
}

@Test func loadedCertificateCanHandshake() throws {
    let original = try makeCertificate()
    let loaded = try DTLSCertificate(certificatePEM: original.certificatePEM, privateKeyPEM: original.privateKeyPEM)
    let peer = try makeCertificate()
    var client = try DTLSEndpoint(role: .client, certificate: loaded, expectedPeerFingerprints: [peer.fingerprint()])
    var server = try DTLSEndpoint(role: .server, certificate: peer, expectedPeerFingerprints: [original.fingerprint()])
    client.start(now: .zero)
    for _ in 0..<10 {
        while let d = client.pollTransmit() { server.handle(datagram: d, now: .zero) }
        while let d = server.pollTransmit() { client.handle(datagram: d, now: .zero) }
    }
    let clientEvent = client.pollEvent(), serverEvent = server.pollEvent()
    #expect(clientEvent?.connected != nil)
    #expect(serverEvent?.connected?.peerFingerprint == original.fingerprint())
}

@Test func rejectsBadPEM() throws {
    let good = try makeCertificate()
    let other = try makeCertificate()
    func invalid(_ certificatePEM: String, _ keyPEM: String) -> Bool {
        do {
            _ = try DTLSCertificate(certificatePEM: certificatePEM, privateKeyPEM: keyPEM)
            return false
        } catch {
            if case .invalidPEM = error { return true }
            return false
        }
    }
    #expect(invalid("", good.privateKeyPEM))
    #expect(invalid(good.certificatePEM, ""))
    #expect(invalid("not a pem", good.privateKeyPEM))
    #expect(invalid(String(good.certificatePEM.dropLast(40)), good.privateKeyPEM))  // truncated
    #expect(invalid(good.privateKeyPEM, good.certificatePEM))  // swapped
    #expect(invalid(good.certificatePEM, other.privateKeyPEM))  // key of another cert
}
