import STUN
import Wire

/// Connectivity checks, nomination and consent of the full agent
/// (RFC 8445 sections 6.1.4, 7.2, 7.3 and 8.1; RFC 7675).
extension ICEAgent {
    /// One STUN datagram from `source`, received on the local address
    /// `local`.
    package mutating func handleSTUN(
        _ bytes: RawSpan, from source: TransportAddress, to local: TransportAddress,
        now: Instant
    ) {
        guard state != .failed else { counters.discarded += 1; return }
        let message: STUNMessage
        do { message = try STUNMessage.parse(bytes) } catch { counters.malformed += 1; return }
        guard message.type.method == .binding else { counters.discarded += 1; return }
        switch message.type.messageClass {
        case .indication: counters.indications += 1
        case .request: handleRequest(message, bytes, from: source, to: local, now: now)
        case .successResponse, .errorResponse: handleResponse(message, bytes, from: source, to: local, now: now)
        }
        handleTimeout(now: now)
    }

    package mutating func handleSTUN(
        _ bytes: [UInt8], from source: TransportAddress, to local: TransportAddress,
        now: Instant
    ) {
        handleSTUN(bytes.span.bytes, from: source, to: local, now: now)
    }

    /// The earliest of: the next paced check (when one is waiting), every
    /// retransmission or transaction timeout, the nomination wait, the next
    /// consent check, consent expiry and the connect timeout.
    package var nextDeadline: Instant? {
        guard state != .failed else { return nil }
        // Asked on every wake-up of a transport's owner: no array built.
        var earliest: Instant?
        func consider(_ d: Instant?) {
            if let d, earliest.map({ d < $0 }) ?? true { earliest = d }
        }
        for t in transactions { consider(t.deadline) }
        if hasCheckToSend { consider(nextCheckAt) }
        if awaitingNomination, !pairs.contains(where: \.nominating), let first = firstValidAt {
            consider(first + configuration.nominationWait)
        }
        if selectedPair == nil {
            consider(connectDeadline)
        } else {
            if remoteCredentials != nil { consider(nextConsentAt) }
            consider(lastConsent.map { $0 + configuration.consentTimeout })
        }
        return earliest
    }

    package mutating func handleTimeout(now: Instant) {
        guard state != .failed else { return }
        if selectedPair != nil, let last = lastConsent, now >= last + configuration.consentTimeout {
            // RFC 7675 section 5.1: no response for 30 s, stop sending.
            selectedPair = nil
            push(.consentExpired)
            fail()
            return
        }
        if selectedPair == nil, let deadline = connectDeadline, now >= deadline {
            fail()
            return
        }
        retransmit(now: now)
        if remoteCredentials != nil {
            sendPacedCheck(now: now)
            nominateIfReady(now: now)
            refreshConsent(now: now)
        }
        if selectedPair == nil, remoteEndOfCandidates, !pairs.isEmpty, triggered.isEmpty,
            pairs.allSatisfy({ $0.state == .failed })
        {
            fail()
        }
    }

    private mutating func fail() {
        transactions.removeAll()
        triggered.removeAll()
        setState(.failed)
    }

    /// Controlling and nothing selected in this ICE generation: nothing at
    /// all, or only the pair kept from before a restart.
    var awaitingNomination: Bool {
        role == .controlling && (selectedPair == nil || state == .checking)
    }

    var hasCheckToSend: Bool {
        remoteCredentials != nil && (!triggered.isEmpty || pairs.contains { $0.state == .waiting })
    }

    // MARK: Sending checks

    /// RFC 8445 section 6.1.4.2: every Ta, the triggered-check queue first,
    /// then the highest-priority Waiting pair.
    private mutating func sendPacedCheck(now: Instant) {
        guard let next = nextCheckAt, now >= next else { return }
        var chosen: Int?
        while chosen == nil, !triggered.isEmpty {
            chosen = pairIndex(triggered.removeFirst())
        }
        if chosen == nil { chosen = pairs.firstIndex { $0.state == .waiting } }
        guard let index = chosen else { return }
        sendCheck(pairIndex: index, nominating: false, now: now)
        nextCheckAt = now + configuration.pacing
    }

    /// A Binding request on a pair (RFC 8445 section 7.2.2): USERNAME
    /// `remoteUfrag:localUfrag`, PRIORITY as a peer-reflexive candidate of
    /// the local base (section 7.1.1), ICE-CONTROLLING or ICE-CONTROLLED
    /// with the tie-breaker, USE-CANDIDATE when nominating,
    /// MESSAGE-INTEGRITY under the remote password, FINGERPRINT.
    mutating func sendCheck(pairIndex index: Int, nominating: Bool, now: Instant) {
        guard let remote = remoteCredentials else { return }
        let pair = pairs[index]
        let kind = Transaction.Kind.check(nominating: nominating, role: role)
        guard let (id, bytes) = request(on: pair, useCandidate: nominating, remote: remote) else { return }
        // A nominating check keeps a valid pair valid while it runs.
        if nominating { pairs[index].nominating = true } else { pairs[index].state = .inProgress }
        transactions.removeAll { $0.pair == pair.addresses && $0.kind == kind }
        transactions.append(
            Transaction(
                id: id, pair: pair.addresses, kind: kind, bytes: bytes, transmissions: 1,
                rto: configuration.initialRTO, deadline: now + configuration.initialRTO))
        send(bytes, from: pair.local.address, to: pair.remote.address)
    }

    private func request(
        on pair: CandidatePair, useCandidate: Bool, remote: ICECredentials
    )
        -> (TransactionID, [UInt8])?
    {
        let id = TransactionID.random()
        let localPreference = UInt16(truncatingIfNeeded: pair.local.priority >> 8)
        let priority = ICECandidate.priority(
            kind: .peerReflexive, localPreference: localPreference,
            component: pair.local.component)
        let control: ICEControlAttribute =
            role == .controlling
            ? .controlling(tieBreaker: tieBreaker) : .controlled(tieBreaker: tieBreaker)
        guard
            let bytes = try? STUNMessageBuilder.bindingRequest(
                transactionID: id, username: remote.ufrag + ":" + localCredentials.ufrag, priority: priority,
                control: control, useCandidate: useCandidate, key: remote.key, software: configuration.software)
        else { return nil }
        return (id, bytes)
    }

    /// RFC 8489 section 6.2.1: resend on an RTO doubling each time, up to
    /// `maxTransmissions`; after the last, wait `lastWaitFactor` initial
    /// RTOs, then the check fails (RFC 8445 section 7.2.5.2.1 treats a
    /// timeout as a failure).
    private mutating func retransmit(now: Instant) {
        var i = 0
        while i < transactions.count {
            guard transactions[i].deadline <= now else { i += 1; continue }
            let t = transactions[i]
            if case .check = t.kind, t.transmissions < configuration.maxTransmissions {
                transactions[i].transmissions += 1
                transactions[i].rto = t.rto * 2
                let last = transactions[i].transmissions == configuration.maxTransmissions
                transactions[i].deadline =
                    t.deadline
                    + (last
                        ? configuration.initialRTO * Int(configuration.lastWaitFactor) : t.rto * 2)
                send(t.bytes, from: t.pair.local, to: t.pair.remote)
                i += 1
                continue
            }
            transactions.remove(at: i)
            if case .check = t.kind, let p = pairIndex(t.pair) {
                pairs[p].state = .failed
                pairs[p].nominating = false
            }
        }
    }

    /// Regular nomination (RFC 8445 section 8.1.1), controlling only: once
    /// a pair is valid, nominate the highest-priority valid pair as soon as
    /// no pair of higher priority is still pending, or when
    /// `nominationWait` has passed since the first valid pair.
    private mutating func nominateIfReady(now: Instant) {
        guard awaitingNomination, !pairs.contains(where: \.nominating),
            let best = pairs.firstIndex(where: { $0.state == .succeeded })
        else { return }
        let pendingAbove = pairs[..<best].contains { $0.state == .waiting || $0.state == .inProgress }
        let waited = firstValidAt.map { now >= $0 + configuration.nominationWait } ?? false
        guard !pendingAbove || waited else { return }
        sendCheck(pairIndex: best, nominating: true, now: now)
    }

    /// RFC 7675 section 5.1: a new Binding request on the selected pair at
    /// a randomized 4 to 6 s interval, never retransmitted.
    private mutating func refreshConsent(now: Instant) {
        guard let selected = selectedPair, let remote = remoteCredentials, let due = nextConsentAt, now >= due,
            let index = pairIndex(selected) ?? consentPairIndex(selected)
        else { return }
        nextConsentAt = now + jitter.duration(in: configuration.consentInterval)
        guard let (id, bytes) = request(on: pairs[index], useCandidate: false, remote: remote) else { return }
        transactions.removeAll { $0.kind == .consent && $0.deadline <= now }
        transactions.append(
            Transaction(
                id: id, pair: selected, kind: .consent, bytes: bytes, transmissions: 1,
                rto: configuration.initialRTO, deadline: now + configuration.consentTimeout))
        send(bytes, from: selected.local, to: selected.remote)
    }

    /// After a restart the selected pair is no longer in the checklist;
    /// consent checks for it use a transient pair.
    private mutating func consentPairIndex(_ selected: ICEAddressPair) -> Int? {
        guard let local = localCandidates.first(where: { $0.address == selected.local }) else { return nil }
        let remote =
            remoteCandidates.first { $0.address == selected.remote }
            ?? ICECandidate(
                foundation: ICECandidate.foundation(kind: .peerReflexive, address: selected.remote),
                priority: 0, address: selected.remote, kind: .peerReflexive)
        addRemoteCandidate(remote)
        addPair(local: local, remote: remote)
        return pairIndex(selected)
    }

    // MARK: Responses to our checks

    /// RFC 8445 section 7.2.5: match by transaction id, authenticate
    /// (FINGERPRINT, MESSAGE-INTEGRITY under the remote password: anything
    /// else is dropped and the transaction stays open), then require
    /// symmetric addresses (section 7.2.5.2.1: otherwise the check fails).
    private mutating func handleResponse(
        _ message: STUNMessage, _ bytes: RawSpan, from source: TransportAddress,
        to local: TransportAddress, now: Instant
    ) {
        guard let remote = remoteCredentials,
            let t = transactions.firstIndex(where: { $0.id == message.transactionID }),
            message.verifyFingerprint(in: bytes), message.verifyIntegrity(key: remote.key, in: bytes)
        else { counters.discarded += 1; return }
        let transaction = transactions.remove(at: t)
        let pairIndex = pairIndex(transaction.pair)
        let symmetric = source == transaction.pair.remote && local == transaction.pair.local

        switch transaction.kind {
        case .consent:
            // RFC 7675 section 5.1: only a success from the pair's remote
            // address refreshes consent.
            if symmetric, message.type.messageClass == .successResponse, transaction.pair == selectedPair {
                lastConsent = now
            }
        case .check(let nominating, let sentRole):
            guard let p = pairIndex else { return }
            guard symmetric else {
                pairs[p].state = .failed
                pairs[p].nominating = false
                return
            }
            if message.type.messageClass == .errorResponse {
                handleErrorResponse(message, pair: p, sentRole: sentRole)
                return
            }
            pairs[p].state = .succeeded
            if firstValidAt == nil { firstValidAt = now }
            if (nominating && role == .controlling) || (role == .controlled && pairs[p].nominatedByPeer) {
                select(p, now: now)
            }
        }
    }

    /// RFC 8445 section 7.2.5.1: on 487, take the role opposite to the one
    /// the check was sent in and check the pair again; any other error
    /// fails the pair.
    private mutating func handleErrorResponse(_ message: STUNMessage, pair p: Int, sentRole: ICERole) {
        if message.errorCode?.code == STUNErrorCode.roleConflict.code {
            let addresses = pairs[p].addresses
            switchRole(to: sentRole == .controlling ? .controlled : .controlling)
            if let q = pairIndex(addresses) {
                pairs[q].state = .waiting
                pairs[q].nominating = false
                if !triggered.contains(addresses) { triggered.append(addresses) }
            }
            return
        }
        pairs[p].state = .failed
        pairs[p].nominating = false
    }

    mutating func select(_ index: Int, now: Instant) {
        let addresses = pairs[index].addresses
        lastConsent = now
        nextConsentAt = now + jitter.duration(in: configuration.consentInterval)
        connectDeadline = nil
        if selectedPair != addresses {
            selectedPair = addresses
            push(.selectedPairChanged(local: addresses.local, remote: addresses.remote))
        }
        setState(.connected)
    }

    // MARK: Checks from the peer

    /// RFC 8445 section 7.3: the same validation as the lite agent, then
    /// role conflict by tie-breaker (section 7.3.1.1), a success response,
    /// peer-reflexive learning (7.3.1.3), a triggered check (7.3.1.4) and
    /// the peer's nomination when controlled (7.3.1.5).
    private mutating func handleRequest(
        _ message: STUNMessage, _ bytes: RawSpan, from source: TransportAddress,
        to local: TransportAddress, now: Instant
    ) {
        // The same in-place validation as the lite agent; the view accepts
        // whatever `STUNMessage.parse` accepted.
        guard let view = try? STUNMessageView(bytes) else { counters.malformed += 1; return }
        let verdict = ConnectivityCheckResponder.examine(
            view, in: bytes, local: localCredentials,
            remoteUfrag: remoteCredentials?.ufrag)
        let check: AuthenticatedCheck
        switch verdict {
        case .discard:
            counters.discarded += 1
            return
        case .reject(let code, let unknown, let authenticated):
            reject(code, unknown, authenticated, message.transactionID, from: local, to: source)
            return
        case .valid(let c):
            check = c
        }

        switch (role, check.control) {
        case (.controlling, .controlling(let theirs)?):
            if tieBreaker >= theirs {
                reject(.roleConflict, [], true, check.transactionID, from: local, to: source)
                return
            }
            switchRole(to: .controlled)
        case (.controlled, .controlled(let theirs)?):
            if tieBreaker >= theirs {
                switchRole(to: .controlling)
            } else {
                reject(.roleConflict, [], true, check.transactionID, from: local, to: source)
                return
            }
        default:
            break
        }

        guard
            let response = ConnectivityCheckResponder.success(
                transactionID: check.transactionID, source: source, local: localCredentials,
                software: configuration.software)
        else { counters.discarded += 1; return }
        counters.validChecks += 1
        send(response, from: local, to: source)

        guard let localCandidate = localCandidates.first(where: { $0.address == local }) else { return }
        if !remoteCandidates.contains(where: { $0.address == source }) {
            let priority =
                check.priority
                ?? ICECandidate.priority(
                    kind: .peerReflexive, localPreference: ICECandidate.localPreference(family: source.family))
            addRemoteCandidate(
                ICECandidate(
                    foundation: ICECandidate.foundation(kind: .peerReflexive, address: source),
                    priority: priority, address: source, kind: .peerReflexive))
        }
        guard let remoteCandidate = remoteCandidates.first(where: { $0.address == source }) else { return }
        addPair(local: localCandidate, remote: remoteCandidate)
        let addresses = ICEAddressPair(local: local, remote: source)
        guard let p = pairIndex(addresses) else { return }

        let nominated = check.useCandidate && role == .controlled
        if nominated { pairs[p].nominatedByPeer = true }
        switch pairs[p].state {
        case .succeeded:
            if nominated { select(p, now: now) }
        case .waiting, .failed:
            pairs[p].state = .waiting
            if !triggered.contains(addresses) { triggered.append(addresses) }
            if nextCheckAt == nil { nextCheckAt = now }
        case .inProgress:
            break
        }
    }

    private mutating func reject(
        _ code: STUNErrorCode, _ unknown: [STUNAttributeType], _ authenticated: Bool,
        _ id: TransactionID, from local: TransportAddress, to source: TransportAddress
    ) {
        counters.rejected += 1
        guard
            let response = ConnectivityCheckResponder.error(
                code, unknownAttributes: unknown, authenticated: authenticated, transactionID: id,
                local: localCredentials, software: configuration.software)
        else { return }
        send(response, from: local, to: source)
    }
}
