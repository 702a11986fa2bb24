/// CRC-32 as in ISO 3309 / ITU-T V.42 (polynomial 0x04C11DB7, reflected),
/// the checksum of the STUN FINGERPRINT attribute (RFC 8489 section 14.7).
package enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// Continues a running checksum; start with `0`.
    package static func update(_ crc: UInt32, _ data: UnsafeRawBufferPointer) -> UInt32 {
        var c = ~crc
        table.withUnsafeBufferPointer { t in
            for b in data { c = t[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        }
        return ~c
    }

    package static func checksum(_ data: UnsafeRawBufferPointer) -> UInt32 { update(0, data) }
    package static func checksum(_ data: [UInt8]) -> UInt32 { data.withUnsafeBytes { checksum($0) } }
}
