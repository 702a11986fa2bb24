import CryptoPrimitives
import STUN
import Wire

/// A full ICE agent (RFC 8445), controlling by default, for one component
/// over UDP: the client side used by roombot and by tests against the SFU's
/// lite agent.
///
/// The caller supplies host candidates (addresses the shell has bound) and
/// the remote candidates and credentials from SDP or trickle. The agent
/// pairs them (same address family only), sorts the checklist by pair
/// priority, sends one new check every Ta (50 ms), retransmits each on an
/// RTO of 250 ms doubling, nominates with regular nomination, answers the
/// peer's checks, and keeps consent fresh on the selected pair (RFC 7675).
///
/// Sans-IO: inputs are `handleSTUN(_:from:to:now:)` and
/// `handleTimeout(now:)`; outputs are `pollTransmit()`, `pollEvent()` and
/// `nextDeadline`. After any input, drain both queues; call `handleTimeout`
/// when `nextDeadline` is reached (it may already be in the past after
/// candidates were added).
///
/// Invariants: a pair is selected only after a check on it succeeded with a
/// response that passed FINGERPRINT and MESSAGE-INTEGRITY under the remote
/// password, from the address the check went to; checks go out only once
/// the remote credentials are known; at most `maxPairs` pairs.
package struct ICEAgent {
    package struct Configuration: Sendable {
        /// The role to start in (RFC 8445 section 6.1.1); conflicts may
        /// change it.
        package var role: ICERole
        /// The 64-bit tie-breaker (RFC 8445 section 7.1.3); nil draws one
        /// from SecureRandom.
        package var tieBreaker: UInt64?
        /// Ta, the pacing of new checks (RFC 8445 section 14.2).
        package var pacing: Duration
        /// The first retransmission timeout; doubled after each send (RFC
        /// 8489 section 6.2.1).
        package var initialRTO: Duration
        /// Transmissions of one check, the first included (RFC 8489's Rc).
        package var maxTransmissions: Int
        /// After the last transmission the check fails when no response
        /// came within this many initial RTOs (RFC 8489's Rm, 16).
        package var lastWaitFactor: Int64
        /// How long to wait, after the first pair became valid, for pending
        /// higher-priority pairs before nominating the best valid one.
        package var nominationWait: Duration
        /// RFC 7675 section 5.1: a consent check every 5 s, randomized to
        /// 0.8 to 1.2 times that.
        package var consentInterval: ClosedRange<Duration>
        /// RFC 7675 section 5.1: consent expires 30 s after the last
        /// successful response.
        package var consentTimeout: Duration
        /// Fail when nothing is selected this long after checks start.
        package var connectTimeout: Duration
        /// Seed of the jitter generator; nil draws one from SecureRandom.
        package var randomSeed: UInt64?
        package var maxRemoteCandidates: Int
        /// RFC 8445 section 6.1.2.5 suggests limiting the checklist to 100.
        package var maxPairs: Int
        package var software: String?

        package init(
            role: ICERole = .controlling, tieBreaker: UInt64? = nil, pacing: Duration = .milliseconds(50),
            initialRTO: Duration = .milliseconds(250), maxTransmissions: Int = 7, lastWaitFactor: Int64 = 16,
            nominationWait: Duration = .milliseconds(500),
            consentInterval: ClosedRange<Duration> = .seconds(4) ... .seconds(6),
            consentTimeout: Duration = .seconds(30), connectTimeout: Duration = .seconds(30),
            randomSeed: UInt64? = nil, maxRemoteCandidates: Int = 32, maxPairs: Int = 100, software: String? = nil
        ) {
            self.role = role
            self.tieBreaker = tieBreaker
            self.pacing = pacing
            self.initialRTO = initialRTO
            self.maxTransmissions = max(1, maxTransmissions)
            self.lastWaitFactor = max(1, lastWaitFactor)
            self.nominationWait = nominationWait
            self.consentInterval = consentInterval
            self.consentTimeout = consentTimeout
            self.connectTimeout = connectTimeout
            self.randomSeed = randomSeed
            self.maxRemoteCandidates = max(1, maxRemoteCandidates)
            self.maxPairs = max(1, maxPairs)
            self.software = software
        }
    }

    /// An outstanding Binding request.
    struct Transaction {
        enum Kind: Hashable {
            /// A connectivity check (with USE-CANDIDATE when nominating),
            /// sent in `role`.
            case check(nominating: Bool, role: ICERole)
            /// RFC 7675 consent check: never retransmitted, forgotten after
            /// the consent timeout.
            case consent
        }
        var id: TransactionID
        var pair: ICEAddressPair
        var kind: Kind
        var bytes: [UInt8]
        var transmissions: Int
        var rto: Duration
        /// Next retransmission, or when the transaction times out.
        var deadline: Instant
    }

    package static let maxQueued = 256

    package let configuration: Configuration
    package internal(set) var role: ICERole
    package let tieBreaker: UInt64
    package private(set) var localCredentials: ICECredentials
    package private(set) var remoteCredentials: ICECredentials?
    package internal(set) var state: ICEConnectionState = .new
    /// Where media goes: set when a nominated pair's check succeeded.
    package internal(set) var selectedPair: ICEAddressPair?
    package internal(set) var counters = ICECounters()
    package private(set) var localCandidates: [ICECandidate] = []
    package private(set) var remoteCandidates: [ICECandidate] = []
    package private(set) var remoteEndOfCandidates = false

    var pairs: [CandidatePair] = []
    var transactions: [Transaction] = []
    var triggered: [ICEAddressPair] = []
    var nextCheckAt: Instant?
    var connectDeadline: Instant?
    var firstValidAt: Instant?
    var lastConsent: Instant?
    var nextConsentAt: Instant?
    var jitter: ICEPseudoRandom
    var transmits: [(bytes: [UInt8], from: TransportAddress, to: TransportAddress)] = []
    var events: [ICEEvent] = []

    package init(localCredentials: ICECredentials, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.localCredentials = localCredentials
        role = configuration.role
        tieBreaker = configuration.tieBreaker ?? SecureRandom.uint64()
        jitter = ICEPseudoRandom(seed: configuration.randomSeed ?? SecureRandom.uint64())
    }

    /// The checklist, highest priority first, for inspection.
    package var checklist: [ICEAddressPair] { pairs.map(\.addresses) }

    /// True when a check on `pair` has succeeded.
    package func isValid(_ pair: ICEAddressPair) -> Bool {
        pairs.contains { $0.addresses == pair && $0.state == .succeeded }
    }

    /// True when some pair with `remote` as its remote address has had a
    /// successful check: such an address may send us media and DTLS.
    /// Allocation-free, since the transport asks per packet.
    package func isValidRemote(_ remote: TransportAddress) -> Bool {
        if selectedPair?.remote == remote { return true }
        return pairs.contains { $0.addresses.remote == remote && $0.state == .succeeded }
    }

    // MARK: Candidates and credentials

    /// A local candidate the shell can send from. Only UDP candidates of
    /// component 1 that act as their own base (host) are used.
    package mutating func addLocalCandidate(_ candidate: ICECandidate) {
        guard candidate.transport == .udp, candidate.component == ICECandidate.rtpComponent,
            !localCandidates.contains(where: { $0.address == candidate.address })
        else { return }
        localCandidates.append(candidate)
        for remote in remoteCandidates { addPair(local: candidate, remote: remote) }
    }

    /// The shell lost this address (network handover). Its pairs and checks
    /// go; if it carried the selected pair, nothing is selected and the
    /// agent nominates again among the remaining pairs.
    package mutating func removeLocalCandidate(_ address: TransportAddress) {
        localCandidates.removeAll { $0.address == address }
        pairs.removeAll { $0.local.address == address }
        transactions.removeAll { $0.pair.local == address }
        triggered.removeAll { $0.local == address }
        if selectedPair?.local == address {
            selectedPair = nil
            lastConsent = nil
            nextConsentAt = nil
            firstValidAt = pairs.contains { $0.state == .succeeded } ? firstValidAt : nil
            for i in pairs.indices { pairs[i].nominating = false }
            if state == .connected { setState(.checking) }
        }
    }

    /// A remote candidate from SDP or trickle. Only UDP candidates of
    /// component 1 are kept, at most `maxRemoteCandidates`.
    package mutating func addRemoteCandidate(_ candidate: ICECandidate) {
        guard candidate.transport == .udp, candidate.component == ICECandidate.rtpComponent else { return }
        if let i = remoteCandidates.firstIndex(where: { $0.address == candidate.address }) {
            // RFC 8445 section 7.3.1.3: a signalled candidate replaces a
            // peer-reflexive one learned earlier for the same address.
            if remoteCandidates[i].kind == .peerReflexive, candidate.kind != .peerReflexive {
                remoteCandidates[i] = candidate
            }
            return
        }
        guard remoteCandidates.count < configuration.maxRemoteCandidates else { return }
        remoteCandidates.append(candidate)
        for local in localCandidates { addPair(local: local, remote: candidate) }
    }

    /// The peer signalled end-of-candidates (RFC 8838 section 13): once all
    /// pairs have failed, the agent fails rather than waiting for more.
    package mutating func endOfCandidates() { remoteEndOfCandidates = true }

    /// The peer's ufrag and password. Checks start with the next
    /// `handleTimeout(now:)`, the connect timeout runs from `now`.
    package mutating func setRemoteCredentials(_ credentials: ICECredentials, now: Instant) {
        remoteCredentials = credentials
        if state == .new || state == .checking {
            connectDeadline = now + configuration.connectTimeout
            nextCheckAt = now
            if state == .new { setState(.checking) }
        } else if state == .connected {
            nextCheckAt = now
        }
    }

    /// ICE restart (RFC 8445 section 9): new local credentials; remote
    /// candidates, credentials, the checklist and all transactions are
    /// dropped. Checks start again when `setRemoteCredentials` brings the
    /// peer's new ones. The selected pair, if any, keeps carrying media and
    /// its consent clock keeps running until a new pair is selected.
    package mutating func restart(newLocalCredentials: ICECredentials) {
        localCredentials = newLocalCredentials
        remoteCredentials = nil
        remoteCandidates.removeAll()
        remoteEndOfCandidates = false
        pairs.removeAll()
        transactions.removeAll()
        triggered.removeAll()
        nextCheckAt = nil
        connectDeadline = nil
        firstValidAt = nil
        nextConsentAt = nil
        if state == .failed {
            selectedPair = nil
            lastConsent = nil
        }
        setState(selectedPair == nil ? .new : .checking)
    }

    mutating func addPair(local: ICECandidate, remote: ICECandidate) {
        guard local.address.family == remote.address.family, pairs.count < configuration.maxPairs,
            !pairs.contains(where: { $0.local.address == local.address && $0.remote.address == remote.address })
        else { return }
        let pair = CandidatePair(local: local, remote: remote, role: role)
        let index = pairs.firstIndex { $0.priority < pair.priority } ?? pairs.endIndex
        pairs.insert(pair, at: index)
    }

    func pairIndex(_ addresses: ICEAddressPair) -> Int? {
        pairs.firstIndex { $0.addresses == addresses }
    }

    // MARK: Output

    package mutating func pollTransmit() -> (bytes: [UInt8], from: TransportAddress, to: TransportAddress)? {
        transmits.isEmpty ? nil : transmits.removeFirst()
    }

    package mutating func pollEvent() -> ICEEvent? {
        events.isEmpty ? nil : events.removeFirst()
    }

    mutating func send(_ bytes: [UInt8], from: TransportAddress, to: TransportAddress) {
        if transmits.count >= Self.maxQueued { transmits.removeFirst() }
        transmits.append((bytes, from, to))
    }

    mutating func push(_ event: ICEEvent) {
        if events.count >= Self.maxQueued { events.removeFirst() }
        events.append(event)
    }

    mutating func setState(_ new: ICEConnectionState) {
        guard new != state else { return }
        state = new
        push(.stateChanged(new))
    }

    /// RFC 8445 sections 7.2.5.1 and 7.3.1.1: a role switch keeps the
    /// tie-breaker and recomputes every pair priority, which depends on
    /// which side is controlling.
    mutating func switchRole(to new: ICERole) {
        guard new != role else { return }
        role = new
        for i in pairs.indices {
            pairs[i].priority = CandidatePair.priority(
                local: pairs[i].local.priority,
                remote: pairs[i].remote.priority, role: new)
        }
        pairs.sort { $0.priority > $1.priority }
        push(.roleChanged(new))
    }
}
