import Wire

/// Admission per client address: how many connections one address holds
/// open, and how fast it opens new ones (a token bucket per address). Kept
/// by the TCP loop, given `now`; no clock of its own.
///
/// The address is the peer's IPv4 address, or for IPv6 its /64 prefix: one
/// host usually owns a whole /64 (RFC 4291 section 2.5.4 interface
/// identifiers, SLAAC privacy addresses), so keying on the full 128 bits
/// would let it open as many "addresses" as it likes. An IPv4-mapped IPv6
/// peer (a dual-stack listener) counts as its IPv4 address.
///
/// The table is bounded: at `maxAddresses` entries, entries with no open
/// connection are forgotten (about an eighth of the table at once, so the
/// sweep costs O(1) per admission on average). An address whose entry is
/// forgotten starts again with a full bucket; entries with open
/// connections are never forgotten, and there are at most as many of
/// those as the server's `maxConnections`.
package struct TCPAddressLimiter {
    package struct Limits: Equatable, Sendable {
        package var maxConnectionsPerAddress: Int
        /// Tokens added per second; one new connection takes one.
        package var connectionsPerSecond: Double
        /// The bucket's size: new connections an idle address may open at once.
        package var burst: Double
        package var maxAddresses: Int
        /// Addresses always admitted and never counted (trusted proxies).
        package var exempt: [AddressPrefix] = []

        package init(
            maxConnectionsPerAddress: Int, connectionsPerSecond: Double, burst: Double, maxAddresses: Int,
            exempt: [AddressPrefix] = []
        ) {
            self.maxConnectionsPerAddress = maxConnectionsPerAddress
            self.connectionsPerSecond = connectionsPerSecond
            self.burst = burst
            self.maxAddresses = maxAddresses
            self.exempt = exempt
        }
    }

    package enum Verdict: Equatable, Sendable {
        case admit
        case tooManyConnections
        case rateLimited
    }

    struct Key: Hashable {
        var high: UInt64
        var low: UInt64
    }

    /// Addresses exempt at run time (a cluster's other nodes).
    package var exemptPeers: PeerAddressSet?

    private struct Entry {
        var open = 0
        var tokens: Double
        var refilled: Instant
    }

    package let limits: Limits
    private var entries: [Key: Entry] = [:]

    package init(limits: Limits) { self.limits = limits }

    package var trackedAddresses: Int { entries.count }

    static func key(_ address: SocketAddress?) -> Key {
        guard let bytes = address?.ipBytes else { return Key(high: 0, low: 0) }
        func word(_ slice: ArraySlice<UInt8>) -> UInt64 { slice.reduce(0) { $0 << 8 | UInt64($1) } }
        if bytes.count == 4 { return Key(high: 0, low: 1 << 32 | word(bytes[...])) }
        // ::ffff:a.b.c.d (RFC 4291 section 2.5.5.2)
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return Key(high: 0, low: 1 << 32 | word(bytes[12..<16]))
        }
        return Key(high: word(bytes.prefix(8)), low: 2 << 32)
    }

    /// One host exactly (IPv6 by all 128 bits, IPv4-mapped as IPv4): a
    /// cluster peer is one address, not its /64.
    static func key(exact address: SocketAddress) -> Key {
        let bytes = address.ipBytes
        let mapped = bytes.count == 16 && bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        guard bytes.count == 16, !mapped else { return key(address) }
        func word(_ slice: ArraySlice<UInt8>) -> UInt64 { slice.reduce(0) { $0 << 8 | UInt64($1) } }
        return Key(high: word(bytes.prefix(8)), low: word(bytes.suffix(8)))
    }

    /// Whether a new connection from `address` may stay; if so it counts
    /// as open until `release`.
    package mutating func admit(_ address: SocketAddress?, now: Instant) -> Verdict {
        if limits.exempt.contains(address) || exemptPeers?.contains(address) == true { return .admit }
        let key = Self.key(address)
        var entry = entries[key] ?? Entry(tokens: limits.burst, refilled: now)
        let elapsed = Double((now - entry.refilled).nanoseconds) / 1e9
        entry.tokens = min(limits.burst, entry.tokens + max(0, elapsed) * limits.connectionsPerSecond)
        entry.refilled = now
        let verdict: Verdict
        if entry.open >= limits.maxConnectionsPerAddress {
            verdict = .tooManyConnections
        } else if entry.tokens < 1 {
            verdict = .rateLimited
        } else {
            entry.tokens -= 1
            entry.open += 1
            verdict = .admit
        }
        if entries[key] == nil, entries.count >= limits.maxAddresses { forgetIdle() }
        entries[key] = entry
        return verdict
    }

    /// A connection admitted for `address` closed.
    package mutating func release(_ address: SocketAddress?) {
        if limits.exempt.contains(address) { return }
        // A peer exempted after it was admitted and counted is released
        // here like any address (an entry that counted nothing is left).
        let key = Self.key(address)
        guard var entry = entries[key], entry.open > 0 else { return }
        entry.open -= 1
        entries[key] = entry
    }

    private mutating func forgetIdle() {
        let target = limits.maxAddresses - max(1, limits.maxAddresses / 8)
        var excess = entries.count - target
        guard excess > 0 else { return }
        for (key, entry) in entries where entry.open == 0 {
            entries[key] = nil
            excess -= 1
            if excess == 0 { break }
        }
    }
}

/// At most `perSecond` refusal reports a second: under a flood the log
/// gets a sample and a count of what it missed, not one line per packet.
struct TCPRefusalReports {
    let perSecond: Int
    private var windowStart: Instant?
    private var reported = 0
    private var suppressed = 0

    init(perSecond: Int) { self.perSecond = perSecond }

    /// nil: drop this report; otherwise report it with the number dropped
    /// since the last one reported.
    mutating func admit(now: Instant) -> Int? {
        if windowStart.map({ now - $0 >= .seconds(1) }) ?? true {
            windowStart = now
            reported = 0
        }
        guard reported < perSecond else {
            suppressed += 1
            return nil
        }
        reported += 1
        defer { suppressed = 0 }
        return suppressed
    }
}
