import CryptoPrimitives
import STUN
import Wire

/// A TURN server (RFC 8656) for UDP relays, sans-IO: client bytes, peer
/// bytes and `now` in; `TURNOutput` (bytes to a client, bytes from a relay
/// to a peer, relays to close) and the next deadline out. The shell owns
/// the sockets: it passes `openRelay` to bind a relay socket (on an even
/// port when asked: EVEN-PORT) when an Allocate succeeds, and closes it on
/// `.releaseRelay`.
///
/// Authentication is the long-term credential mechanism (RFC 8489
/// section 9.2) with REST-API usernames (`TURNCredentials`): a request
/// without MESSAGE-INTEGRITY gets 401 with REALM and NONCE; a stale NONCE
/// 438 with a fresh one. Nonces are stateless: the issue time and an HMAC
/// of it with the client's address under a per-process key, so a nonce
/// cannot be moved to another client or made younger.
///
/// Relaying is limited to `TURNPeerPolicy` (this node's media addresses):
/// see `TURNServer+Requests.swift`.
package struct TURNServer {
    package let configuration: TURNServerConfiguration
    package var policy: TURNPeerPolicy
    let credentials: TURNCredentials
    let nonceKey: [UInt8]
    var allocations: [TURNClient: TURNAllocation] = [:]
    var clientsByRelay: [TransportAddress: TURNClient] = [:]
    var allocationsByUser: [String: Int] = [:]
    var output: [TURNOutput] = []
    var outputStart = 0
    package internal(set) var counters = Counters()

    package struct Counters: Equatable, Sendable {
        package var malformed = 0
        package var unauthorized = 0
        package var forbidden = 0
        package var quotaRefusals = 0
        package var relayedToPeer = 0
        package var relayedToClient = 0
        package var droppedFromPeer = 0
        package var droppedFromClient = 0
    }

    /// `nonceKey`: random bytes from the shell, kept for the process's life.
    package init(
        configuration: TURNServerConfiguration = TURNServerConfiguration(), credentials: TURNCredentials,
        policy: TURNPeerPolicy, nonceKey: [UInt8]
    ) {
        self.configuration = configuration
        self.credentials = credentials
        self.policy = policy
        self.nonceKey = nonceKey
    }

    package var allocationCount: Int { allocations.count }
    /// The relay addresses open now.
    package var relays: [TransportAddress] { Array(clientsByRelay.keys) }

    /// The next output, oldest first; nil when drained.
    package mutating func pollOutput() -> TURNOutput? {
        guard outputStart < output.count else {
            if !output.isEmpty {
                output.removeAll(keepingCapacity: true)
                outputStart = 0
            }
            return nil
        }
        defer { outputStart += 1 }
        return output[outputStart]
    }

    /// When `handleTimeout` is next due: the earliest allocation expiry.
    package func nextDeadline() -> Instant? { allocations.values.lazy.map(\.expiry).min() }

    /// Expires allocations (their relays are released) and prunes
    /// permissions and channels.
    package mutating func handleTimeout(now: Instant) {
        for (client, allocation) in allocations where allocation.expiry <= now { remove(client) }
        for client in allocations.keys { allocations[client]?.prune(now: now) }
    }

    /// A stream client's connection closed: its allocation goes with it
    /// (RFC 8656 section 3.1: the 5-tuple no longer exists).
    package mutating func clientClosed(_ client: TURNClient) {
        if allocations[client] != nil { remove(client) }
    }

    // MARK: Client input

    /// One datagram (UDP) or one frame from `TURNStreamFramer` (TCP, TLS).
    /// `unixSeconds` is the wall clock, for the credentials' expiry.
    package mutating func handleClient(
        _ bytes: UnsafeRawBufferPointer, from client: TURNClient, now: Instant, unixSeconds: Int64,
        openRelay: (TURNClient, _ evenPort: Bool) -> TransportAddress?
    ) {
        guard let first = bytes.first else { return }
        if ChannelData.isChannelData(firstByte: first) {
            channelDataFromClient(bytes, from: client, now: now)
            return
        }
        let message: STUNMessage
        do { message = try STUNMessage.parse(RawSpan(_unsafeBytes: bytes)) } catch {
            counters.malformed += 1
            return
        }
        let span = RawSpan(_unsafeBytes: bytes)
        if message.fingerprint != nil, !message.verifyFingerprint(in: span) {
            counters.malformed += 1
            return
        }
        switch message.type.messageClass {
        case .indication:
            if message.type.method == .send { sendIndication(message, bytes, from: client, now: now) }
        case .request:
            request(message, span, from: client, now: now, unixSeconds: unixSeconds, openRelay: openRelay)
        case .successResponse, .errorResponse:
            counters.malformed += 1
        }
    }

    package mutating func handleClient(
        _ bytes: [UInt8], from client: TURNClient, now: Instant, unixSeconds: Int64,
        openRelay: (TURNClient, _ evenPort: Bool) -> TransportAddress?
    ) {
        bytes.withUnsafeBytes { handleClient($0, from: client, now: now, unixSeconds: unixSeconds, openRelay: openRelay) }
    }

    private mutating func request(
        _ message: STUNMessage, _ bytes: RawSpan, from client: TURNClient, now: Instant, unixSeconds: Int64,
        openRelay: (TURNClient, _ evenPort: Bool) -> TransportAddress?
    ) {
        let method = message.type.method
        if method == .binding {
            // A plain STUN Binding on the TURN port (RFC 8656 section 3),
            // which clients use to learn their reflexive address.
            var b = STUNMessageBuilder(type: .bindingSuccessResponse, transactionID: message.transactionID)
            try? b.appendXORMappedAddress(client.address)
            finish(&b, key: nil, to: client)
            return
        }
        guard [.allocate, .refresh, .createPermission, .channelBind].contains(method) else {
            reply(message, .badRequest, key: nil, to: client)
            return
        }
        guard message.unknownComprehensionRequired.isEmpty else {
            var b = STUNMessageBuilder(
                type: STUNMessageType(method: method, class: .errorResponse), transactionID: message.transactionID)
            try? b.appendErrorCode(.unknownAttribute)
            try? b.appendUnknownAttributes(message.unknownComprehensionRequired)
            finish(&b, key: nil, to: client)
            return
        }
        guard let key = authenticate(message, bytes, client: client, now: now, unixSeconds: unixSeconds) else { return }
        switch method {
        case .allocate: allocate(message, key: key, from: client, now: now, openRelay: openRelay)
        case .refresh: refresh(message, key: key, from: client, now: now)
        case .createPermission: createPermission(message, key: key, from: client, now: now)
        default: channelBind(message, key: key, from: client, now: now)
        }
    }

    /// The long-term credential check of RFC 8489 section 9.2.4, in its
    /// order; answers the refusal itself and returns nil, or returns the
    /// username and key the request verified under.
    private mutating func authenticate(
        _ message: STUNMessage, _ bytes: RawSpan, client: TURNClient, now: Instant, unixSeconds: Int64
    ) -> (username: String, key: [UInt8])? {
        guard message.messageIntegrity != nil || message.messageIntegritySHA256 != nil else {
            counters.unauthorized += 1
            challenge(message, .unauthorized, client: client, now: now)
            return nil
        }
        guard let username = message.username, let realm = message.realm, let nonce = message.nonce else {
            reply(message, .badRequest, key: nil, to: client)
            return nil
        }
        guard nonceIsFresh(nonce, client: client, now: now) else {
            challenge(message, .staleNonce, client: client, now: now)
            return nil
        }
        let existing = allocations[client]
        let password: String?
        if let existing, existing.username == username {
            // An allocation outlives its credentials' expiry: the expiry
            // bounds when one may be created, and the allocation's own
            // lifetime (at most an hour per Refresh) bounds the rest.
            password = credentials.password(for: username)
        } else {
            password = try? credentials.check(username: username, nowSeconds: unixSeconds).get()
        }
        guard realm == configuration.realm, let password else {
            counters.unauthorized += 1
            challenge(message, .unauthorized, client: client, now: now)
            return nil
        }
        let key = STUNMessage.longTermKey(username: username, realm: realm, password: password)
        guard message.verifyIntegrity(key: key, in: bytes) else {
            counters.unauthorized += 1
            challenge(message, .unauthorized, client: client, now: now)
            return nil
        }
        if let existing, existing.username != username {
            // RFC 8656 section 7.2 and 5: requests on an allocation use the
            // credentials that created it.
            reply(message, .wrongCredentials, key: key, to: client)
            return nil
        }
        return (username, key)
    }

    private mutating func remove(_ client: TURNClient) {
        guard let allocation = allocations.removeValue(forKey: client) else { return }
        clientsByRelay[allocation.relay] = nil
        let left = (allocationsByUser[allocation.username] ?? 1) - 1
        allocationsByUser[allocation.username] = left > 0 ? left : nil
        output.append(.releaseRelay(allocation.relay))
    }

    mutating func insert(_ allocation: TURNAllocation) {
        allocations[allocation.client] = allocation
        clientsByRelay[allocation.relay] = allocation.client
        allocationsByUser[allocation.username, default: 0] += 1
    }

    mutating func delete(_ client: TURNClient) { remove(client) }

    // MARK: Nonces

    /// `<issued ns, hex>.<16 hex digits of HMAC>`: stateless and bound to
    /// the client's address.
    func nonce(client: TURNClient, now: Instant) -> String {
        let issued = String(UInt64(bitPattern: now.nanoseconds), radix: 16)
        return issued + "." + nonceMAC(issued, client: client)
    }

    private func nonceMAC(_ issued: String, client: TURNClient) -> String {
        let input = Array((issued + "|" + client.description).utf8)
        let mac = HMAC.authenticationCode(.sha256, key: nonceKey, message: input) ?? []
        return mac.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private func nonceIsFresh(_ nonce: String, client: TURNClient, now: Instant) -> Bool {
        guard let dot = nonce.firstIndex(of: "."), nonce.utf8.count <= 64 else { return false }
        let issuedText = String(nonce[..<dot])
        guard let issued = UInt64(issuedText, radix: 16),
            nonceMAC(issuedText, client: client) == nonce[nonce.index(after: dot)...]
        else { return false }
        let age = now.nanoseconds &- Int64(bitPattern: issued)
        return age >= 0 && age < configuration.nonceLifetime.nanoseconds
    }
}
