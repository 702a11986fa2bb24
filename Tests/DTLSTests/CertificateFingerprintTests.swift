import Foundation
import Testing

@testable import DTLS

private let sha256Hex = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"
private let sha256Bytes: [UInt8] = Array(repeating: [0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89], count: 4).flatMap { $0 }

@Test func parsesUppercaseSHA256Fingerprint() throws {
    let fingerprint = try #require(CertificateFingerprint(sdpValue: "sha-256 " + sha256Hex))
    #expect(fingerprint.algorithm == .sha256)
    #expect(fingerprint.digest == sha256Bytes)
}

@Test func parsesLowercaseHexAndUppercaseHashName() throws {
    let fingerprint = try #require(CertificateFingerprint(sdpValue: "SHA-256 " + sha256Hex.lowercased()))
    #expect(fingerprint.algorithm == .sha256)
    #expect(fingerprint.digest == sha256Bytes)
}

@Test func formatsAsUppercaseColonHex() throws {
    let fingerprint = try #require(CertificateFingerprint(algorithm: .sha1, digest: Array(0..<20)))
    #expect(fingerprint.sdpValue == "sha-1 00:01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:10:11:12:13")
}

@Test func roundTripsEveryAlgorithm() throws {
    for algorithm in CertificateFingerprint.Algorithm.allCases {
        let digest = (0..<algorithm.digestLength).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) }
        let fingerprint = try #require(CertificateFingerprint(algorithm: algorithm, digest: digest))
        let parsed = CertificateFingerprint(sdpValue: fingerprint.sdpValue)
        #expect(parsed == fingerprint)
        #expect(fingerprint.sdpValue.utf8.count == algorithm.rawValue.utf8.count + 1 + 3 * algorithm.digestLength - 1)
    }
}

@Test func toleratesExtraBlanksAroundTokens() {
    #expect(CertificateFingerprint(sdpValue: "  sha-256\t " + sha256Hex + " ")?.digest == sha256Bytes)
}

@Test func rejectsMalformedFingerprints() {
    let bad: [String] = [
        "",
        "sha-256",  // no digest
        sha256Hex,  // no hash name
        "md5 " + sha256Hex,  // forbidden hash (RFC 8122 section 5)
        "sha-257 " + sha256Hex,  // unknown hash
        "sha-256 " + sha256Hex + " extra",  // three tokens
        "sha-256 " + sha256Hex.replacingFirst("AB", with: "GZ"),  // not hex
        "sha-256 " + sha256Hex + ":",  // trailing colon
        "sha-256 :" + sha256Hex,  // leading colon
        "sha-256 " + sha256Hex.replacingFirst("AB", with: "A"),  // one digit in a group
        "sha-256 " + sha256Hex.replacingFirst(":", with: "-"),  // wrong separator
        "sha-256 " + sha256Hex.replacingFirst(":", with: ""),  // missing separator
        "sha-1 " + sha256Hex,  // 32 bytes for a 20-byte hash
        "sha-512 " + sha256Hex,  // 32 bytes for a 64-byte hash
        "sha-256 " + String(sha256Hex.dropLast(3)),  // 31 bytes
        "sha-256 AB",  // 1 byte
    ]
    for value in bad {
        #expect(CertificateFingerprint(sdpValue: value) == nil, "accepted \(value)")
    }
}

@Test func rejectsDigestOfWrongLengthForAlgorithm() {
    #expect(CertificateFingerprint(algorithm: .sha256, digest: Array(repeating: 0, count: 20)) == nil)
    #expect(CertificateFingerprint(algorithm: .sha1, digest: Array(repeating: 0, count: 20)) != nil)
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
