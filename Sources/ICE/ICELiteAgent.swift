import STUN
import Wire

/// The SFU's side of ICE: a lite implementation (RFC 8445 sections 2.5 and
/// 6.1.1), always controlled, that never sends a check. It answers the
/// peer's connectivity checks, learns the addresses they come from as
/// peer-reflexive candidates, follows the peer's nomination, and enforces
/// consent freshness (RFC 7675) on the address media goes to.
///
/// Sans-IO: the owner feeds datagrams with `handleSTUN(_:from:now:)`,
/// drains `pollTransmit()` and `pollEvent()`, and calls
/// `handleTimeout(now:)` at `nextDeadline`.
///
/// Invariants:
/// - `selectedAddress` and `isValidatedAddress(_:)` only ever name an
///   address that sent a valid check (FINGERPRINT, USERNAME,
///   MESSAGE-INTEGRITY under the local password) less than the consent
///   timeout ago, as of the last input.
/// - A request that fails any check changes no state; it gets an error
///   response or nothing.
/// - State is bounded: at most `maxRemoteAddresses` learned addresses and
///   `maxQueued` pending datagrams and events.
package struct ICELiteAgent {
    package struct Configuration: Sendable {
        /// Fail when no address is selected this long after creation (or
        /// restart).
        package var connectTimeout: Duration
        /// RFC 7675 section 5.1: consent expires 30 s after the last proof.
        package var consentTimeout: Duration
        /// Learned remote addresses kept; the least recently checked one
        /// (never the selected one) is forgotten first.
        package var maxRemoteAddresses: Int
        /// SOFTWARE put in responses; nil for none.
        package var software: String?

        package init(
            connectTimeout: Duration = .seconds(30), consentTimeout: Duration = .seconds(30),
            maxRemoteAddresses: Int = 16, software: String? = nil
        ) {
            self.connectTimeout = connectTimeout
            self.consentTimeout = consentTimeout
            self.maxRemoteAddresses = max(1, maxRemoteAddresses)
            self.software = software
        }
    }

    /// A peer-reflexive remote candidate learned from a valid check (RFC
    /// 8445 section 7.3.1.3), with the time of its last valid check.
    struct RemoteAddress {
        var address: TransportAddress
        var priority: UInt32
        var lastValidCheck: Instant
        /// Our address its last valid check was sent to (nil: the owner's
        /// socket has one address and does not say).
        var local: TransportAddress?
    }

    /// Queued datagrams and events kept at most; older ones are dropped if
    /// the owner does not drain them.
    package static let maxQueued = 64

    package let configuration: Configuration
    package private(set) var localCredentials: ICECredentials
    package private(set) var remoteCredentials: ICECredentials?
    package private(set) var state: ICEConnectionState = .new
    /// Where media may be sent: the address of the last valid nominated
    /// check, while its consent is fresh.
    package private(set) var selectedAddress: TransportAddress?
    /// Our side of the selected pair: the local address the nominating
    /// check arrived on, which media must leave from (a peer matches
    /// what it receives to the pair it checked, RFC 8445 section
    /// 7.2.5.2.1). Nil when the owner does not report local addresses.
    package private(set) var selectedLocalAddress: TransportAddress?
    package private(set) var counters = ICECounters()

    private var remotes: [RemoteAddress] = []
    private var connectDeadline: Instant?
    private var transmits = STUNTransmitQueue(capacity: ICELiteAgent.maxQueued)
    private var events: [ICEEvent] = []

    package init(
        localCredentials: ICECredentials, remoteCredentials: ICECredentials? = nil,
        configuration: Configuration = Configuration(), now: Instant
    ) {
        self.configuration = configuration
        self.localCredentials = localCredentials
        self.remoteCredentials = remoteCredentials
        connectDeadline = now + configuration.connectTimeout
    }

    /// The remote ufrag and password from the peer's SDP. Until they are
    /// known, a check with any non-empty remote ufrag is accepted: it is
    /// authenticated by our own password, which only the signalled peer
    /// knows (RFC 8445 section 7.3 expects checks to race the answer).
    /// Afterwards the remote part of USERNAME must match.
    package mutating func setRemoteCredentials(_ credentials: ICECredentials) {
        remoteCredentials = credentials
    }

    /// ICE restart (RFC 8445 section 9) with new local credentials, and the
    /// remote ones when known. The selected address and its consent stay:
    /// media keeps flowing, and the peer's checks under the new password
    /// refresh consent and may nominate anew. After failure, a restart
    /// starts from scratch with a fresh connect timeout.
    package mutating func restart(
        localCredentials: ICECredentials, remoteCredentials: ICECredentials? = nil,
        now: Instant
    ) {
        self.localCredentials = localCredentials
        self.remoteCredentials = remoteCredentials
        if state == .failed || selectedAddress == nil {
            remotes.removeAll()
            selectedAddress = nil
            selectedLocalAddress = nil
            connectDeadline = now + configuration.connectTimeout
            setState(.new)
        }
    }

    /// True when `address` has passed a valid check and its consent was
    /// fresh at the last input.
    package func isValidatedAddress(_ address: TransportAddress) -> Bool {
        remotes.contains { $0.address == address }
    }

    /// Peer-reflexive candidates learned so far, most recently checked last.
    package var learnedCandidates: [ICECandidate] {
        remotes.sorted { $0.lastValidCheck < $1.lastValidCheck }.map {
            ICECandidate(
                foundation: ICECandidate.foundation(kind: .peerReflexive, address: $0.address),
                transport: $0.address.transportProtocol == .tcp ? .tcpPassive : .udp,
                priority: $0.priority, address: $0.address, kind: .peerReflexive)
        }
    }

    /// Our address the last valid check from `address` arrived on.
    package func localAddress(for address: TransportAddress) -> TransportAddress? {
        remotes.first { $0.address == address }?.local
    }

    /// One datagram received from `source` on our address `local` (nil
    /// when the owner's socket has a single address), already known to be
    /// STUN by RFC 7983 demultiplexing (anything else is counted as
    /// malformed). Responses leave from `local`: RFC 8445 section 7.3.1.1
    /// sends them from where the request arrived.
    package mutating func handleSTUN(
        _ bytes: RawSpan, from source: TransportAddress, to local: TransportAddress? = nil, now: Instant
    ) {
        handleTimeout(now: now)
        guard state != .failed else { counters.discarded += 1; return }
        // Read in place: a consent check allocates nothing (issue #14).
        let message: STUNMessageView
        do { message = try STUNMessageView(bytes) } catch { counters.malformed += 1; return }
        guard message.type.method == .binding else { counters.discarded += 1; return }
        switch message.type.messageClass {
        case .indication:
            // RFC 8445 section 11: keepalives need no answer and prove nothing.
            counters.indications += 1
        case .successResponse, .errorResponse:
            // A lite agent sends no requests, so expects no responses.
            counters.discarded += 1
        case .request:
            handleRequest(message, bytes, from: source, to: local, now: now)
        }
    }

    package mutating func handleSTUN(
        _ bytes: [UInt8], from source: TransportAddress, to local: TransportAddress? = nil, now: Instant
    ) {
        handleSTUN(bytes.span.bytes, from: source, to: local, now: now)
    }

    private mutating func handleRequest(
        _ message: STUNMessageView, _ bytes: RawSpan, from source: TransportAddress,
        to local: TransportAddress?, now: Instant
    ) {
        let verdict = ConnectivityCheckResponder.examine(
            message, in: bytes, local: localCredentials,
            remoteUfrag: remoteCredentials?.ufrag)
        switch verdict {
        case .discard:
            counters.discarded += 1
        case .reject(let code, let unknown, let authenticated):
            reject(code, unknownAttributes: unknown, authenticated: authenticated, message, to: source, from: local)
        case .valid(let check):
            // RFC 8445 section 7.3.1.1: a peer that also claims to be
            // controlled would have us switch to controlling, which a lite
            // agent cannot do (section 6.1.1: lite is always controlled), so
            // it always gets 487 and must switch itself.
            if case .controlled = check.control {
                reject(.roleConflict, unknownAttributes: [], authenticated: true, message, to: source, from: local)
                return
            }
            accept(check, from: source, to: local, now: now)
        }
    }

    private mutating func reject(
        _ code: STUNErrorCode, unknownAttributes: [STUNAttributeType], authenticated: Bool,
        _ message: STUNMessageView, to source: TransportAddress, from local: TransportAddress?
    ) {
        counters.rejected += 1
        guard
            let response = ConnectivityCheckResponder.error(
                code, unknownAttributes: unknownAttributes, authenticated: authenticated,
                transactionID: message.transactionID, local: localCredentials, software: configuration.software)
        else { return }
        transmits.enqueue(response, to: source, from: local)
    }

    private mutating func accept(
        _ check: AuthenticatedCheck, from source: TransportAddress, to local: TransportAddress?, now: Instant
    ) {
        // RFC 8445 section 7.3.1.3, written in place into a kept buffer.
        let key = localCredentials.key
        let software = configuration.software
        let length =
            BindingSuccessResponseWriter.length(address: source, softwareLength: software?.utf8.count)
            ?? BindingSuccessResponseWriter.maxLength
        let written = transmits.enqueue(to: source, from: local, maxLength: length) {
            BindingSuccessResponseWriter.write(
                into: $0, transactionID: check.transactionID, xorMappedAddress: source, key: key, software: software)
        }
        guard written else { counters.discarded += 1; return }
        counters.validChecks += 1
        learn(source, priority: check.priority, local: local, now: now)

        // RFC 8445 section 7.3.1.5: USE-CANDIDATE from the controlling agent
        // nominates the pair; for a lite agent that selects it at once. The
        // latest nomination wins, so a peer that moves (network handover)
        // moves the selection with it. Without ICE-CONTROLLING the
        // attribute is ignored: only the controlling agent nominates. A
        // pair is both addresses: the same peer address nominated on
        // another of our addresses moves the selection too.
        if check.useCandidate, case .controlling = check.control,
            selectedAddress != source || selectedLocalAddress != local
        {
            selectedAddress = source
            selectedLocalAddress = local
            connectDeadline = nil
            push(.selectedAddressChanged(source))
        }
        setState(selectedAddress == nil ? .checking : .connected)
    }

    /// Refreshes consent for `address` (RFC 7675 section 5.1: every valid
    /// check is a proof), learning it if new and forgetting the least
    /// recently checked non-selected address when full.
    private mutating func learn(
        _ address: TransportAddress, priority: UInt32?, local: TransportAddress?, now: Instant
    ) {
        if let i = remotes.firstIndex(where: { $0.address == address }) {
            remotes[i].lastValidCheck = now
            remotes[i].local = local
            if let priority { remotes[i].priority = priority }
            return
        }
        if remotes.count >= configuration.maxRemoteAddresses {
            let victims = remotes.indices.filter { remotes[$0].address != selectedAddress }
            if let oldest = victims.min(by: { remotes[$0].lastValidCheck < remotes[$1].lastValidCheck }) {
                remotes.remove(at: oldest)
            }
        }
        let fallback = ICECandidate.priority(
            kind: .peerReflexive,
            localPreference: ICECandidate.localPreference(family: address.family))
        remotes.append(
            RemoteAddress(address: address, priority: priority ?? fallback, lastValidCheck: now, local: local))
    }

    /// The earliest of: the connect timeout while nothing is selected, and
    /// the consent expiry of every validated address (the selected one's is
    /// the one that matters for media). Nil once failed.
    package var nextDeadline: Instant? {
        guard state != .failed else { return nil }
        var deadline = selectedAddress == nil ? connectDeadline : nil
        for r in remotes {
            let expiry = r.lastValidCheck + configuration.consentTimeout
            if deadline.map({ expiry < $0 }) ?? true { deadline = expiry }
        }
        return deadline
    }

    /// Expires consent (RFC 7675 section 5.1) and the connect timeout.
    package mutating func handleTimeout(now: Instant) {
        guard state != .failed else { return }
        remotes.removeAll { $0.lastValidCheck + configuration.consentTimeout <= now }
        if let selected = selectedAddress, !isValidatedAddress(selected) {
            selectedAddress = nil
            selectedLocalAddress = nil
            push(.consentExpired)
            setState(.failed)
            remotes.removeAll()
            return
        }
        if selectedAddress == nil, let deadline = connectDeadline, now >= deadline {
            connectDeadline = nil
            remotes.removeAll()
            setState(.failed)
        }
    }

    /// The next datagram to send, to `to`, from our address `from` (nil:
    /// the socket's own).
    package mutating func pollTransmit() -> (bytes: [UInt8], to: TransportAddress, from: TransportAddress?)? {
        transmits.dequeue { bytes, to, from in (Array(bytes), to, from) }
    }

    /// Takes the next datagram to send and calls `body` with its bytes
    /// (valid only during the call), where it goes and where it leaves
    /// from; nil when none is queued. Unlike `pollTransmit()`, it copies
    /// nothing: the owner writes the bytes straight into its transmit slot.
    package mutating func withNextTransmit<R>(
        _ body: (UnsafeRawBufferPointer, TransportAddress, TransportAddress?) -> R
    ) -> R? {
        transmits.dequeue(body)
    }

    package mutating func pollEvent() -> ICEEvent? {
        events.isEmpty ? nil : events.removeFirst()
    }

    private mutating func push(_ event: ICEEvent) {
        if events.count >= Self.maxQueued { events.removeFirst() }
        events.append(event)
    }

    private mutating func setState(_ new: ICEConnectionState) {
        guard new != state else { return }
        state = new
        push(.stateChanged(new))
    }
}
