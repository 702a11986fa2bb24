import COpenSSL

/// Drains OpenSSL's thread-local error queue into one line, oldest first.
/// Every OpenSSL call site clears the queue first (`ERR_clear_error`), so
/// what this returns belongs to the call just made. Shared by the targets
/// that wrap OpenSSL (DTLS, TLS).
package func drainOpenSSLErrors(fallback: String) -> String {
    var reasons: [String] = []
    var buffer = [CChar](repeating: 0, count: 256)
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        let text = buffer.withUnsafeMutableBufferPointer { p -> String in
            ERR_error_string_n(code, p.baseAddress, p.count)
            return String(decoding: p.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        reasons.append(text)
    }
    return reasons.isEmpty ? fallback : reasons.joined(separator: "; ")
}
