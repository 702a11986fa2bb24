import BotMedia
import CShim
import DTLS
import HTTPClient
import NetIO
import Synchronization
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Set by SIGINT/SIGTERM; the loop stops at its next round.
let stopRequested = Atomic<Bool>(false)
/// Which signal asked to stop (SIGINT or SIGTERM), 0 for none.
let stopSignal = Atomic<Int32>(0)

/// One `--url`, resolved before the loop starts: how its bots reach the
/// server's signalling (plain or TLS) and the local IP their media
/// sockets bind to.
struct BotServer {
    let url: ServerURL
    let endpoint: ServerEndpoint
    let bindIP: String
}

/// What every bot shares: the servers, the certificate, the media factory,
/// the loop's registration and its buffers (one thread, so one of each).
final class BotContext {
    let options: BotOptions
    /// One per `--url`, in its order; a bot uses `record.serverIndex`.
    let servers: [BotServer]
    let certificate: DTLSCertificate
    let media: BotMediaFactory
    /// Wall-clock NTP shared by every bot (SRs, abs-capture-time).
    var clock: NTPClock?
    let receiveBatch = DatagramBatch(capacity: 32)
    var sendBuffer = [UInt8](repeating: 0, count: 1500)
    /// Set by the loop: registers a transport's socket with epoll.
    var register: (BotTransport, Bot) -> Void = { _, _ in }
    /// Set by the loop: removes a transport the bot dropped (a rejoin)
    /// from epoll; its socket closes with it.
    var mediaUnregistrar: (BotTransport) -> Void = { _ in }
    /// Set by the loop: registers a bot's `http` exchange with epoll.
    var httpRegistrar: (Bot) -> Void = { _ in }
    /// Set by the loop: registers a bot's (new) `signaling` socket.
    var signalingRegistrar: (Bot) -> Void = { _ in }
    /// Where notes go while the run is on (stderr).
    var log: (String) -> Void = { _ in }
    /// Only the first failed connect of the process is printed as it
    /// happens; the rest are in the summary.
    var connectFailureLogged = false
    /// Likewise the first room WebSocket that dropped, and the first that
    /// joined again.
    var dropLogged = false
    var rejoinLogged = false

    init(servers: [BotServer], options: BotOptions, certificate: DTLSCertificate, media: BotMediaFactory) {
        self.options = options
        self.servers = servers
        self.certificate = certificate
        self.media = media
    }

    func register(_ transport: BotTransport, for bot: Bot) { register(transport, bot) }
    func unregister(_ transport: BotTransport) { mediaUnregistrar(transport) }
    func registerHTTP(_ bot: Bot) { httpRegistrar(bot) }
    func registerSignaling(_ bot: Bot) { signalingRegistrar(bot) }
}

/// The single-threaded loop that drives every bot: one epoll set with each
/// bot's TCP socket and UDP sockets, bots started at the ramp rate, timers
/// from the transports, a progress line every second, and the stop after
/// `--duration` or a signal. One thread serves hundreds of bots: the
/// control path is light, and media (when BotMedia lands) is a few hundred
/// packets per second per bot, each one syscall.
final class BotLoop {
    enum Endpoint {
        case signaling(Bot)
        case media(Bot, BotTransport)
        case http(Bot, HTTPExchange)
    }

    let context: BotContext
    let bots: [Bot]
    private let epoll: Int32
    private var endpoints: [UInt64: Endpoint] = [:]
    /// Each registered media transport's tag, to unregister it.
    private var mediaTags: [ObjectIdentifier: UInt64] = [:]
    private var watchingWritable: [UInt64: Bool] = [:]
    private var nextTag: UInt64 = 1
    private let progress: (Instant) -> Void
    /// Bots to tick this round (a socket of theirs was ready, they were
    /// started, or a timer of theirs is due), by slot, each once.
    private var touched: [Int]
    private var isTouched: [Bool]
    /// Each bot's `nextDeadline` as of its last tick (`Int64.max`: none).
    /// A round ticks only the touched bots: with hundreds of light viewers
    /// on one thread, ticking and asking every bot each round cost more
    /// than receiving the packets (issue #14).
    private var dueNanoseconds: [Int64]
    /// Bots started per second by this loop: `--ramp` shared among the
    /// loops (`BotLoopGroup`).
    let ramp: Double

    init(context: BotContext, bots: [Bot], ramp: Double? = nil, progress: @escaping (Instant) -> Void) {
        self.context = context
        self.bots = bots
        for (slot, bot) in bots.enumerated() { bot.loopSlot = slot }
        // Every bot is ticked in the first round.
        touched = Array(bots.indices)
        isTouched = [Bool](repeating: true, count: bots.count)
        dueNanoseconds = [Int64](repeating: .max, count: bots.count)
        self.ramp = ramp ?? context.options.ramp
        self.progress = progress
        epoll = swiftlet_epoll_create()
        context.register = { [unowned self] transport, bot in
            let tag = self.nextTag
            self.nextTag += 1
            self.endpoints[tag] = .media(bot, transport)
            self.mediaTags[ObjectIdentifier(transport)] = tag
            _ = swiftlet_epoll_add_readable(self.epoll, transport.descriptor, tag)
        }
        context.mediaUnregistrar = { [unowned self] transport in
            guard let tag = self.mediaTags.removeValue(forKey: ObjectIdentifier(transport)) else { return }
            self.endpoints[tag] = nil
            _ = swiftlet_epoll_remove(self.epoll, transport.descriptor)
        }
        context.httpRegistrar = { [unowned self] bot in
            guard let exchange = bot.http else { return }
            let tag = self.nextTag
            self.nextTag += 1
            self.endpoints[tag] = .http(bot, exchange)
            _ = swiftlet_epoll_add_interest(self.epoll, exchange.descriptor, tag, 1, 1)
        }
        context.signalingRegistrar = { [unowned self] bot in
            guard let s = bot.signaling else { return }
            let tag = self.nextTag
            self.nextTag += 1
            self.endpoints[tag] = .signaling(bot)
            bot.signalingTag = tag
            self.watchingWritable[tag] = true
            _ = swiftlet_epoll_add_interest(self.epoll, s.descriptor, tag, 1, 1)
        }
    }

    deinit { close(epoll) }

    /// Runs until the duration has passed (after every bot started) or a
    /// signal; returns the instant the run started.
    func run(start: Instant) {
        let interval = Duration.nanoseconds(Int64(1e9 / ramp))
        let end = context.options.duration > 0 ? start + .nanoseconds(Int64(context.options.duration * 1e9)) : nil
        var started = 0
        var allGaveUp = false
        var nextStart = start
        var nextProgress = start + .seconds(1)
        var tags = [UInt64](repeating: 0, count: 256)
        var ready = [UInt32](repeating: 0, count: 256)
        while !stopRequested.load(ordering: .relaxed) {
            var now = MonotonicClock.now()
            while started < bots.count, nextStart <= now {
                bots[started].start(now: now)
                touch(bots[started])
                started += 1
                nextStart = nextStart + interval
            }
            if started == bots.count, let end, now >= end { break }
            if allGaveUp, started == bots.count { break }
            var wake = nextProgress
            if started < bots.count { wake = min(wake, nextStart) }
            if touched.isEmpty {
                let due = dueNanoseconds.min() ?? .max
                if due < wake.nanoseconds { wake = Instant(nanoseconds: due) }
            } else {
                wake = now
            }
            let waitNs = max(0, (wake - now).nanoseconds)
            let waitMs = Int32(min((waitNs + 999_999) / 1_000_000, 100))
            let n = tags.withUnsafeMutableBufferPointer { t in
                ready.withUnsafeMutableBufferPointer { r in
                    swiftlet_epoll_wait_ready(epoll, t.baseAddress, r.baseAddress, Int32(t.count), waitMs)
                }
            }
            now = MonotonicClock.now()
            for i in 0..<Int(max(n, 0)) {
                let bits = ready[i]
                switch endpoints[tags[i]] {
                case .signaling(let bot)?:
                    touch(bot)
                    guard let s = bot.signaling else { continue }
                    let events = s.handleReady(
                        readable: bits & SWIFTLET_READY_READABLE != 0, writable: bits & SWIFTLET_READY_WRITABLE != 0,
                        hangup: bits & SWIFTLET_READY_HANGUP != 0)
                    bot.handle(events, now: now)
                    updateInterest(tag: tags[i], client: s)
                case .http(let bot, let exchange)?:
                    touch(bot)
                    dispatchHTTP(bot, exchange, tag: tags[i], bits: bits, now: now)
                case .media(let bot, let transport)?:
                    touch(bot)
                    transport.pump(now: now) { kind, bytes, at in
                        bot.received(kind, bytes, at: at, from: transport)
                    } headerOnly: { bytes, at in
                        bot.receivedHeaderOnly(bytes, at: at)
                    }
                case nil:
                    break
                }
            }
            now = MonotonicClock.now()
            tickTouchedAndDue(now: now)
            if now >= nextProgress {
                // Once a second: asking every bot each round copied each
                // record.
                allGaveUp = started == bots.count && bots.allSatisfy(\.record.gaveUp)
                progress(now)
                nextProgress = nextProgress + .seconds(1)
            }
        }
    }

    /// Leaves cleanly: `leave`, WebSocket close, DTLS close_notify; then
    /// a short grace for the bytes to go out.
    func shutdown() {
        let now = MonotonicClock.now()
        for bot in bots { bot.leave(now: now) }
        let end = now + .milliseconds(300)
        var tags = [UInt64](repeating: 0, count: 256)
        var ready = [UInt32](repeating: 0, count: 256)
        while MonotonicClock.now() < end {
            let n = tags.withUnsafeMutableBufferPointer { t in
                ready.withUnsafeMutableBufferPointer { r in
                    swiftlet_epoll_wait_ready(epoll, t.baseAddress, r.baseAddress, Int32(t.count), 20)
                }
            }
            for i in 0..<Int(max(n, 0)) {
                switch endpoints[tags[i]] {
                case .signaling(let bot)?:
                    if let s = bot.signaling { _ = s.handleReady(readable: true, writable: true, hangup: false) }
                case .http(let bot, let exchange)?:
                    dispatchHTTP(bot, exchange, tag: tags[i], bits: ready[i], now: MonotonicClock.now())
                default: break
                }
            }
        }
    }

    private func touch(_ bot: Bot) {
        let slot = bot.loopSlot
        guard slot >= 0, slot < isTouched.count, !isTouched[slot] else { return }
        isTouched[slot] = true
        touched.append(slot)
    }

    /// Ticks the bots touched this round and those whose deadline has
    /// passed, then keeps each one's next deadline; a bot's signalling
    /// writes queued by its tick set its socket's write interest.
    private func tickTouchedAndDue(now: Instant) {
        let nowNs = now.nanoseconds
        for slot in dueNanoseconds.indices where dueNanoseconds[slot] <= nowNs && !isTouched[slot] {
            isTouched[slot] = true
            touched.append(slot)
        }
        for slot in touched {
            let bot = bots[slot]
            bot.tick(now: now)
            dueNanoseconds[slot] = bot.nextDeadline?.nanoseconds ?? .max
            isTouched[slot] = false
            if let tag = bot.signalingTag, let s = bot.signaling, endpoints[tag] != nil {
                updateInterest(tag: tag, client: s)
            }
        }
        touched.removeAll(keepingCapacity: true)
    }

    private func dispatchHTTP(_ bot: Bot, _ exchange: HTTPExchange, tag: UInt64, bits: UInt32, now: Instant) {
        let outcome = exchange.handleReady(
            readable: bits & SWIFTLET_READY_READABLE != 0, writable: bits & SWIFTLET_READY_WRITABLE != 0,
            hangup: bits & SWIFTLET_READY_HANGUP != 0)
        if let outcome {
            _ = swiftlet_epoll_remove(epoll, exchange.descriptor)
            endpoints[tag] = nil
            if bot.http === exchange { bot.http = nil }
            bot.handleHTTP(outcome, now: now)
        } else if !exchange.wantsWritable {
            _ = swiftlet_epoll_modify_interest(epoll, exchange.descriptor, tag, 1, 0)
        }
    }

    private func updateInterest(tag: UInt64, client: SignalingClient) {
        if client.phase == .closed {
            _ = swiftlet_epoll_remove(epoll, client.descriptor)
            endpoints[tag] = nil
            return
        }
        let want = client.wantsWritable
        guard watchingWritable[tag] != want else { return }
        watchingWritable[tag] = want
        _ = swiftlet_epoll_modify_interest(epoll, client.descriptor, tag, 1, want ? 1 : 0)
    }
}
