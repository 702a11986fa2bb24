import ICE
import SFUTesting
import STUN
import Wire

/// Fixed credentials so failures print the same values every run.
enum Creds {
    static let client = ICECredentials(ufrag: "clnt", password: "clientpasswordclientpass")
    static let server = ICECredentials(ufrag: "srvr", password: "serverpasswordserverpass")
    static let client2 = ICECredentials(ufrag: "cln2", password: "clientpasswordclientpas2")
    static let server2 = ICECredentials(ufrag: "srv2", password: "serverpasswordserverpas2")
}

enum Addr {
    static let server = TransportAddress(ipv4: 10, 0, 0, 1, port: 3478)
    static let client = TransportAddress(ipv4: 192, 168, 1, 10, port: 50000)
    static let clientAfterHandover = TransportAddress(ipv4: 172, 16, 0, 7, port: 41000)
    static let stranger = TransportAddress(ipv4: 203, 0, 113, 9, port: 6666)
}

struct TimedEvent: Hashable, CustomStringConvertible {
    var at: Instant
    var event: ICEEvent
    var description: String { "\(at): \(event)" }
}

func ms(_ base: Instant, _ milliseconds: Int64) -> Instant { base + .milliseconds(milliseconds) }

/// A check as a browser would send it to the SFU: USERNAME
/// `serverUfrag:clientUfrag`, MESSAGE-INTEGRITY under `password`.
func clientCheck(
    id: TransactionID = TransactionID(high: 1, low: 2), username: String = "srvr:clnt",
    password: String = Creds.server.password, useCandidate: Bool = false,
    control: ICEControlAttribute = .controlling(tieBreaker: 7), priority: UInt32 = 0x6E00_1EFF
) -> [UInt8] {
    (try? STUNMessageBuilder.bindingRequest(
        transactionID: id, username: username, priority: priority, control: control,
        useCandidate: useCandidate, key: Array(password.utf8))) ?? []
}

/// A full agent (client side) talking to a lite agent (server side) over an
/// in-memory network on a virtual clock.
struct Harness {
    var clock = VirtualClock()
    var net = InMemoryNetwork(seed: 3, delay: .milliseconds(10))
    var full: ICEAgent
    var lite: ICELiteAgent
    var fullEvents: [TimedEvent] = []
    var liteEvents: [TimedEvent] = []
    /// Invariant violations: the lite agent named an address selected or
    /// validated that had not (yet) sent a valid check, or selected one
    /// that never sent a valid nominated one.
    var violations: [String] = []
    private var validSources: Set<TransportAddress> = []
    private var nominatedSources: Set<TransportAddress> = []
    let start: Instant

    init(
        fullConfiguration: ICEAgent.Configuration = ICEAgent.Configuration(tieBreaker: 42, randomSeed: 7),
        startChecks: Bool = true
    ) {
        start = clock.now
        lite = ICELiteAgent(localCredentials: Creds.server, remoteCredentials: Creds.client, now: clock.now)
        full = ICEAgent(localCredentials: Creds.client, configuration: fullConfiguration)
        full.addLocalCandidate(.host(Addr.client))
        full.addRemoteCandidate(.host(Addr.server))
        full.endOfCandidates()
        if startChecks { full.setRemoteCredentials(Creds.server, now: clock.now) }
    }

    mutating func drain() {
        while let t = full.pollTransmit() { net.send(t.bytes, from: t.from, to: t.to, now: clock.now) }
        while let t = lite.pollTransmit() { net.send(t.bytes, from: Addr.server, to: t.to, now: clock.now) }
        while let e = full.pollEvent() { fullEvents.append(TimedEvent(at: clock.now, event: e)) }
        while let e = lite.pollEvent() { liteEvents.append(TimedEvent(at: clock.now, event: e)) }
        if let s = lite.selectedAddress, !nominatedSources.contains(s) { violations.append("\(clock.now): selected \(s)") }
        for a in [Addr.client, Addr.clientAfterHandover, Addr.stranger]
        where lite.isValidatedAddress(a) && !validSources.contains(a) {
            violations.append("\(clock.now): validated \(a)")
        }
    }

    /// Processes everything due now: deadlines and arrived datagrams.
    mutating func step() {
        for _ in 0..<10_000 {
            drain()
            let now = clock.now
            if let d = full.nextDeadline, d <= now { full.handleTimeout(now: now); drain() }
            if let d = lite.nextDeadline, d <= now { lite.handleTimeout(now: now); drain() }
            if let d = net.receive(now: now) { deliver(d); continue }
            if full.nextDeadline.map({ $0 <= now }) ?? false { continue }
            return
        }
        violations.append("step did not settle at \(clock.now)")
    }

    mutating func deliver(_ d: InMemoryNetwork.Datagram) {
        if d.to == Addr.server {
            noteCheck(d)
            lite.handleSTUN(d.bytes, from: d.from, now: clock.now)
        } else if full.localCandidates.contains(where: { $0.address == d.to }) {
            full.handleSTUN(d.bytes, from: d.from, to: d.to, now: clock.now)
        }
        drain()
    }

    /// Records, independently of the agent, which sources sent checks that a
    /// correct lite agent must accept.
    private mutating func noteCheck(_ d: InMemoryNetwork.Datagram) {
        guard let m = try? STUNMessage.parse(d.bytes), m.type == .bindingRequest, m.verifyFingerprint(in: d.bytes),
            m.verifyIntegrity(key: lite.localCredentials.key, in: d.bytes), m.iceControlled == nil,
            m.username?.hasPrefix(lite.localCredentials.ufrag + ":") == true
        else { return }
        validSources.insert(d.from)
        if m.useCandidate, m.iceControlling != nil { nominatedSources.insert(d.from) }
    }

    mutating func run(for duration: Duration) { run(until: clock.now + duration) }

    mutating func run(until end: Instant) {
        step()
        while true {
            let next = [full.nextDeadline, lite.nextDeadline, net.nextDelivery].compactMap { $0 }.min()
            guard let n = next, n <= end else { break }
            clock.advance(to: n)
            step()
        }
        clock.advance(to: end)
        step()
    }
}
