import DTLS
import Foundation
import MediaWorker
import NetIO
import Rooms
import Signaling
import SignalingServer
import TLS
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// `swiftlet serve`: starts the media plane (one UDP worker per core, each
/// with its own port) and runs until SIGTERM or SIGINT, then stops the
/// workers and exits 0. Room signalling (HTTP, WebSocket, WHIP/WHEP) is
/// the next layer; until it lands no peer can be admitted, and the server
/// says so on start.
enum ServeCommand {
    static func run(_ arguments: [String]) -> Int32 {
        let options: ServeOptions
        do {
            options = try ServeOptions.parse(arguments, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandleStderr.write("swiftlet serve: \(error)\n")
            return 64
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
        do {
            media = try MediaPlane(
                count: count, bindIP: options.mediaBind, firstPort: options.udpPort,
                announcedIP: options.announcedIP, certificate: certificate)
        } catch {
            FileHandleStderr.write("swiftlet serve: cannot bind the media ports from \(options.udpPort): \(error)\n")
            return 71
        }

        let signaling: SignalingServer
        do {
            signaling = try SignalingServer(
                bindingTo: options.httpAddress, secure: tlsSlot.map { (options.httpsAddress, $0) },
                verifier: AccessTokenVerifier(keys: options.keys),
                rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: media.endpoint),
                media: { media.post($0) }, mediaMetrics: { MediaMetrics.prometheus(media.snapshots()) },
                log: ServerLog(minimum: options.dev ? .debug : .info),
                devTokens: options.dev ? DevTokenIssuer(key: ServeOptions.devKey, secret: ServeOptions.devSecret) : nil)
        } catch {
            FileHandleStderr.write(
                "swiftlet serve: cannot listen on http \(options.httpAddress)\(options.servesTLS ? " or https \(options.httpsAddress)" : ""): \(error)\n"
            )
            media.stop()
            return 71
        }

        media.onTransportFailed { participant, _ in signaling.service.transportFailed(participant, now: MonotonicClock.now()) }
        media.onMediaEvent { event in signaling.service.mediaEvent(event) }

        let http = "http://\(signaling.localAddress)"
        print("swiftlet \(SwiftletVersion.string) serving\(options.dev ? " in dev mode (loopback only)" : "")")
        print("  open in a browser \(http)/   (a room; open it in two tabs)   \(http)/call   (one-to-one calls)")
        print("  room WebSocket   ws://\(signaling.localAddress)/rtc")
        print("  health           \(http)/healthz   readiness \(http)/readyz")
        print("  metrics          \(http)/metrics")
        print("  WHIP / WHEP      \(http)/whip/<room>   \(http)/whep/<room>[/<identity>]")
        if let secure = signaling.secureLocalAddress, let tlsSlot, let tlsFiles {
            let context = tlsSlot.current
            print("  HTTPS            https://\(secure)/   room WebSocket wss://\(secure)/rtc   (SIGHUP reloads the certificate)")
            print(
                "  TLS certificate  \(tlsFiles.certificate)\(tlsFiles.generated ? "   (self-signed, generated now: curl --cacert it)" : "")"
            )
            print("  TLS SPKI sha256  \(ServeTLS.spki(context))   (chromium --ignore-certificate-errors-spki-list=<this>)")
        }
        for address in media.localAddresses { print("  media worker on udp \(address)") }
        print("  DTLS certificate \(certificate.fingerprint(.sha256).sdpValue)")
        if options.dev {
            print("  dev API key 'devkey', secret 'devsecret'; a token: swiftlet token --dev --room demo --identity alice")
        }
        if options.dev {
            print("  dev tokens       \(http)/dev/token?room=<room>&identity=<name>   (the page fetches them)")
        }
        print("  not built yet: simulcast layer selection (see docs/ARCHITECTURE.md)")
        print("  stop with Ctrl-C or SIGTERM")
        fflush(nil)

        var received: Int32 = 0
        sigwait(&signals, &received)
        while received == SIGHUP {
            if let tlsFiles, let tlsSlot { ServeTLS.reload(tlsFiles, into: tlsSlot) }
            sigwait(&signals, &received)
        }
        // Drain: no new joins or connections; sessions go on until they end
        // or the deadline passes (a second signal cuts it short).
        print("swiftlet: \(received == SIGTERM ? "SIGTERM" : "SIGINT"): draining up to \(options.drainSeconds) s")
        fflush(nil)
        signaling.drain()
        let deadline = MonotonicClock.now() + .seconds(options.drainSeconds)
        var pending = sigset_t()
        while signaling.service.snapshot.participants > 0, MonotonicClock.now() < deadline {
            sigpending(&pending)
            if sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1 { break }
            usleep(100_000)
        }
        signaling.stop()
        media.stop()
        if let tlsFiles { ServeTLS.cleanUp(tlsFiles) }
        print("swiftlet: stopped")
        fflush(nil)
        return 0
    }
}
