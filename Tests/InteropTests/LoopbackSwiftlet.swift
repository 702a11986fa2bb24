import DTLS
import Foundation
import MediaWorker
import NetIO
import RoomProtocol
import Rooms
import Signaling
import SignalingServer
import Synchronization
import TLS
import TURN
import TURNService
import Testing

@testable import SwiftletServer

/// A real swiftlet on 127.0.0.1 for the interop tests: one media worker (or
/// `workers`, placed as `swiftlet serve --room-spread-after` places them)
/// and the signalling server with `swiftlet serve`'s /metrics, on ports the
/// kernel picks. Every media command
/// the rooms layer sends is recorded before it reaches the worker, so a
/// test can say which transports the server opened. With `devMode` it
/// mints tokens on `/dev/token` as `swiftlet serve --dev` does (the pages
/// fetch their own). Call `stop()`.
final class LoopbackSwiftlet {
    let media: MediaPlane
    let server: SignalingServer
    /// The built-in TURN server, with `turn` (and TURN over TLS with `tls`).
    let turn: TURNService?
    private let recorded: CommandLog

    private final class CommandLog: Sendable {
        let commands = Mutex<[MediaCommand]>([])
    }

    /// `mediaBind` and `announcedIP` as `swiftlet serve` takes them; the
    /// signalling server is on `signalingIP` (127.0.0.1) whatever they
    /// are. With `tls`, it also listens for HTTPS/WSS (`secureURL`); with
    /// `iceTCP`, the worker also takes ICE-TCP on a free TCP port. With
    /// `turn`, a TURN server as `swiftlet serve --turn` runs it (relaying
    /// only to the media worker), announced in join responses under the
    /// name `localhost`.
    init(
        devMode: Bool = false, mediaBind: String = "127.0.0.1", announcedIP: String? = nil, tls: TLSContextSlot? = nil,
        signalingIP: String = "127.0.0.1", iceTCP: Bool = false, turn turnEnabled: Bool = false, workers: Int = 1,
        roomSpreadAfter: Int = WorkerPlacement().spreadAfter
    ) throws {
        let certificate = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970))
        let media = try MediaPlane(
            count: workers, bindIP: mediaBind, firstPort: 0, announcedIP: announcedIP, certificate: certificate,
            tcpFirstPort: iceTCP ? 0 : nil)
        let recorded = CommandLog()
        var turn: TURNService?
        var iceServers: (@Sendable (String) -> [ICEServer])?
        if turnEnabled {
            let service: TURNService
            var configuration = TURNServiceConfiguration(
                listen: SocketAddress(ip: "127.0.0.1", port: 0)!,
                tls: tls.map { (SocketAddress(ip: "127.0.0.1", port: 0)!, $0) }, relayBindIP: mediaBind,
                relayAnnouncedIP: mediaBind, engine: TURNServerConfiguration(),
                credentials: TURNCredentials.derived(fromTokenSecret: "s"),
                allowedPeers: Set(media.endpoint.workers.flatMap { $0 }.map(\.address)))
            configuration.peerRoutes = TURNServiceConfiguration.peerRoutes(
                workers: zip(media.localAddresses, media.endpoint.workers).map { ($0, $1.map(\.address)) })
            do {
                service = try TURNService(configuration)
            } catch {
                media.stop()
                throw error
            }
            let urls = service.urls(host: "localhost")
            iceServers = { identity in
                guard let issued = service.issue(identity: identity, unixSeconds: Int64(Date().timeIntervalSince1970))
                else { return [] }
                return [ICEServer(urls: urls, username: issued.username, credential: issued.password)]
            }
            turn = service
        }
        self.turn = turn
        var rooms = RoomDirectory<RandomIdentifiers>.Configuration(media: media.endpoint)
        rooms.placement = WorkerPlacement(spreadAfter: roomSpreadAfter)
        let loads = WorkerLoadMeter(plane: media)
        rooms.workerLoads = { loads.read() }
        do {
            server = try SignalingServer(
                bindingTo: SocketAddress(ip: signalingIP, port: 0)!,
                secure: tls.map { (SocketAddress(ip: "127.0.0.1", port: 0)!, $0) },
                verifier: AccessTokenVerifier(keys: ["k": "s"]),
                rooms: rooms,
                media: { command in
                    recorded.commands.withLock { $0.append(command) }
                    media.post(command)
                },
                mediaMetrics: {
                    MediaMetrics.prometheus(media.snapshots()) + MediaMetrics.relayPrometheus(media.relayCounts())
                }, devTokens: devMode ? DevTokenIssuer(key: "k", secret: "s") : nil, iceServers: iceServers)
        } catch {
            turn?.stop()
            media.stop()
            throw error
        }
        self.media = media
        self.recorded = recorded
        // As `swiftlet serve` does: a dead WHIP/WHEP transport ends its session.
        let service = server.service
        media.onTransportFailed { participant, _ in service.transportFailed(participant, now: MonotonicClock.now()) }
        // And media events (stream-state, publisher-layers, active-speakers)
        // reach the participants.
        media.onMediaEvent { service.mediaEvent($0) }
    }

    var url: String { "ws://\(server.localAddress)/rtc" }
    /// The room WebSocket over TLS, by the certificate's name; nil without TLS.
    var secureURL: String? { server.secureLocalAddress.map { "wss://localhost:\($0.port)/rtc" } }

    /// The media commands sent so far, in order.
    var commands: [MediaCommand] { recorded.commands.withLock { $0 } }

    /// One token per identity for `room`, with both grants, valid for ten
    /// minutes.
    func tokens(for identities: [String], room: String) -> [String] {
        let now = Int64(Date().timeIntervalSince1970)
        return identities.map {
            AccessToken.mint(
                claims: AccessTokenClaims(
                    issuer: "k", subject: $0, notBefore: now - 5, expiresAt: now + 600, room: room,
                    grants: AccessTokenGrants(publish: true, subscribe: true)),
                secret: "s")
        }
    }

    /// A server API token (the admin grant) for `room`.
    func adminToken(room: String) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "k", subject: "backend", notBefore: now - 5, expiresAt: now + 600, room: room,
                grants: AccessTokenGrants(admin: true)),
            secret: "s")
    }

    func stop() {
        server.stop()
        turn?.stop()
        media.stop()
    }

    /// The package root: three directories up from this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs `Scripts/interop/<script>` with the repository's venv against
    /// this server, with `tokens`, and returns the one JSON line it prints;
    /// with `namespace`, inside that network namespace (`ip netns exec`).
    func runScript(
        _ script: String, tokens: [String], url: String? = nil, arguments: [String] = [], timeout: Duration,
        namespace: String? = nil
    ) throws -> [String: Any] {
        let python = Self.root.appendingPathComponent(".venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "run Scripts/setup: \(python.path) is missing")
        let prefix = namespace.map { ["ip", "netns", "exec", $0, python.path] } ?? []
        let child = try JSONLineProcess(
            executable: namespace == nil ? python : URL(fileURLWithPath: "/usr/bin/env"),
            arguments: prefix + [
                Self.root.appendingPathComponent("Scripts/interop/\(script)").path,
                "--url", url ?? self.url, "--tokens", String(decoding: try JSONEncoder().encode(tokens), as: UTF8.self),
            ] + arguments,
            workingDirectory: Self.root)
        return try child.receive("the result of \(script)", timeout: timeout)
    }
}

extension MediaCommand {
    /// The room of an `openTransport`, nil for every other command.
    var openedTransportRoom: String? {
        if case .openTransport(let room, _, _, _, _, _) = self { return room }
        return nil
    }
}
