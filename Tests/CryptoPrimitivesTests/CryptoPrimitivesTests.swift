import CryptoPrimitives
import Foundation
import Testing

private func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

@Suite struct CryptoPrimitivesTests {
    // RFC 2202 test case 2 (HMAC-SHA1) and RFC 4231 test case 2 (HMAC-SHA256).
    @Test func hmacMatchesRFCVectors() {
        let key = Array("Jefe".utf8), msg = Array("what do ya want for nothing?".utf8)
        #expect(hex(HMAC.authenticationCode(.sha1, key: key, message: msg)!) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(
            hex(HMAC.authenticationCode(.sha256, key: key, message: msg)!)
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func hmacOverPartsEqualsHmacOverWhole() {
        let key = Array("k".utf8), a = Array("hello ".utf8), b = Array("world".utf8)
        let whole = HMAC.authenticationCode(.sha1, key: key, message: a + b)
        let parts: [UInt8]? = key.withUnsafeBytes { k in
            a.withUnsafeBytes { pa in
                b.withUnsafeBytes { pb in
                    HMAC.authenticationCode(.sha1, key: k, parts: [pa, pb])
                }
            }
        }
        #expect(whole == parts)
    }

    /// The stack HMAC-SHA1 (one or two parts) against OpenSSL's EVP_MAC
    /// (three parts take that path) over keys and messages of every length
    /// around SHA-1's 64-byte block, and RFC 2202 test case 6 (a key longer
    /// than the block is hashed first).
    @Test func stackHMACSHA1AgreesWithEVPMAC() {
        func mac(_ key: [UInt8], _ parts: [[UInt8]]) -> [UInt8]? {
            key.withUnsafeBytes { k in
                parts[0].withUnsafeBytes { p0 in
                    parts[1].withUnsafeBytes { p1 in
                        parts.count == 2
                            ? HMAC.authenticationCode(.sha1, key: k, parts: [p0, p1])
                            : parts[2].withUnsafeBytes { p2 in HMAC.authenticationCode(.sha1, key: k, parts: [p0, p1, p2]) }
                    }
                }
            }
        }
        var seed: UInt8 = 7
        func bytes(_ n: Int) -> [UInt8] {
            (0..<n).map { _ in
                seed = seed &* 31 &+ 17
                return seed
            }
        }
        for keyLength in [0, 1, 20, 63, 64, 65, 80, 200] {
            let key = bytes(keyLength)
            for length in [0, 1, 55, 56, 64, 119, 1200] {
                let message = bytes(length)
                let split = length / 3
                let a = Array(message[..<split]), b = Array(message[split..<(2 * split)]), c = Array(message[(2 * split)...])
                let stack = mac(key, [a + b, c])
                #expect(stack != nil)
                #expect(stack == mac(key, [a, b, c]), "key \(keyLength), message \(length)")
            }
        }
        let key = [UInt8](repeating: 0xAA, count: 80)
        let data = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(hex(HMAC.authenticationCode(.sha1, key: key, message: data)!) == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
    }

    @Test func hmacWithEmptyKey() throws {
        // RFC 4231 does not cover it; value from OpenSSL's `openssl dgst -hmac ""`.
        let mac = try #require(HMAC.authenticationCode(.sha256, key: [], message: []))
        #expect(hex(mac) == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func digests() {
        #expect(hex(Digest.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(Digest.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func crc32MatchesCheckValue() {
        // The standard check value of CRC-32/ISO-HDLC over "123456789".
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }

    @Test func randomBytesDiffer() {
        #expect(SecureRandom.bytes(16) != SecureRandom.bytes(16))
        #expect(SecureRandom.bytes(0).isEmpty)
    }
}
