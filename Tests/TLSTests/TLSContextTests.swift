import CryptoPrimitives
import DTLS
import Foundation
import TLS
import Testing

@Suite struct TLSContextTests {
    @Test func keyOfAnotherCertificateIsRefusedWithAClearReason() throws {
        let other = try DTLSCertificate.generate(issuedAt: 1_780_000_000)
        #expect(throws: TLSError.invalidCredentials(reason: "the private key does not belong to the certificate")) {
            _ = try TLSContext.server(
                certificateChainPEM: TLSFixture.certificate.certificatePEM, privateKeyPEM: other.privateKeyPEM)
        }
    }

    @Test func missingCertificateOrKeyIsRefused() throws {
        #expect(throws: TLSError.invalidCredentials(reason: "no certificate in the certificate PEM")) {
            _ = try TLSContext.server(certificateChainPEM: "not a pem", privateKeyPEM: TLSFixture.certificate.privateKeyPEM)
        }
        #expect {
            _ = try TLSContext.server(certificateChainPEM: TLSFixture.certificate.certificatePEM, privateKeyPEM: "")
        } throws: { error in
            if case .invalidCredentials = error as? TLSError { return true }
            return false
        }
    }

    @Test func anEncryptedKeyIsRefusedInsteadOfPromptingForAPassword() throws {
        // The openssl command encrypts our key (PKCS#8 with AES-256).
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["pkey", "-aes256", "-passout", "pass:secret"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(TLSFixture.certificate.privateKeyPEM.utf8))
        try input.fileHandleForWriting.close()
        let encrypted = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(encrypted.contains("BEGIN ENCRYPTED PRIVATE KEY"))
        #expect {
            _ = try TLSContext.server(certificateChainPEM: TLSFixture.certificate.certificatePEM, privateKeyPEM: encrypted)
        } throws: { error in
            guard case .invalidCredentials(let reason) = error as? TLSError else { return false }
            return reason.hasPrefix("the private key is encrypted")
        }
    }

    @Test func chainPEMMayCarryIntermediatesAfterTheLeaf() throws {
        let intermediate = try DTLSCertificate.generate(issuedAt: 1_780_000_000)
        let context = try TLSContext.server(
            certificateChainPEM: TLSFixture.certificate.certificatePEM + intermediate.certificatePEM,
            privateKeyPEM: TLSFixture.certificate.privateKeyPEM)
        #expect(context.leafSubject == "/CN=swiftlet")
    }

    @Test func spkiHashIsSHA256OfTheSubjectPublicKeyInfo() throws {
        let context = try TLSFixture.serverContext()
        // A P-256 SubjectPublicKeyInfo is 91 bytes of DER: SEQUENCE (0x30
        // 0x59), the algorithm id-ecPublicKey with prime256v1, the point.
        let prefix: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
        let der = context.leafCertificateDER
        let at = try #require((0...(der.count - 91)).first { Array(der[$0..<$0 + prefix.count]) == prefix })
        #expect(context.leafSPKISHA256 == Digest.sha256(Array(der[at..<at + 91])))
    }
}
