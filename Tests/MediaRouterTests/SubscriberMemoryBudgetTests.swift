import MediaRouter
import SFUTesting
import Testing
import Wire

/// Issue #14: what the router keeps per subscriber transport stays within
/// its share of the 64 KB per subscribed track budget, whatever the
/// number of subscribers.
@Suite struct SubscriberMemoryBudgetTests {
    /// The router's share of the per-subscribed-track goal; the rest is the
    /// transport (DTLS, SRTP, ICE) and the worker.
    static let linkBudget = 32 * 1024

    @Test func subscriberLinkStaysWithinBudget() throws {
        let (bed, publisher, subs) = try RoomRouterForwardingTests.opusRoom(subscribers: 4)
        RoomRouterForwardingTests.sendOpus(0..<100, from: publisher, on: bed)
        #expect(subs.allSatisfy { $0.rtp.count == 100 })
        let router = bed.routers[0]
        #expect(router.stateSizes.subscriberLinks == 4)
        let perLink = router.subscriberLinkBytes / router.stateSizes.subscriberLinks
        #expect(perLink <= Self.linkBudget, "\(perLink) bytes per subscriber link")
        // Audio has no RTX, so no NACK is ever answered from a history:
        // its subscriptions keep none.
        #expect(router.forwardedHistoryBytes == 0)
    }
}
