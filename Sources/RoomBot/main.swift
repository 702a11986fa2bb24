import BotMedia
import DTLS
import Foundation
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
let options: BotOptions
do {
    options = try BotOptions.parse(arguments)
} catch {
    writeError("roombot: \(error)\n")
    exit(64)
}
let server: SocketAddress
do {
    // getaddrinfo's answers, IPv4 and IPv6 in RFC 6724 order.
    let addresses = try SocketAddress.resolve(host: options.host, port: options.port)
    server = ServerEndpoint.firstReachable(addresses) ?? addresses[0]
} catch {
    writeError("roombot: --url: \(error)\n")
    exit(68)
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
let defaultPort: UInt16 = options.secure ? 443 : 80
let bracketed = options.host.contains(":") ? "[\(options.host)]" : options.host
let endpoint = ServerEndpoint(
    address: server, hostHeader: options.port == defaultPort ? bracketed : "\(bracketed):\(options.port)",
    serverName: options.host, tls: clientTLS)
guard let bindIP = options.bind ?? routeAddress(to: server) else {
    writeError("roombot: no route to \(server); give --bind IP\n")
    exit(70)
}
let certificate: DTLSCertificate
do {
    certificate = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970))
} catch {
    writeError("roombot: certificate: \(error)\n")
    exit(70)
}

signal(SIGPIPE, SIG_IGN)
signal(SIGINT) { _ in stopRequested.store(true, ordering: .relaxed) }
signal(SIGTERM) { _ in stopRequested.store(true, ordering: .relaxed) }

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
let context = BotContext(endpoint: endpoint, options: options, bindIP: bindIP, certificate: certificate, media: media)
context.clock = (media as? ClipMedia)?.clock
let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)
let bots = options.plan.enumerated().map { index, entry in
    let record = BotRecord(role: entry.role, room: entry.room, identity: "roombot-\(runID)-\(entry.role.rawValue)-\(index + 1)")
    record.tracksExpected = options.tracksExpected(for: entry.role)
    return Bot(record: record, context: context)
}
let start = MonotonicClock.now()
let isTerminal = isatty(1) == 1
let loop = BotLoop(context: context, bots: bots) { now in
    let records = bots.map(\.record)
    let joined = records.filter { $0.joinedAt != nil }.count
    let connected = records.filter(\.isConnected).count
    let announced = records.reduce(0) { $0 + $1.tracksAnnounced }
    let flowing = records.reduce(0) { $0 + $1.tracksFlowing }
    var packets: UInt64 = 0
    var lost: Int64 = 0
    var mbps = 0.0
    for r in records {
        for t in r.tracks.values {
            packets += t.reception.packetsReceived
            lost += max(t.reception.cumulativeLost, 0)
            mbps += t.bitsPerSecond / 1e6
        }
    }
    let errors = records.reduce(0) { $0 + $1.errors.values.reduce(0, +) }
    let loss = packets + UInt64(lost) > 0 ? Double(lost) / Double(packets + UInt64(lost)) * 100 : 0
    let line = String(
        format: "[%5.1fs] bots %d/%d joined, %d connected, tracks %d announced %d flowing, %.2f Mbps, loss %.2f%%, errors %d",
        Double((now - start).nanoseconds) / 1e9, joined, records.count, connected, announced, flowing, mbps, loss, errors)
    if isTerminal {
        print("\r\u{1B}[2K" + line, terminator: "")
        fflush(nil)
    } else {
        print(line)
    }
}
loop.run(start: start)
let interrupted = stopRequested.load(ordering: .relaxed)
let elapsed = Double((MonotonicClock.now() - start).nanoseconds) / 1e9
loop.shutdown()
if isTerminal { print("") }

let report = BotReport(records: bots.map(\.record), options: options, durationSeconds: elapsed, interrupted: interrupted)
print(report.table)
let (status, reasons) = report.exitStatus(options)
for r in reasons { print("roombot: \(r)") }
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
