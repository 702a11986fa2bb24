import DTLS
import SFUTesting
import Wire

/// A fixed wall-clock issuance time: 2025-06-15T15:06:40Z.
let issuedAt: Int64 = 1_750_000_000

func makeCertificate() throws -> DTLSCertificate {
    try DTLSCertificate.generate(issuedAt: issuedAt)
}

/// Which way a datagram travels.
enum Direction: Equatable { case clientToServer, serverToClient }

/// A client and a server joined by an in-memory network on a virtual clock.
/// `drop` decides, per datagram, whether the network loses it.
struct Link: ~Copyable {
    var client: DTLSEndpoint
    var server: DTLSEndpoint
    let clientCertificate: DTLSCertificate
    let serverCertificate: DTLSCertificate
    var clock = VirtualClock()
    var clientEvents: [DTLSEvent] = []
    var serverEvents: [DTLSEvent] = []
    /// Every datagram sent, with its direction and send time, dropped or not.
    var sent: [(direction: Direction, at: Instant, bytes: [UInt8])] = []
    var drop: (Direction, Int, [UInt8]) -> Bool = { _, _, _ in false }

    init(
        clientConfiguration: DTLSConfiguration = DTLSConfiguration(),
        serverConfiguration: DTLSConfiguration = DTLSConfiguration(),
        clientExpects: [CertificateFingerprint]? = nil,
        serverExpects: [CertificateFingerprint]? = nil
    ) throws {
        let clientCertificate = try makeCertificate()
        let serverCertificate = try makeCertificate()
        let client = try DTLSEndpoint(
            role: .client, certificate: clientCertificate,
            expectedPeerFingerprints: clientExpects ?? [serverCertificate.fingerprint(.sha256)],
            configuration: clientConfiguration)
        let server = try DTLSEndpoint(
            role: .server, certificate: serverCertificate,
            expectedPeerFingerprints: serverExpects ?? [clientCertificate.fingerprint(.sha256)],
            configuration: serverConfiguration)
        self.clientCertificate = clientCertificate
        self.serverCertificate = serverCertificate
        self.client = client
        self.server = server
    }

    /// Moves datagrams both ways until neither side has anything to send.
    mutating func settle() {
        var moved = true
        while moved {
            moved = false
            while let datagram = client.pollTransmit() {
                moved = true
                let index = sent.count
                sent.append((.clientToServer, clock.now, datagram))
                if !drop(.clientToServer, index, datagram) { server.handle(datagram: datagram, now: clock.now) }
            }
            while let datagram = server.pollTransmit() {
                moved = true
                let index = sent.count
                sent.append((.serverToClient, clock.now, datagram))
                if !drop(.serverToClient, index, datagram) { client.handle(datagram: datagram, now: clock.now) }
            }
        }
        collectEvents()
    }

    mutating func collectEvents() {
        while let event = client.pollEvent() { clientEvents.append(event) }
        while let event = server.pollEvent() { serverEvents.append(event) }
    }

    /// Advances to the earlier deadline of the two, fires timers, settles.
    /// Returns false when neither side has a deadline.
    mutating func runUntilNextDeadline() -> Bool {
        let deadlines = [client.nextDeadline, server.nextDeadline].compactMap { $0 }
        guard let next = deadlines.min() else { return false }
        clock.advance(to: next)
        client.handleTimeout(now: clock.now)
        server.handleTimeout(now: clock.now)
        settle()
        return true
    }

    mutating func handshake() {
        client.start(now: clock.now)
        settle()
    }
}

extension DTLSEvent {
    var connected: DTLSConnected? {
        if case .connected(let c) = self { return c }
        return nil
    }
}

/// Deterministic xorshift64 for garbage and mutations (no Foundation random).
struct XorShift {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
}

/// DTLS record header fields (RFC 6347 section 4.1).
struct RecordHeader: Equatable {
    let contentType: UInt8
    let version: UInt16
    let epoch: UInt16
    let length: Int

    init?(_ datagram: [UInt8]) {
        guard datagram.count >= 13 else { return nil }
        contentType = datagram[0]
        version = UInt16(datagram[1]) << 8 | UInt16(datagram[2])
        epoch = UInt16(datagram[3]) << 8 | UInt16(datagram[4])
        length = Int(datagram[11]) << 8 | Int(datagram[12])
    }

    /// The handshake message type of the first record's first fragment
    /// (RFC 6347 section 4.2.2), if it is an unencrypted handshake record.
    static func handshakeType(_ datagram: [UInt8]) -> UInt8? {
        guard datagram.count > 13, datagram[0] == 22, datagram[3] == 0, datagram[4] == 0 else { return nil }
        return datagram[13]
    }
}
