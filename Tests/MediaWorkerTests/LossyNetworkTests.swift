import MediaWorker
import Rooms
import SFUTesting
import Testing
import Wire

/// Issue #5's simulations: the engine, a simulcast publisher and a
/// subscriber over a seeded lossy network on a virtual clock (100 ms each
/// way, 200 ms round trip).
@Suite struct LossyNetworkTests {
    private func lossyRoom(seed: UInt64, averageLoss: Double) throws -> LossySimulation {
        let sim = try LossySimulation(seed: seed)
        var s = seed
        for peer in sim.peers {
            for direction in 0..<2 {
                s &+= 0x9E37_79B9
                let loss = averageLoss > 0 ? GilbertElliottLoss.bursty(averageLoss: averageLoss, seed: s) : nil
                if direction == 0 { peer.up.loss = loss } else { peer.down.loss = loss }
            }
        }
        #expect(sim.connect(), "transports did not connect")
        return sim
    }

    @Test(.timeLimit(.minutes(2)))
    func videoKeepsDecodingWithNoGapLongerThan500msUnderOnePercentBurstyLoss() throws {
        try decodesThroughLoss(averageLoss: 0.01, knownGap: false)
    }

    /// Known engine issue (reported to the lead): at 5 % and 10 % the
    /// longest freeze is about 680 and 720 ms (seeds below). The test fails
    /// once the engine meets the 500 ms bound, so the marker comes off then.
    @Test(.timeLimit(.minutes(2)), arguments: [0.05, 0.10])
    func videoKeepsDecodingWithNoGapLongerThan500msUnderHeavierBurstyLoss(averageLoss: Double) throws {
        try decodesThroughLoss(averageLoss: averageLoss, knownGap: true)
    }

    private func decodesThroughLoss(averageLoss: Double, knownGap: Bool) throws {
        let sim = try lossyRoom(seed: 0x5EED_0000 &+ UInt64(averageLoss * 100), averageLoss: averageLoss)
        let start = sim.clock.now
        sim.run(for: .seconds(30))
        let decoder = sim.subscriber.decoder
        let firstDecode = try #require(decoder.decodeTimes.first, "nothing decoded")
        print(
            "loss \(averageLoss): decoded=\(decoder.decodeTimes.count) failed=\(decoder.failedFrames)",
            "longestGap=\(decoder.longestGap(until: sim.clock.now))",
            "firstDecodeAfter=\(firstDecode - start) subscriberNACKs=\(sim.subscriber.nacksSent)",
            "subscriberPLIs=\(sim.subscriber.plisSent) rtxReceived=\(sim.subscriber.retransmissionsReceived)",
            "publisherNACKs=\(sim.publisher.nacksReceived) publisherPLIs=\(sim.publisher.plisReceived)",
            "downLost=\(sim.subscriber.peer.down.lost)/\(sim.subscriber.peer.down.sent)",
            "upLost=\(sim.publisher.peer.up.lost)/\(sim.publisher.peer.up.sent)", sim.recoverySummary)
        #expect(firstDecode - start < .seconds(1))
        let gap = decoder.longestGap(until: sim.clock.now)
        if knownGap {
            withKnownIssue("freezes over 500 ms at 5-10 % bursty loss with a 200 ms RTT") {
                #expect(gap < .milliseconds(500))
            }
        } else {
            #expect(gap < .milliseconds(500))
        }
        // 30 s at 30 fps is 900 frames; the temporal layers may be thinned.
        #expect(decoder.decodeTimes.count > 600)
        if averageLoss > 0 {
            #expect(sim.counters.nacksReceived > 0)
            #expect(sim.counters.retransmissionsSent > 0)
            #expect(sim.counters.retransmissionsReceived > 0)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aDropInTheEstimateLeadsToADowngradeWithin2Seconds() throws {
        let sim = try lossyRoom(seed: 0xCA9A, averageLoss: 0)
        sim.subscriber.peer.down.capacity = .mbps(5)
        sim.run(for: .seconds(12))
        let before = sim.subscriber.decoder
        print("before the drop: width=\(before.width ?? 0)", sim.recoverySummary)
        try #require(before.width == 1280, "the top layer is not forwarded at 5 Mbit/s")

        sim.subscriber.peer.down.capacity = .kbps(400)
        let drop = sim.clock.now
        let eventsBefore = sim.events.count
        sim.run(for: .seconds(5))
        let after = sim.subscriber.decoder
        let downgrade = after.widthChanges.first { $0.at > drop && $0.width < 1280 }
        let announced = sim.events.dropFirst(eventsBefore).first {
            if case .streamState(_, _, _, _, let layer?, _) = $0 { layer < 2 } else { false }
        }
        print(
            "after the drop: widthChanges=\(after.widthChanges.map { "\($0.width)@\($0.at - drop)" })",
            "announced=\(String(describing: announced)) queueDrops=\(sim.subscriber.peer.down.queueDrops)",
            sim.recoverySummary)
        let at = try #require(downgrade?.at, "no downgrade within 5 s")
        // Known engine issue: the first downgrade comes 2.22 s after the drop.
        withKnownIssue("downgrade takes about 2.2 s after a 5 Mbit/s -> 400 kbit/s drop") {
            #expect(at - drop < .seconds(2))
        }
        #expect(announced != nil)
    }

    @Test(.timeLimit(.minutes(2)))
    func aSilentTopLayerFallsBackToALowerLayerWithoutAFreeze() throws {
        let sim = try lossyRoom(seed: 0x51_1E47, averageLoss: 0.01)
        sim.run(for: .seconds(5))
        try #require(sim.subscriber.decoder.width == 1280, "the top layer is not forwarded")
        let silence = sim.clock.now
        sim.publisher.silentLayers = [2]
        sim.run(for: .seconds(5))
        let decoder = sim.subscriber.decoder
        print(
            "silent top layer: widthChanges=\(decoder.widthChanges.map { "\($0.width)@\($0.at - silence)" })",
            "longestGap=\(decoder.longestGap(until: sim.clock.now))", sim.recoverySummary)
        let fallback = try #require(decoder.widthChanges.first { $0.at > silence })
        #expect(fallback.width == 640)
        // Known engine issue: the fallback frame decodes ~970 ms after the
        // silence and the freeze is ~620 ms; with 300 ms of silence
        // detection plus a keyframe round trip (200 ms) it cannot be under
        // 500 ms unless the lower layer's keyframe is asked for sooner.
        let gap = decoder.longestGap(until: sim.clock.now)
        withKnownIssue("silent-layer fallback freezes for about 620 ms at a 200 ms RTT") {
            #expect(gap < .milliseconds(500))
        }
        let after = decoder.decodeTimes.filter { $0 > silence }.count
        #expect(after > 100)
    }
}
