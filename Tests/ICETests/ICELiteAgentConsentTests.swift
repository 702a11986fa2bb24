import ICE
import SFUTesting
import STUN
import Testing
import Wire

/// The consent path of the lite agent (RFC 7675, issue #14): checks read
/// in place, success responses written into kept buffers and taken
/// without a copy by `withNextTransmit`.
@Suite struct ICELiteAgentConsentTests {
    let t0 = Instant(nanoseconds: 1_000_000_000)

    @Test func consentCheckRefreshesConsentAndIsAnsweredInPlace() throws {
        var lite = ICELiteAgent(localCredentials: Creds.server, remoteCredentials: Creds.client, now: t0)
        lite.handleSTUN(clientCheck(useCandidate: true), from: Addr.client, now: t0)
        _ = lite.pollTransmit()
        #expect(lite.selectedAddress == Addr.client)
        // Every 5 s a consent check: consent holds past 30 s from the first.
        for n in 1...12 {
            let now = t0 + .seconds(5 * n)
            let id = TransactionID(high: 9, low: UInt64(n))
            lite.handleSTUN(clientCheck(id: id), from: Addr.client, now: now)
            let answer = lite.withNextTransmit { bytes, to, from in (Array(bytes), to, from) }
            let (bytes, to, from) = try #require(answer)
            #expect(to == Addr.client && from == nil)
            let expected = try STUNMessageBuilder.bindingSuccessResponse(
                transactionID: id, xorMappedAddress: Addr.client, key: Creds.server.key)
            #expect(bytes == expected)
            #expect(lite.withNextTransmit { _, _, _ in () } == nil)
        }
        lite.handleTimeout(now: t0 + .seconds(61))
        #expect(lite.selectedAddress == Addr.client)
        #expect(lite.state == .connected)
        #expect(lite.counters.validChecks == 13)
    }

    @Test func queuedResponsesKeepTheirOrderAndTheBound() {
        var lite = ICELiteAgent(localCredentials: Creds.server, remoteCredentials: Creds.client, now: t0)
        let total = ICELiteAgent.maxQueued + 5
        for n in 0..<total {
            let id = TransactionID(high: 3, low: UInt64(n))
            // Every seventh is a 401 (wrong password), built by the builder.
            let check = n % 7 == 0 ? clientCheck(id: id, password: "wrong-password-wrong-pw") : clientCheck(id: id)
            lite.handleSTUN(check, from: Addr.client, now: t0)
        }
        var ids: [UInt64] = []
        while let t = lite.pollTransmit() { ids.append((try? STUNMessage.parse(t.bytes))?.transactionID.low ?? 999) }
        #expect(ids == Array(UInt64(total - ICELiteAgent.maxQueued)..<UInt64(total)))
    }
}
