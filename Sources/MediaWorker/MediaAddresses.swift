import ICE
import NetIO
import Wire

/// Which addresses the media workers announce as ICE host candidates
/// (RFC 8445 section 5.1.1.1), chosen once at start from the bind address,
/// `announceIP` and the machine's interfaces. Pure: the interfaces are a
/// parameter, so every rule has a unit test.
///
/// - A wildcard is never announced: a client cannot send to 0.0.0.0 and
///   would sit "connected" to signalling with no media path at all.
/// - `announceIP` (a public address behind 1:1 NAT) replaces everything
///   else: it is the only address clients can reach. Replies still leave
///   from the address each datagram arrived on (NetIO's IP_PKTINFO).
/// - A socket bound to one address announces that address.
/// - A wildcard socket announces every address of every interface that is
///   up, of the families it receives (`::` takes both, `0.0.0.0` IPv4),
///   except loopback, IPv4 link-local (169.254/16, reachable from one
///   link only) unless asked, and IPv6 link-local (fe80::/10) always: an
///   fe80:: address means nothing without its zone (interface index),
///   which neither an SDP candidate nor `TransportAddress` carries, so a
///   reply to such a peer could not even be addressed. With only loopback
///   left it announces loopback and warns; with nothing left it refuses,
///   saying why.
package struct MediaAddresses: Equatable, Sendable {
    /// The IP addresses to announce (port 0), in interface order.
    package var addresses: [TransportAddress]
    /// What an operator should know (printed at start).
    package var warnings: [String]

    package init(addresses: [TransportAddress], warnings: [String] = []) {
        self.addresses = addresses
        self.warnings = warnings
    }

    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// `announceIP` is 0.0.0.0 or ::.
        case wildcardAnnounced(TransportAddress)
        /// `announceIP` is of a family the media socket does not receive.
        case familyNotReceived(announce: TransportAddress, bind: TransportAddress)
        /// The bind address is a wildcard and no interface has an address
        /// to announce (`skippedLinkLocal`: IPv4 link-local ones left out).
        case nothingToAnnounce(skippedLinkLocal: Int)

        package var description: String {
            switch self {
            case .wildcardAnnounced(let a):
                "announceIP \(Self.ip(a)) is a wildcard, which no client can send to; give the address clients reach this server on"
            case .familyNotReceived(let announce, let bind):
                "announceIP \(Self.ip(announce)) is \(announce.family == .ipv4 ? "IPv4" : "IPv6"), but the media socket bound to "
                    + "\(Self.ip(bind)) does not receive that family; bind :: (both) or an address of that family"
            case .nothingToAnnounce(let skipped):
                "the media socket is bound to a wildcard and no network interface has an address to announce"
                    + (skipped > 0
                        ? " (\(skipped) link-local address\(skipped == 1 ? "" : "es") skipped; announceLinkLocal allows them)"
                        : "")
                    + "; give announceIP (--announce-ip) or bind the media to an address (--media-bind)"
            }
        }

        static func ip(_ a: TransportAddress) -> String { SocketAddress(a).ip }
    }

    /// The addresses for a media socket bound to `bind` (`dualStack`: a
    /// `::` socket that takes IPv4 too); `includeLinkLocal` admits IPv4
    /// link-local addresses.
    package static func choose(
        bind: TransportAddress, dualStack: Bool, announce: TransportAddress?, interfaces: [InterfaceAddress],
        includeLinkLocal: Bool = false
    ) throws(Failure) -> MediaAddresses {
        var bind = bind
        bind.port = 0
        func received(_ a: TransportAddress) -> Bool { a.family == bind.family || (dualStack && bind.isUnspecified) }
        if var announce {
            announce.port = 0
            guard !announce.isUnspecified else { throw .wildcardAnnounced(announce) }
            guard received(announce) else { throw .familyNotReceived(announce: announce, bind: bind) }
            return MediaAddresses(addresses: [announce])
        }
        guard bind.isUnspecified else {
            let warnings =
                bind.isLoopback
                ? ["media bound to loopback \(Failure.ip(bind)): only clients on this machine can connect"] : []
            return MediaAddresses(addresses: [bind], warnings: warnings)
        }
        var usable: [TransportAddress] = []
        var loopback: [TransportAddress] = []
        var skippedLinkLocal = 0
        for interface in interfaces where interface.isUp {
            var a = interface.address
            a.port = 0
            guard received(a), !a.isUnspecified, !a.isMulticast else { continue }
            if a.isLoopback {
                if !loopback.contains(a) { loopback.append(a) }
                continue
            }
            if a.isLinkLocal, !includeLinkLocal || a.family == .ipv6 {
                if a.family == .ipv4 { skippedLinkLocal += 1 }
                continue
            }
            if !usable.contains(a) { usable.append(a) }
        }
        if !usable.isEmpty { return MediaAddresses(addresses: usable) }
        guard !loopback.isEmpty else { throw .nothingToAnnounce(skippedLinkLocal: skippedLinkLocal) }
        return MediaAddresses(
            addresses: loopback,
            warnings: [
                "no network interface but loopback has an address: announcing "
                    + loopback.map(Failure.ip).joined(separator: " ")
                    + " only, so only clients on this machine can connect; give announceIP for others"
            ])
    }

    /// Host candidates on `port` for each address: RFC 8445 section
    /// 5.1.2.1 priorities, with a local preference per address (IPv6 above
    /// IPv4, then interface order) so that no two are equal.
    package func candidates(port: UInt16) -> [ICECandidate] {
        var seen: [TransportAddress.Family: Int] = [:]
        return addresses.map { address in
            var a = address
            a.port = port
            let index = seen[a.family, default: 0]
            seen[a.family] = index + 1
            return .host(a, interfaceIndex: index)
        }
    }

    /// Passive ICE-TCP host candidates (RFC 6544 section 4.5) on TCP port
    /// `port` for the same addresses, in the same order: ranked below every
    /// UDP candidate (`ICECandidate.hostTCPPassive`), so they are used only
    /// where UDP does not get through.
    package func tcpCandidates(port: UInt16) -> [ICECandidate] {
        var seen: [TransportAddress.Family: Int] = [:]
        return addresses.map { address in
            var a = address
            a.port = port
            let index = seen[a.family, default: 0]
            seen[a.family] = index + 1
            // IPv6 above IPv4 in the other-preference, as for UDP.
            return .hostTCPPassive(a, interfaceIndex: (a.family == .ipv6 ? 0 : 512) + index)
        }
    }
}
