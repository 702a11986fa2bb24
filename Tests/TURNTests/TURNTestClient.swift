import SFUTesting
import STUN
import TURN
import Wire

/// Drives a `TURNServer` as one client would, on a virtual clock: builds
/// requests with the long-term credential mechanism and reads answers.
struct TURNHarness {
    static let secret: [UInt8] = Array("test turn secret".utf8)
    static let sfu = TransportAddress(ipv4: 127, 0, 0, 1, port: 10000)
    static let stranger = TransportAddress(ipv4: 127, 0, 0, 1, port: 9)
    static let unixNow: Int64 = 1_800_000_000

    var server: TURNServer
    var clock = VirtualClock()
    var nextRelayPort: UInt16 = 50000
    var openedRelays: [TransportAddress] = []
    var refuseRelays = false
    let credentials = TURNCredentials(secret: secret)

    init(configuration: TURNServerConfiguration = TURNServerConfiguration()) {
        server = TURNServer(
            configuration: configuration, credentials: TURNCredentials(secret: Self.secret),
            policy: TURNPeerPolicy(allowed: [Self.sfu]), nonceKey: Array("nonce key".utf8))
    }

    /// Feeds `bytes` from `client`; returns every output.
    mutating func send(_ bytes: [UInt8], from client: TURNClient, unixSeconds: Int64 = unixNow) -> [TURNOutput] {
        var opened: [TransportAddress] = []
        var port = nextRelayPort
        let refuse = refuseRelays
        server.handleClient(bytes, from: client, now: clock.now, unixSeconds: unixSeconds) { _, even in
            guard !refuse else { return nil }
            if even, port % 2 == 1 { port += 1 }
            let relay = TransportAddress(ipv4: 127, 0, 0, 1, port: port)
            port += 1
            opened.append(relay)
            return relay
        }
        nextRelayPort = port
        openedRelays += opened
        return drain()
    }

    mutating func drain() -> [TURNOutput] {
        var out: [TURNOutput] = []
        while let o = server.pollOutput() { out.append(o) }
        return out
    }

    /// The one message sent to the client, parsed.
    static func response(_ outputs: [TURNOutput]) throws -> (STUNMessage, [UInt8]) {
        let sent = outputs.compactMap { o -> [UInt8]? in
            if case .toClient(_, let b) = o { return b }
            return nil
        }
        guard sent.count == 1 else { throw HarnessError.expectedOneResponse(outputs) }
        return (try STUNMessage.parse(sent[0]), sent[0])
    }

    enum HarnessError: Error { case expectedOneResponse([TURNOutput]) }
}

/// One client's credentials and nonce, building signed requests.
struct TURNTestUser {
    var username: String
    var password: String
    var realm = "swiftlet"
    var nonce: String?

    init(identity: String = "alice", expiry: Int64 = TURNHarness.unixNow + 600) {
        username = "\(expiry):\(identity)"
        password = TURNCredentials(secret: TURNHarness.secret).password(for: username)!
    }

    var key: [UInt8] { STUNMessage.longTermKey(username: username, realm: realm, password: password) }

    /// A request of `method`; `signed` adds USERNAME, REALM, NONCE and
    /// MESSAGE-INTEGRITY; `attributes` adds the method's own first.
    func request(
        _ method: STUNMethod, signed: Bool = true, key override: [UInt8]? = nil,
        _ attributes: (inout STUNMessageBuilder) throws -> Void = { _ in }
    ) rethrows -> [UInt8] {
        var b = STUNMessageBuilder(type: STUNMessageType(method: method, class: .request), transactionID: .random())
        try attributes(&b)
        if signed {
            try? b.appendUsername(username)
            try? b.appendRealm(realm)
            try? b.appendNonce(nonce ?? "none")
            try? b.appendMessageIntegrity(key: override ?? key)
        }
        try? b.appendFingerprint()
        return b.bytes
    }

    static func allocateAttributes(_ b: inout STUNMessageBuilder) {
        try? b.appendRequestedTransport()
    }
}
