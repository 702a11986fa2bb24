import Wire

extension TransportAddress {
    /// The XOR transform of XOR-MAPPED-ADDRESS (RFC 8489 section 14.2): the
    /// port with the cookie's top 16 bits, an IPv4 address with the cookie,
    /// an IPv6 address with cookie || transaction id. It is its own inverse.
    package func xored(with transactionID: TransactionID) -> TransportAddress {
        let cookie = STUNMessage.magicCookie
        let xPort = port ^ UInt16(truncatingIfNeeded: cookie >> 16)
        if let v4 = ipv4 {
            return TransportAddress(ipv4: v4 ^ cookie, port: xPort)
        }
        let (high, low) = ipv6 ?? (0, 0)
        let maskHigh = UInt64(cookie) << 32 | UInt64(transactionID.high)
        return TransportAddress(ipv6: high ^ maskHigh, low ^ transactionID.low, port: xPort)
    }
}
