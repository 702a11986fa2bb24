import COpenSSL
import CShim

/// Keyed hashes over OpenSSL, for STUN MESSAGE-INTEGRITY (RFC 8489 section
/// 14.5 and 14.6) and JWT HS256 (RFC 7518 section 3.2).
package enum HMAC {
    package enum Algorithm: Sendable {
        case sha1, sha256
        package var digestLength: Int { self == .sha1 ? 20 : 32 }
        var digestName: String { self == .sha1 ? "SHA1" : "SHA256" }
    }

    /// OpenSSL's HMAC implementation, fetched once: `EVP_MAC_fetch` walks the
    /// provider tables and is far slower than the MAC of a STUN message.
    private static let implementation = MACImplementation()

    /// The MAC of the concatenation of `parts` under `key`. Taking parts lets
    /// STUN authenticate a header with a patched length followed by the
    /// original body without building a contiguous copy.
    ///
    /// Returns nil when OpenSSL fails (no HMAC provider, out of memory):
    /// callers must treat that as "cannot authenticate", never as a zero MAC
    /// that an attacker could match.
    package static func authenticationCode(
        _ algorithm: Algorithm, key: UnsafeRawBufferPointer, parts: [UnsafeRawBufferPointer]
    ) -> [UInt8]? {
        if algorithm == .sha1, parts.count <= 2 {
            var out = [UInt8](repeating: 0, count: Algorithm.sha1.digestLength)
            let first = parts.first ?? UnsafeRawBufferPointer(start: nil, count: 0)
            let second = parts.count == 2 ? parts[1] : UnsafeRawBufferPointer(start: nil, count: 0)
            out.withUnsafeMutableBytes { sha1(key: key, first, second, into: $0) }
            return out
        }
        guard let mac = implementation.pointer, let ctx = EVP_MAC_CTX_new(mac) else { return nil }
        defer { EVP_MAC_CTX_free(ctx) }
        // OSSL_PARAM keeps the pointers it is given, so both C strings must
        // outlive EVP_MAC_init: a string literal passed straight to
        // OSSL_PARAM_construct_utf8_string is a temporary that dies after
        // that call (ASan caught the use-after-free in a debug fuzz run).
        var ok = "digest".withCString { parameterName in
            algorithm.digestName.withCString { name -> Bool in
                var params = [
                    OSSL_PARAM_construct_utf8_string(parameterName, UnsafeMutablePointer(mutating: name), 0),
                    OSSL_PARAM_construct_end(),
                ]
                // An empty key is legal for HMAC; OpenSSL wants a non-null pointer.
                var zero: UInt8 = 0
                return withUnsafeMutablePointer(to: &zero) { zp in
                    let keyPointer = key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(zp)
                    return EVP_MAC_init(ctx, keyPointer, key.count, &params) == 1
                }
            }
        }
        for part in parts where ok && part.count > 0 {
            ok = EVP_MAC_update(ctx, part.baseAddress!.assumingMemoryBound(to: UInt8.self), part.count) == 1
        }
        guard ok else { return nil }
        var out = [UInt8](repeating: 0, count: algorithm.digestLength)
        var written = 0
        let finished = out.withUnsafeMutableBufferPointer { EVP_MAC_final(ctx, $0.baseAddress, &written, $0.count) }
        guard finished == 1, written == algorithm.digestLength else { return nil }
        return out
    }

    /// HMAC-SHA1 (RFC 2104) of `first || second` under `key` into the first
    /// 20 bytes of `out`, on the stack: STUN's MESSAGE-INTEGRITY (RFC 8489
    /// section 14.5) on every consent check allocates nothing here, where
    /// OpenSSL 3.0's EVP_MAC makes and frees provider contexts per call.
    /// Checked against EVP_MAC and RFC 2202's vectors in the tests.
    package static func sha1(
        key: UnsafeRawBufferPointer, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(out.count >= Algorithm.sha1.digestLength)
        func bytes(_ b: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? { b.baseAddress?.assumingMemoryBound(to: UInt8.self) }
        swiftlet_hmac_sha1(
            bytes(key), key.count, bytes(first), first.count, bytes(second), second.count,
            out.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    package static func authenticationCode(_ algorithm: Algorithm, key: [UInt8], message: [UInt8]) -> [UInt8]? {
        key.withUnsafeBytes { k in message.withUnsafeBytes { m in authenticationCode(algorithm, key: k, parts: [m]) } }
    }
}

/// Owns the fetched `EVP_MAC` for the life of the process. Immutable after
/// init and thread-safe in OpenSSL, hence `@unchecked Sendable`.
private final class MACImplementation: @unchecked Sendable {
    let pointer: OpaquePointer?
    init() { pointer = EVP_MAC_fetch(nil, "HMAC", nil) }
    deinit { EVP_MAC_free(pointer) }
}

/// One-shot digests.
package enum Digest {
    package static func sha1(_ data: UnsafeRawBufferPointer) -> [UInt8] { digest(EVP_sha1(), 20, data) }
    package static func sha256(_ data: UnsafeRawBufferPointer) -> [UInt8] { digest(EVP_sha256(), 32, data) }
    package static func sha384(_ data: UnsafeRawBufferPointer) -> [UInt8] { digest(EVP_sha384(), 48, data) }
    package static func sha512(_ data: UnsafeRawBufferPointer) -> [UInt8] { digest(EVP_sha512(), 64, data) }

    package static func sha1(_ data: [UInt8]) -> [UInt8] { data.withUnsafeBytes { sha1($0) } }
    /// MD5 only for STUN's long-term credential key (RFC 8489 section
    /// 9.2.2), which the protocol fixes; never as a security hash elsewhere.
    package static func md5(_ data: [UInt8]) -> [UInt8] { data.withUnsafeBytes { digest(EVP_md5(), 16, $0) } }
    package static func sha256(_ data: [UInt8]) -> [UInt8] { data.withUnsafeBytes { sha256($0) } }

    private static func digest(_ md: OpaquePointer?, _ length: Int, _ data: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        var size: UInt32 = 0
        var empty: UInt8 = 0
        withUnsafeMutablePointer(to: &empty) { ep in
            let p = data.baseAddress ?? UnsafeRawPointer(ep)
            _ = out.withUnsafeMutableBufferPointer { EVP_Digest(p, data.count, $0.baseAddress, &size, md, nil) }
        }
        return out
    }
}

/// Cryptographically secure random bytes (ICE credentials, tie-breakers,
/// SSRCs, STUN transaction ids).
package enum SecureRandom {
    package static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(ok == 1, "OpenSSL RAND_bytes failed: the process has no entropy source")
        return out
    }

    package static func uint32() -> UInt32 {
        bytes(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    package static func uint64() -> UInt64 {
        bytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
