import NetIO
import Signaling
import Wire

/// Who sent a request that came through trusted reverse proxies.
///
/// Only a peer in `trusted` is believed: anyone else could write any
/// `X-Forwarded-For`. The hops a proxy appends are read right to left
/// (each proxy appends the address it received from, so the rightmost
/// entries are the ones our proxies wrote) and the first address that is
/// not itself a trusted proxy is the client. `Forwarded` (RFC 7239 section
/// 4, `for=` parameters) is read when present, `X-Forwarded-For` otherwise.
/// An entry that is not an address (`unknown`, an obfuscated identifier,
/// garbage) stops the walk: the client is then the last trusted hop, so a
/// misconfigured chain is limited as one client, never exempt.
enum ForwardedClient {
    /// Hops read at most: a request's head is already bounded, this bounds
    /// the work per request whatever the head holds.
    static let maxHops = 32

    static func address(
        of request: HTTPRequest, peer: SocketAddress?, trusted: [AddressPrefix]
    ) -> SocketAddress? {
        guard let peer, trusted.contains(peer) else { return peer }
        let forwarded = request.headers.values("Forwarded")
        let hops: [Substring] =
            forwarded.isEmpty
            ? request.headers.values("X-Forwarded-For").flatMap { $0.split(separator: ",") }
            : forwarded.flatMap { $0.split(separator: ",") }.compactMap(forParameter)
        var client = peer
        for hop in hops.suffix(maxHops).reversed() {
            guard let address = Self.parse(hop) else { break }
            client = address
            if !trusted.contains(address) { break }
        }
        return client
    }

    /// The `for=` value of one `Forwarded` element (`for=192.0.2.60;proto=http`,
    /// `for="[2001:db8::1]:4711"`), or an empty string when it has none
    /// (which then stops the walk).
    private static func forParameter(_ element: Substring) -> Substring? {
        for pair in element.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingSpaces.lowercased() == "for" else { continue }
            return parts[1]
        }
        return ""
    }

    /// An address, with or without quotes, brackets and a port:
    /// `192.0.2.1`, `192.0.2.1:80`, `2001:db8::1`, `[2001:db8::1]:80`.
    static func parse(_ hop: Substring) -> SocketAddress? {
        var text = hop.trimmingSpaces
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = text[..<colon]  // IPv4 with a port
        }
        guard text.utf8.count <= 45 else { return nil }  // INET6_ADDRSTRLEN - 1
        return SocketAddress(ip: String(text), port: 0)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}

/// The per-address limits for clients behind trusted proxies: the TCP
/// shell does not count a proxy's connections per address (they carry many
/// clients), so each request a proxy forwards is counted here for the
/// client it names, with the same limits: a plain request takes a token of
/// the client's rate, a room WebSocket holds one of its connections until
/// it closes. Used on the TCP loop's thread only.
final class ForwardedClientAdmission: @unchecked Sendable {
    let trusted: [AddressPrefix]
    private var limiter: TCPAddressLimiter

    init(trusted: [AddressPrefix], limits: TCPAddressLimiter.Limits) {
        self.trusted = trusted
        var limits = limits
        limits.exempt = []
        limiter = TCPAddressLimiter(limits: limits)
    }

    func isProxy(_ peer: SocketAddress?) -> Bool { trusted.contains(peer) }

    func client(of request: HTTPRequest, peer: SocketAddress?) -> SocketAddress? {
        ForwardedClient.address(of: request, peer: peer, trusted: trusted)
    }

    /// Counts one connection for `client` (a WebSocket: `release` it at close).
    func admit(_ client: SocketAddress?, now: Instant) -> TCPAddressLimiter.Verdict {
        limiter.admit(client, now: now)
    }

    func release(_ client: SocketAddress?) { limiter.release(client) }

    var trackedClients: Int { limiter.trackedAddresses }
}
