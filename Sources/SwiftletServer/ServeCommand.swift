import ClusterService
import DTLS
import Foundation
import MediaRecorder
import MediaWorker
import NetIO
import RoomProtocol
import Rooms
import Signaling
import SignalingServer
import TLS
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// `swiftlet serve`: starts the media plane (one UDP worker per core, each
/// with its own port) and the signalling server (HTTP, the room WebSocket,
/// WHIP/WHEP), prints the effective configuration and where everything
/// listens, and runs until SIGTERM or SIGINT; then it drains (`ServeDrain`)
/// and exits.
enum ServeCommand {
    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ServeOptions.Parsed
        do {
            parsed = try ServeOptions.read(arguments, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandleStderr.write("swiftlet serve: \(error)\n")
            return 64
        }
        if parsed.helpRequested {
            print(Help.text(for: "serve") ?? "")
            return 0
        }
        let options = parsed.options
        let environment = ProcessInfo.processInfo.environment
        for warning in ServeOptions.parser.misspeltEnvironment(
            environment, alsoKnown: ["SWIFTLET_API_KEY", "SWIFTLET_API_SECRET"])
        {
            FileHandleStderr.write("swiftlet serve: warning: \(warning)\n")
        }

        // Signals are taken synchronously by this thread (sigwait); block
        // them before any worker thread exists so that all threads inherit
        // the mask.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGHUP)  // reloads the TLS certificate
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let certificate: DTLSCertificate
        do {
            certificate = try DTLSCertificate.generate(issuedAt: Int64(time(nil)))
        } catch {
            FileHandleStderr.write("swiftlet serve: cannot create the DTLS certificate: \(error)\n")
            return 70
        }

        var tlsFiles: ServeTLS.Files?
        var tlsSlot: TLSContextSlot?
        if options.servesTLS {
            do {
                let files = try ServeTLS.files(options)
                tlsSlot = TLSContextSlot(try ServeTLS.load(files))
                tlsFiles = files
            } catch {
                FileHandleStderr.write("swiftlet serve: \(error)\n")
                return 66
            }
        }

        let count = options.workers > 0 ? options.workers : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let media: MediaPlane
        var engineConfiguration = RoomMediaEngine.Configuration()
        engineConfiguration.transport.maxInboundSSRCs = options.maxSSRCsPerTransport
        engineConfiguration.transport.srtpBackend = options.srtpBackend
        do {
            media = try MediaPlane(
                count: count, bindIP: options.mediaBind, firstPort: options.udpPort,
                announcedIP: options.announcedIP, announceLinkLocal: options.announceLinkLocal, certificate: certificate,
                configuration: engineConfiguration, tcpFirstPort: options.iceTCPFirstPort, udpGSO: options.udpGSO,
                socketBuffers: options.socketBuffers)
        } catch {
            let tcp = options.iceTCPFirstPort.map { " tcp \($0)" } ?? ""
            FileHandleStderr.write("swiftlet serve: media on \(options.mediaBind) udp \(options.udpPort)\(tcp): \(error)\n")
            return 71
        }

        var turn: ServeTURN.Running?
        if options.turn {
            do {
                turn = try ServeTURN.start(options, media: media, tls: tlsSlot)
            } catch {
                FileHandleStderr.write("swiftlet serve: TURN on \(options.mediaBind) port \(options.turnPort): \(error)\n")
                media.stop()
                return 71
            }
        }

        var iceServers: (@Sendable (String) -> [ICEServer])?
        if let running = turn { iceServers = { running.iceServers(for: $0) } }
        var rooms = RoomDirectory<RandomIdentifiers>.Configuration(media: media.endpoint, limits: options.roomLimits)
        rooms.placement = WorkerPlacement(spreadAfter: options.roomSpreadAfter)
        let loads = WorkerLoadMeter(plane: media)
        rooms.workerLoads = { loads.read() }
        let clusterSlot = ServeCluster.Slot()
        // Recording (docs/RECORDING.md): made before signalling so that it
        // sees every track from the first; the rooms' identities come from
        // the service once it exists.
        let serviceSlot = ServeRecording.ServiceSlot()
        let recorder = ServeRecording.start(options, media: media, service: serviceSlot)
        let signaling: SignalingServer
        do {
            signaling = try SignalingServer(
                bindingTo: options.httpAddress, secure: tlsSlot.map { (options.httpsAddress, $0) },
                verifier: AccessTokenVerifier(keys: options.keys),
                rooms: rooms,
                media: { command in
                    media.post(command)
                    recorder?.observe(command)
                },
                mediaMetrics: {
                    MediaMetrics.prometheus(media.snapshots()) + MediaMetrics.relayPrometheus(media.relayCounts())
                        + MediaMetrics.udpSendPrometheus(media.udpSends())
                        + MediaMetrics.workerDelayPrometheus(media.workerDelays())
                        + MediaMetrics.receiveBufferDropsPrometheus(media.receiveBufferDrops())
                        + ProcessMetrics.prometheus() + clusterSlot.prometheus() + (recorder?.prometheus ?? "")
                },
                timeouts: options.signalingTimeouts, connectionLimits: options.connectionLimits,
                log: ServerLog(
                    minimum: options.effectiveLogLevel, format: options.logFormat, secrets: Array(options.keys.values)),
                devTokens: options.dev ? DevTokenIssuer(key: ServeOptions.devKey, secret: ServeOptions.devSecret) : nil,
                loopbackHostsOnly: options.dev, allowedOrigins: options.allowedOrigins.isEmpty ? nil : options.allowedOrigins,
                iceServers: iceServers)
        } catch {
            FileHandleStderr.write(
                "swiftlet serve: cannot listen on http \(options.httpAddress)\(options.servesTLS ? " or https \(options.httpsAddress)" : ""): \(error)\n"
            )
            turn?.service.stop()
            media.stop()
            return 71
        }

        var webhooks: WebhookNotifier?
        if !options.webhookURLs.isEmpty, let signer = options.webhookSigner {
            var configuration = WebhookNotifier.Configuration(urls: options.webhookURLs, key: signer.key, secret: signer.secret)
            configuration.policy.giveUpAfter = options.webhookRetryFor
            configuration.capacity = options.webhookQueue
            let notifier = WebhookNotifier(
                configuration,
                log: ServerLog(minimum: options.effectiveLogLevel, format: options.logFormat, secrets: Array(options.keys.values))
            )
            signaling.service.attachWebhooks(notifier)
            webhooks = notifier
        }

        serviceSlot.service.withLock { $0 = signaling.service }
        if let recorder { signaling.service.attachRecorder(recorder) }
        media.onTransportEnded { participant, _, failed in
            signaling.service.transportFailed(participant, failed: failed, now: MonotonicClock.now())
        }
        media.onMediaEvent { event in signaling.service.mediaEvent(event) }

        // A wildcard listener is not an address to open: show one this
        // machine answers on (its first announced media address of the
        // listener's family), and say that every address works.
        let announced = media.endpoint.workers.first?.map { SocketAddress($0.address) } ?? []
        func reachable(_ listener: SocketAddress) -> SocketAddress {
            guard listener.isWildcard,
                let host = announced.first(where: { listener.family == .v6 || $0.family == listener.family })
            else { return listener }
            return SocketAddress(ip: host.ip, port: listener.port) ?? listener
        }
        let signalingAddress = reachable(signaling.localAddress)
        let http = "http://\(signalingAddress)"
        print("swiftlet \(SwiftletVersion.string) serving\(options.dev ? " in dev mode (loopback only)" : "")")
        if signaling.localAddress.isWildcard {
            print("  HTTP listens on  \(signaling.localAddress) (every address; one of them below)")
        }
        print("  open in a browser \(http)/   (a room; open it in two tabs)   \(http)/call   (one-to-one calls)")
        print("  room WebSocket   ws://\(signalingAddress)/rtc")
        print("  health           \(http)/healthz   readiness \(http)/readyz")
        print("  metrics          \(http)/metrics")
        print("  WHIP / WHEP      \(http)/whip/<room>   \(http)/whep/<room>[/<identity>]")
        if let listener = signaling.secureLocalAddress, let tlsSlot, let tlsFiles {
            let secure = reachable(listener)
            let context = tlsSlot.current
            print("  HTTPS            https://\(secure)/   room WebSocket wss://\(secure)/rtc   (SIGHUP reloads the certificate)")
            print(
                "  TLS certificate  \(tlsFiles.certificate)\(tlsFiles.generated ? "   (self-signed, generated now: curl --cacert it)" : "")"
            )
            print("  TLS SPKI sha256  \(ServeTLS.spki(context))   (chromium --ignore-certificate-errors-spki-list=<this>)")
        }
        for (address, candidates) in zip(media.localAddresses, media.endpoint.workers) {
            let announced = candidates.filter { $0.transport == .udp }.map { SocketAddress($0.address).description }
            print("  media worker on udp \(address), announcing \(announced.joined(separator: " "))")
        }
        for (address, candidates) in zip(media.tcpAddresses, media.endpoint.workers) {
            let announced = candidates.filter { $0.transport == .tcpPassive }.map { SocketAddress($0.address).description }
            print("  media worker on tcp \(address) (ICE-TCP), announcing \(announced.joined(separator: " "))")
        }
        if let recorder {
            let rooms = recorder.options.autoRecordRooms
            print(
                "  recording        to \(recorder.options.directory)/<room>/ (WebM)\(rooms.isEmpty ? "" : ", rooms \(rooms.joined(separator: ","))")"
            )
        }
        if let turn {
            print("  TURN             \(turn.urls.joined(separator: "   "))   (relays only to this node's media)")
        }
        var cluster: ClusterAgent?
        if let redis = options.redis {
            let agent = ServeCluster.start(
                options, endpoint: redis, httpAddress: http, media: media, signaling: signaling, loads: loads,
                into: clusterSlot)
            cluster = agent
            print("  cluster          node \(agent.record.id) on \(redis)   (record every 2 s, live for 6 s)")
        }
        for warning in media.addresses.warnings { print("  warning: \(warning)") }
        if options.socketBuffers != .kernelDefaults, let got = media.socketBuffers.first {
            let asked = options.socketBuffers
            // The kernel caps a size at net.core.rmem_max / wmem_max for a
            // process without CAP_NET_ADMIN: say so, with the fix.
            if let got, got.receive < asked.receive || got.send < asked.send {
                print(
                    "  warning: UDP socket buffers are \(got.receive) / \(got.send) bytes (receive / send), not the \(asked.receive) / \(asked.send) asked for: raise net.core.rmem_max and net.core.wmem_max (sysctl) or run with CAP_NET_ADMIN"
                )
            } else if got == nil {
                print("  warning: the kernel refused the UDP socket buffer sizes; media sockets keep its defaults")
            }
        }
        print("  configuration (flag > environment > config file > default):")
        print(ServeOptions.parser.effectiveConfiguration(parsed), terminator: "")
        print("  DTLS certificate \(certificate.fingerprint(.sha256).sdpValue)")
        if options.dev {
            print("  dev API key 'devkey', secret 'devsecret'; a token: swiftlet token --dev --room demo --identity alice")
        }
        if options.dev {
            print("  dev tokens       \(http)/dev/token?room=<room>&identity=<name>   (the page fetches them)")
        }
        print("  stop with Ctrl-C or SIGTERM (drains up to \(options.drainSeconds) s; a second one stops at once)")
        fflush(nil)

        var received: Int32 = 0
        sigwait(&signals, &received)
        let reload = {
            if let tlsFiles, let tlsSlot { ServeTLS.reload(tlsFiles, into: tlsSlot) }
        }
        while received == SIGHUP {
            reload()
            sigwait(&signals, &received)
        }
        // Draining: the cluster places no new room here from the next
        // refresh (2 s) on; the record goes when the drain is over.
        cluster?.setDraining(true)
        let status = ServeDrain.run(
            after: received, seconds: options.drainSeconds, signaling: signaling, media: media, recorder: recorder,
            reload: reload)
        turn?.service.stop()
        // The drain's last events (participants left, rooms finished):
        // delivered for up to 2 s more, then given up.
        webhooks?.finish(within: .seconds(2))
        // Off the cluster at once: the others stop placing rooms here.
        cluster?.stop()
        if let tlsFiles { ServeTLS.cleanUp(tlsFiles) }
        // The last lines (drain, session closes) are still queued: bounded,
        // so a stderr nobody reads cannot hold the exit.
        LogWriter.standardError.flush(timeout: .seconds(2))
        return status
    }
}
