import BotMedia
import DTLS
import Foundation
import HTTPClient
import NetIO
import TLS
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// roombot: parse, start the bots on one loop, print progress, then the
/// summary; the exit status says whether the run met its thresholds
/// (see `BotOptions.usage`).
func writeError(_ text: String) {
    var message = text
    message.withUTF8 { p in _ = write(2, p.baseAddress, p.count) }
}

/// The local IP the kernel would use towards `server`: connect a UDP
/// socket (no packet is sent) and read its name.
func routeAddress(to server: SocketAddress) -> String? {
    let fd = socket(server.family == .v4 ? AF_INET : AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var storage = server.storage
    let rc = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, server.length) }
    }
    guard rc == 0 else { return nil }
    var local = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let ok = withUnsafeMutablePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard ok == 0 else { return nil }
    return SocketAddress(storage: local)?.ip
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(BotOptions.usage)
    exit(arguments.isEmpty ? 64 : 0)
}
if arguments.contains("--version") {
    print("roombot \(BotOptions.version)")
    exit(0)
}
let options: BotOptions
do {
    options = try BotOptions.parse(arguments)
} catch {
    writeError("roombot: \(error)\n")
    exit(64)
}
/// Every --url resolved before any bot starts: getaddrinfo's answers, IPv4
/// and IPv6 in RFC 6724 order, the first that takes a TCP connection.
var resolved: [SocketAddress] = []
for url in options.servers {
    do {
        let addresses = try SocketAddress.resolve(host: url.host, port: url.port)
        resolved.append(ServerEndpoint.firstReachable(addresses) ?? addresses[0])
    } catch {
        writeError("roombot: --url \(url.text): \(error)\n")
        exit(68)
    }
}
var clientTLS: TLSContext?
if options.secure {
    do {
        if let caFile = options.caFile {
            let pem: String
            do { pem = try String(contentsOfFile: caFile, encoding: .utf8) } catch {
                writeError("roombot: --ca-file \(caFile): \(error.localizedDescription)\n")
                exit(66)
            }
            clientTLS = try TLSContext.client(trust: .certificates(pem: pem))
        } else if options.insecure {
            writeError(
                "roombot: WARNING: --insecure: the server's TLS certificate is NOT verified; "
                    + "anyone on the path can read and change the signalling\n")
            clientTLS = try TLSContext.client(trust: .insecureNoVerification)
        } else {
            clientTLS = try TLSContext.client(trust: .system)
        }
    } catch {
        writeError("roombot: \(error)\n")
        exit(66)
    }
}
var servers: [BotServer] = []
for (url, address) in zip(options.servers, resolved) {
    guard let bindIP = options.bind ?? routeAddress(to: address) else {
        writeError("roombot: no route to \(address); give --bind IP\n")
        exit(70)
    }
    let endpoint = ServerEndpoint(
        address: address, hostHeader: url.hostHeader, serverName: url.host, tls: url.secure ? clientTLS : nil)
    servers.append(BotServer(url: url, endpoint: endpoint, bindIP: bindIP))
}
let certificate: DTLSCertificate
do {
    certificate = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970))
} catch {
    writeError("roombot: certificate: \(error)\n")
    exit(70)
}

signal(SIGPIPE, SIG_IGN)
// A parent may start us with these blocked (a mask is inherited across
// exec): then Ctrl-C or a supervisor's SIGTERM would never reach the loop.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
sigprocmask(SIG_UNBLOCK, &stopSignals, nil)
signal(SIGINT) { s in
    stopSignal.store(s, ordering: .relaxed)
    stopRequested.store(true, ordering: .relaxed)
}
signal(SIGTERM) { s in
    stopSignal.store(s, ordering: .relaxed)
    stopRequested.store(true, ordering: .relaxed)
}

let media: BotMediaFactory
if options.noMedia {
    media = NoMedia()
} else {
    do {
        let library = try ClipLibrary.load(options, log: writeError)
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let ntp = NTPClock(
            unixNanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec), epoch: MonotonicClock.now())
        media = ClipMedia(library: library, clock: ntp)
    } catch {
        writeError("roombot: media: \(error)\n")
        exit(70)
    }
}
/// One context per loop (`--threads`): buffers and epoll registration are
/// per thread; the media factory and its clips are shared read-only.
let makeContext = { (_: Int) -> BotContext in
    let context = BotContext(servers: servers, options: options, certificate: certificate, media: media)
    context.log = writeError
    context.clock = (media as? ClipMedia)?.clock
    return context
}
let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)
var subscribingIndex = 0
let firstContext = makeContext(0)
let bots = options.plan.enumerated().map { index, entry in
    let record = BotRecord(
        role: entry.role, room: entry.room, identity: "roombot-\(runID)-\(entry.role.rawValue)-\(index + 1)",
        serverIndex: options.serverIndex(ofBot: index))
    record.tracksExpected = options.tracksExpected(for: entry.role)
    if entry.role.subscribes {
        record.light = options.isLight(subscriberIndex: subscribingIndex) && !options.noMedia
        subscribingIndex += 1
    }
    return Bot(record: record, context: firstContext)
}
let start = MonotonicClock.now()
let isTerminal = isatty(1) == 1
let loops = BotLoopGroup(
    bots: bots, threads: options.threads, ramp: options.ramp, start: start,
    makeContext: { $0 == 0 ? firstContext : makeContext($0) }
) { sample, now in
    let line = LiveProgress.line(sample, elapsedSeconds: Double((now - start).nanoseconds) / 1e9)
    if isTerminal {
        print("\r\u{1B}[2K" + line, terminator: "")
        fflush(nil)
    } else {
        // Line by line, so a pipe (tee, a test) sees each as it comes.
        print(line)
        fflush(nil)
    }
}
// Each loop shuts down (leave, close, close_notify) on its own thread.
let end = loops.run(start: start)
let interrupted = stopRequested.load(ordering: .relaxed)
let elapsed = Double((end - start).nanoseconds) / 1e9
if isTerminal { print("") }

// A signal before --duration ended cuts the run short; with --duration 0
// a signal is the planned end.
let signalNumber = stopSignal.load(ordering: .relaxed)
let report = BotReport(
    records: bots.map(\.record), options: options, end: end, durationSeconds: elapsed, interrupted: interrupted,
    cutShortBy: interrupted && options.duration > 0 && signalNumber != 0 ? signalNumber : nil)
print(report.table)
fflush(nil)
let (status, reasons) = report.exitStatus(options)
for r in reasons { writeError("roombot: \(r)\n") }
if let path = options.jsonPath {
    do {
        let data = try JSONSerialization.data(
            withJSONObject: report.json(options), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try data.write(to: URL(fileURLWithPath: path))
    } catch {
        writeError("roombot: cannot write \(path): \(error)\n")
        exit(70)
    }
}
exit(status)
