import Foundation
import MediaWorker
import NetIO
import RoomProtocol
import Rooms
import TLS
import TURN
import TURNService
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// `--turn`: the built-in TURN server next to the media workers
/// (docs/TRANSPORT.md, "TURN"), and the ICE servers the signalling server
/// hands each participant.
enum ServeTURN {
    struct Running: Sendable {
        let service: TURNService
        let urls: [String]

        /// The join response's / Link headers' servers for `identity`.
        func iceServers(for identity: String) -> [ICEServer] {
            guard let issued = service.issue(identity: identity, unixSeconds: Int64(time(nil))) else { return [] }
            return [ICEServer(urls: urls, username: issued.username, credential: issued.password)]
        }
    }

    /// Binds TURN on the media address: UDP and TCP on `turn.port`, TLS on
    /// `turn.tlsPort` when a certificate is loaded. Relays may reach only
    /// the media workers' addresses.
    static func start(_ options: ServeOptions, media: MediaPlane, tls: TLSContextSlot?) throws -> Running {
        let bindIP = options.mediaBind
        let announced = media.endpoint.workers.flatMap { $0 }.filter { $0.transport == .udp }.map(\.address)
        var allowed = Set(announced)
        for local in media.localAddresses where !local.isWildcard { allowed.insert(local.transportAddress) }
        // The relay's address as clients see it: the announced media IP
        // (IPv4 first: what browsers allocate by default).
        let relayIP =
            options.announcedIP
            ?? announced.map { SocketAddress($0) }.sorted { ($0.family == .v4 ? 0 : 1) < ($1.family == .v4 ? 0 : 1) }.first?.ip
            ?? bindIP
        guard let listen = SocketAddress(ip: bindIP, port: options.turnPort),
            let tlsListen = SocketAddress(ip: bindIP, port: options.turnTLSPort)
        else { throw SocketError(operation: "TURN address \(bindIP)", errno: EINVAL) }
        var engine = TURNServerConfiguration()
        engine.maxAllocations = options.turnAllocations
        engine.maxAllocationsPerUser = options.turnAllocationsPerUser
        let secret = options.keys.sorted { $0.key < $1.key }.first?.value ?? ""
        let credentials = TURNCredentials.derived(fromTokenSecret: secret)
        var configuration = TURNServiceConfiguration(
            listen: listen, tls: tls.map { (tlsListen, $0) }, relayBindIP: bindIP, relayAnnouncedIP: relayIP,
            engine: engine, credentials: credentials, allowedPeers: allowed)
        configuration.peerRoutes = TURNServiceConfiguration.peerRoutes(
            workers: zip(media.localAddresses, media.endpoint.workers).map { local, candidates in
                (local, candidates.filter { $0.transport == .udp }.map(\.address))
            })
        let service = try TURNService(configuration)
        let host = options.turnHost ?? (relayIP.contains(":") ? "[\(relayIP)]" : relayIP)
        return Running(service: service, urls: service.urls(host: host))
    }
}
