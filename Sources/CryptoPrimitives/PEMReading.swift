import COpenSSL

/// Hands a read-only OpenSSL memory BIO over the UTF-8 bytes of `text` to
/// `read` (a `PEM_read_bio_*` call) and frees the BIO afterwards. Empty
/// text, or text longer than `Int32.max`, reads nothing. Shared by the
/// targets that load PEM (DTLS certificates, the TLS listener's chain).
package func readPEM(_ text: String, _ read: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
    var bytes = Array(text.utf8)
    guard !bytes.isEmpty, let count = Int32(exactly: bytes.count) else { return nil }
    return bytes.withUnsafeMutableBytes { p -> OpaquePointer? in
        guard let bio = BIO_new_mem_buf(p.baseAddress, count) else { return nil }
        defer { BIO_free(bio) }
        return read(bio)
    }
}
