import Codecs
import SFUTesting
import Testing
import Wire

@testable import Forwarding

@Suite struct SimulcastForwarderTests {
    @Test func startsOnTheTargetLayersFirstKeyframe() throws {
        var h = SimulcastHarness()
        h.answerRequests = false
        h.setTarget(MediaLayer(spatial: 1))
        // Layer 1's keyframes: frames where (f + 3) % 30 == 0, i.e. 27.
        let sent = try h.run(frames: 40)
        let first = try #require(sent.first)
        #expect(first.packet.spatialLayer == 1)
        #expect(first.packet.frame == 27)
        #expect(first.packet.isKeyframeStart)
        #expect(first.rewrite.sequenceNumber == 0)
        #expect(first.rewrite.timestamp == 0)
        #expect(sent.allSatisfy { $0.packet.spatialLayer == 1 })
        #expect(h.forwarder.currentLayer == MediaLayer(spatial: 1))
        let waiting = h.outcomes.filter { $0.outcome.selectorDrop == .waitingForKeyframe }
        #expect(waiting.count > 0)
        #expect(waiting.allSatisfy { $0.packet.frame <= 27 })
        expectContinuous(sent)
    }

    @Test func switchesUpAndDownOnlyOnKeyframesOfTheTargetLayer() throws {
        var h = SimulcastHarness()
        h.answerRequests = false
        h.setTarget(MediaLayer(spatial: 0))
        try h.run(frames: 5)  // Layer 0 starts at its keyframe, frame 0.
        #expect(h.forwarder.currentLayer?.spatial == 0)
        h.setTarget(MediaLayer(spatial: 2))
        // Layer 2's keyframe is at frame 24; layer 0 keeps flowing until then.
        let up = try h.run(frames: 25)
        let firstHigh = try #require(up.firstIndex { $0.packet.spatialLayer == 2 })
        #expect(up[firstHigh].packet.frame == 24)
        #expect(up[firstHigh].packet.isKeyframeStart)
        #expect(up[..<firstHigh].allSatisfy { $0.packet.spatialLayer == 0 })
        #expect(up[..<firstHigh].contains { $0.packet.frame == 23 })
        #expect(up[firstHigh...].allSatisfy { $0.packet.spatialLayer == 2 })
        // Down to 1: its keyframe is at frame 57 (layer 0's at 30 and 60
        // do not count).
        h.setTarget(MediaLayer(spatial: 1))
        let down = try h.run(frames: 40)
        let firstMid = try #require(down.firstIndex { $0.packet.spatialLayer == 1 })
        #expect(down[firstMid].packet.frame == 57)
        #expect(down[..<firstMid].allSatisfy { $0.packet.spatialLayer == 2 })
        #expect(down.allSatisfy { $0.packet.spatialLayer != 0 })
        #expect(h.forwarder.switchesCompleted == 3)
        expectContinuous(h.sent)
    }

    @Test func requestsAKeyframeOfTheTargetLayerAndSwitchesOnIt() throws {
        var h = SimulcastHarness()
        h.setTarget(MediaLayer(spatial: 0))
        try h.run(frames: 5)
        h.setTarget(MediaLayer(spatial: 2))
        let sent = try h.run(frames: 3)
        // The first packet after the change asks for layer 2; the publisher
        // answers on its next frame (6).
        #expect(h.requests.map(\.layer) == [0, 2])
        let firstHigh = try #require(sent.first { $0.packet.spatialLayer == 2 })
        #expect(firstHigh.packet.frame == 6)
        #expect(h.forwarder.keyframeRequestsSent == 2)
        #expect(h.forwarder.pendingSpatialLayer == nil)
    }

    @Test func recordsSwitchLatencyFromTargetChangeToFirstPacket() throws {
        var h = SimulcastHarness()
        h.setTarget(MediaLayer(spatial: 0))
        try h.run(frames: 5)
        let requested = h.now
        h.setTarget(MediaLayer(spatial: 1))
        let sent = try h.run(frames: 3)
        let first = try #require(sent.first { $0.packet.spatialLayer == 1 })
        #expect(h.forwarder.lastSwitchLatency == first.arrival - requested)
        // Frame 6, layer 1, first packet: 6 frames + 1 ms after start; the
        // request was 1 ms before frame 5.
        #expect(h.forwarder.lastSwitchLatency == .nanoseconds(33_333_333) + .milliseconds(2))
        #expect(h.forwarder.switchesCompleted == 2)
    }

    @Test func rebasesTimestampsThroughSenderReportsAcrossASwitch() throws {
        var h = SimulcastHarness()
        // Layer 1's keyframe arrives before layer 0's picture of the same
        // time, so the SR mapping (not the wall clock) places it.
        h.highestLayerFirst = true
        // Layer 0: frame 0 (RTP 90000) at NTP second 1000; layer 1: frame
        // 30 (RTP 3000000 + 90000) at NTP second 1001.
        h.forwarder.senderReport(spatialLayer: 0, ssrc: SSRC(0x1000_0001), ntp: 1000 << 32, rtpTimestamp: 90_000)
        h.forwarder.senderReport(
            spatialLayer: 1, ssrc: SSRC(0x1000_0002), ntp: 1001 << 32, rtpTimestamp: 3_000_000 + 90_000)
        h.setTarget(MediaLayer(spatial: 0))
        try h.run(frames: 10)
        h.setTarget(MediaLayer(spatial: 1))
        let sent = try h.run(frames: 5)
        let first = try #require(sent.first { $0.packet.spatialLayer == 1 })
        // On layer 0's timeline frame f is RTP 90000 + 3000 f, sent as 3000 f.
        #expect(first.packet.frame == 11)
        #expect(first.rewrite.timestamp == 33_000)
        // The wall clock alone would have said 30000 + 32.33 ms = 32909.
        expectContinuous(h.sent)
    }

    @Test func withoutSenderReportsTheSwitchUsesElapsedWallTime() throws {
        var h = SimulcastHarness()
        h.setTarget(MediaLayer(spatial: 0))
        try h.run(frames: 11)  // frames 0...10
        h.setTarget(MediaLayer(spatial: 1))
        let sent = try h.run(frames: 5)
        let first = try #require(sent.first { $0.packet.spatialLayer == 1 })
        #expect(first.packet.frame == 12)
        // Layer 0's frame 12 (36000) went out 1 ms before layer 1's
        // keyframe of the same capture time: a new picture, so 1 ms = 90
        // ticks later rather than the same timestamp.
        #expect(first.rewrite.timestamp == 36_000 + 90)
    }

    @Test func senderReportsOfAnotherSSRCAreNotUsed() throws {
        var h = SimulcastHarness()
        h.highestLayerFirst = true
        // Layer 1's report names an SSRC the layer no longer uses (a
        // publisher restart): the switch falls back to the wall clock.
        h.forwarder.senderReport(spatialLayer: 0, ssrc: SSRC(0x1000_0001), ntp: 1000 << 32, rtpTimestamp: 90_000)
        h.forwarder.senderReport(spatialLayer: 1, ssrc: SSRC(0x2000_0002), ntp: 1001 << 32, rtpTimestamp: 3_090_000)
        h.setTarget(MediaLayer(spatial: 0))
        try h.run(frames: 10)
        h.setTarget(MediaLayer(spatial: 1))
        let sent = try h.run(frames: 5)
        let first = try #require(sent.first { $0.packet.spatialLayer == 1 })
        #expect(first.packet.frame == 11)
        // Frame 10 of layer 0 arrived 2 ms after its capture, layer 1's
        // frame 11 1 ms after: 32.33 ms = 2909 ticks after 30000.
        #expect(first.rewrite.timestamp == 32_909)
    }

    @Test func dropsAndAddsTemporalLayersWithoutKeyframes() throws {
        var h = SimulcastHarness()
        h.answerRequests = false
        h.setTarget(MediaLayer(spatial: 0))
        try h.run(frames: 8)
        // Only the base layer: TIDs 2 and 1 go from the next picture on.
        h.setTarget(MediaLayer(spatial: 0, temporal: 0))
        #expect(h.requests.count == 1)
        let base = try h.run(frames: 8)
        #expect(base.allSatisfy { $0.packet.temporalLayer == 0 })
        #expect(base.count > 0)
        #expect(h.outcomes.suffix(24).contains { $0.outcome.selectorDrop == .temporalLayerAbove })
        // Up to TID 1: on the next TID 1 picture with Y.
        h.setTarget(MediaLayer(spatial: 0, temporal: 1))
        let mid = try h.run(frames: 12)
        let firstT1 = try #require(mid.first { $0.packet.temporalLayer == 1 })
        #expect(firstT1.packet.layerSync)
        #expect(mid.allSatisfy { $0.packet.temporalLayer <= 1 })
        #expect(h.forwarder.currentLayer == MediaLayer(spatial: 0, temporal: 1))
        // All layers: TID 2 comes back at its next sync picture.
        h.setTarget(MediaLayer(spatial: 0))
        let all = try h.run(frames: 12)
        let firstT2 = try #require(all.first { $0.packet.temporalLayer == 2 })
        #expect(firstT2.packet.layerSync)
        #expect(h.requests.count == 1)  // none for temporal changes
        #expect(h.forwarder.switchesCompleted == 1)
        expectContinuous(h.sent)
    }

    @Test func raisesTemporalLayersOneAtATime() throws {
        // A TID 2 sync picture cannot bring TID 2 in while TID 1 is still
        // missing: later TID 2 pictures reference TID 1 ones.
        var f = SimulcastForwarder(outgoingSSRC: SSRC(9), clockRate: 90_000)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        f.setTarget(MediaLayer(spatial: 0, temporal: 0), now: t0)
        func packet(_ seq: UInt16, tid: UInt8, sync: Bool = false, key: Bool = false) -> SimulcastPacket {
            SimulcastPacket(
                source: SourcePacket(
                    ssrc: SSRC(1), sequenceNumber: seq, timestamp: UInt32(seq) * 3000, isSwitchPoint: key),
                spatialLayer: 0, temporalLayer: tid, layerSync: sync)
        }
        #expect(f.handle(packet(1, tid: 0, key: true), arrival: t0).selectorDrop == nil)
        f.setTarget(MediaLayer(spatial: 0), now: t0)
        #expect(f.handle(packet(2, tid: 2, sync: true), arrival: t0).selectorDrop == .temporalLayerAbove)
        #expect(f.handle(packet(3, tid: 1, sync: false), arrival: t0).selectorDrop == .temporalLayerAbove)
        #expect(f.handle(packet(4, tid: 1, sync: true), arrival: t0).selectorDrop == nil)
        #expect(f.currentLayer == MediaLayer(spatial: 0, temporal: 1))
        #expect(f.handle(packet(5, tid: 2, sync: false), arrival: t0).selectorDrop == .temporalLayerAbove)
        #expect(f.handle(packet(6, tid: 2, sync: true), arrival: t0).selectorDrop == nil)
        #expect(f.currentLayer == MediaLayer(spatial: 0, temporal: 2))
        #expect(f.handle(packet(7, tid: 2), arrival: t0).selectorDrop == nil)
    }

    @Test func pausedForwardsNothingAndResumesOnAKeyframe() throws {
        var h = SimulcastHarness()
        h.answerRequests = false
        h.setTarget(MediaLayer(spatial: 0))
        try h.run(frames: 10)
        h.setTarget(nil)
        #expect(h.forwarder.currentLayer == nil)
        let paused = try h.run(frames: 10)
        #expect(paused.isEmpty)
        #expect(h.outcomes.suffix(30).allSatisfy { $0.outcome.selectorDrop == .paused })
        #expect(h.requests.count == 1)
        h.setTarget(MediaLayer(spatial: 0))
        // Layer 0's next keyframe is frame 30.
        let resumed = try h.run(frames: 15)
        let first = try #require(resumed.first)
        #expect(first.packet.frame == 30)
        #expect(first.packet.isKeyframeStart)
        #expect(h.requests.count == 2)
        #expect(h.forwarder.switchesCompleted == 2)
        expectContinuous(h.sent)
    }

    @Test func fallsBackAtOnceWhenTheCurrentLayerGoesSilent() throws {
        var h = SimulcastHarness()
        h.setTarget(MediaLayer(spatial: 2))
        try h.run(frames: 10)
        #expect(h.forwarder.currentLayer?.spatial == 2)
        h.silent = [2]
        let lastHigh = try #require(h.sent.last)
        // 150 ms (the suspect timeout, under 5 frames) of quiet: the first
        // packet after that asks for layer 1, the publisher answers next
        // frame, and that keyframe is taken at once, long before the layer
        // would count as silent (300 ms).
        let sent = try h.run(frames: 12)
        let fallbackRequest = try #require(h.requests.last)
        #expect(fallbackRequest.layer == 1)
        #expect(fallbackRequest.at - lastHigh.arrival >= .milliseconds(150))
        #expect(fallbackRequest.at - lastHigh.arrival < .milliseconds(150) + .nanoseconds(33_333_334))
        let first = try #require(sent.first)
        #expect(first.packet.spatialLayer == 1)
        #expect(first.packet.isKeyframeStart)
        #expect(first.arrival - lastHigh.arrival < .milliseconds(250))
        #expect(h.forwarder.fallbacks == 1)
        #expect(h.forwarder.target == MediaLayer(spatial: 2))
        #expect(h.forwarder.currentLayer?.spatial == 1)
        // Layer 2 comes back: the forwarder goes up again on its keyframe.
        h.silent = []
        let back = try h.run(frames: 5)
        #expect(back.last?.packet.spatialLayer == 2)
        #expect(h.forwarder.fallbacks == 1)
        expectContinuous(h.sent)
    }

    @Test func tickNoticesSilenceWhenNoPacketArrives() throws {
        var h = SimulcastHarness()
        h.setTarget(MediaLayer(spatial: 1))
        try h.run(frames: 4)
        #expect(h.forwarder.currentLayer?.spatial == 1)
        let last = h.now
        let heard = try #require(h.sent.last?.arrival)
        // First the suspect timeout (150 ms of quiet), then silence (300 ms).
        #expect(h.forwarder.nextDeadline == heard + .milliseconds(150))
        // Nothing reaches the forwarder; the worker still sees layer 0. At
        // 200 ms layer 1 is quiet: ask for the fallback's keyframe early.
        let early = h.forwarder.tick(now: last + .milliseconds(200)) { $0 == 0 ? last + .milliseconds(190) : nil }
        #expect(early == 0)
        #expect(h.forwarder.pendingSpatialLayer == nil)
        #expect(h.forwarder.nextDeadline != nil)
        // At 320 ms layer 1 is silent: the switch to 0 is pending; its
        // keyframe was asked for 120 ms ago (throttled per layer).
        let request = h.forwarder.tick(now: last + .milliseconds(320)) { $0 == 0 ? last + .milliseconds(310) : nil }
        #expect(request == nil)
        #expect(h.forwarder.pendingSpatialLayer == 0)
        #expect(h.forwarder.fallbacks == 1)
        #expect(h.forwarder.tick(now: last + .milliseconds(650)) { $0 == 0 ? last + .milliseconds(640) : nil } == nil)
        #expect(h.forwarder.tick(now: last + .milliseconds(710)) { $0 == 0 ? last + .milliseconds(700) : nil } == 0)
    }

    @Test func missingLayerIsGivenUpAfterOneTimeout() throws {
        // Only two layers published; the target asks for a third.
        var stream = SimulcastStream.threeLayers()
        stream.layers.removeLast()
        var h = SimulcastHarness(stream: stream)
        h.setTarget(MediaLayer(spatial: 2))
        let sent = try h.run(frames: 20)
        let first = try #require(sent.first)
        #expect(first.packet.spatialLayer == 1)
        #expect(first.arrival - h.start < .milliseconds(400))
        #expect(h.forwarder.fallbacks == 1)
    }

    @Test func throttlesKeyframeRequestsPerLayer() throws {
        var f = SimulcastForwarder(outgoingSSRC: SSRC(9), clockRate: 90_000)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        func delta(_ layer: Int, _ seq: UInt16) -> SimulcastPacket {
            SimulcastPacket(
                source: SourcePacket(ssrc: SSRC(UInt32(layer + 1)), sequenceNumber: seq, timestamp: UInt32(seq)),
                spatialLayer: layer, temporalLayer: nil, layerSync: false)
        }
        f.setTarget(MediaLayer(spatial: 2), now: t0)
        #expect(f.handle(delta(2, 1), arrival: t0).keyframeRequest == 2)
        #expect(f.handle(delta(2, 2), arrival: t0 + .milliseconds(100)).keyframeRequest == nil)
        f.setTarget(MediaLayer(spatial: 1), now: t0 + .milliseconds(200))
        #expect(f.handle(delta(1, 1), arrival: t0 + .milliseconds(200)).keyframeRequest == 1)
        f.setTarget(MediaLayer(spatial: 2), now: t0 + .milliseconds(250))
        #expect(f.handle(delta(2, 3), arrival: t0 + .milliseconds(300)).keyframeRequest == nil)
        #expect(f.handle(delta(2, 4), arrival: t0 + .milliseconds(499)).keyframeRequest == nil)
        #expect(f.handle(delta(2, 5), arrival: t0 + .milliseconds(500)).keyframeRequest == 2)
        #expect(f.handle(delta(2, 6), arrival: t0 + .milliseconds(999)).keyframeRequest == nil)
        #expect(f.handle(delta(2, 7), arrival: t0 + .milliseconds(1000)).keyframeRequest == 2)
        #expect(f.keyframeRequestsSent == 4)
    }

    @Test func spatialLayerOutOfRangeIsDroppedWithAReason() throws {
        var f = SimulcastForwarder(outgoingSSRC: SSRC(9), clockRate: 90_000)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        f.setTarget(MediaLayer(spatial: 7, temporal: -3), now: t0)
        #expect(f.target == MediaLayer(spatial: 2, temporal: 0))
        for layer in [-1, 3, Int.max, Int.min] {
            let p = SimulcastPacket(
                source: SourcePacket(ssrc: SSRC(1), sequenceNumber: 1, timestamp: 1, isSwitchPoint: true),
                spatialLayer: layer, temporalLayer: 0, layerSync: false)
            let outcome = f.handle(p, arrival: t0)
            #expect(outcome == SimulcastOutcome(decision: .drop(.notForwarded), selectorDrop: .spatialLayerOutOfRange))
        }
        f.senderReport(spatialLayer: -1, ssrc: SSRC(1), ntp: 0, rtpTimestamp: 0)
        f.senderReport(spatialLayer: 3, ssrc: SSRC(1), ntp: 0, rtpTimestamp: 0)
        #expect(f.currentLayer == nil)
    }

    @Test func streamsWithoutTemporalLayersAreSelectedSpatiallyOnly() throws {
        // H264-like: no descriptor, no TID; every packet of the current
        // layer goes out whatever the temporal target.
        var f = SimulcastForwarder(outgoingSSRC: SSRC(9), clockRate: 90_000, initialSequenceNumber: 500)
        var now = Instant(nanoseconds: 1_000_000_000)
        f.setTarget(MediaLayer(spatial: 0, temporal: 0), now: now)
        var sequence: [UInt16] = []
        for i in 0..<20 {
            for layer in 0..<2 {
                let p = SimulcastPacket(
                    source: SourcePacket(
                        ssrc: SSRC(UInt32(10 + layer)), sequenceNumber: UInt16(100 * layer + i),
                        timestamp: UInt32(i) * 3000, isSwitchPoint: i == 0 || (layer == 1 && i == 10)),
                    spatialLayer: layer, temporalLayer: nil, layerSync: false)
                if case .forward(let r) = f.handle(p, arrival: now).decision { sequence.append(r.sequenceNumber) }
            }
            if i == 5 { f.setTarget(MediaLayer(spatial: 1, temporal: 0), now: now) }
            now += .milliseconds(33)
        }
        #expect(sequence == Array(500..<521))  // layer 0 for i 0...10, layer 1 for 10...19
        #expect(f.currentLayer == MediaLayer(spatial: 1, temporal: 0))
        #expect(f.rewriter.currentSource == SSRC(11))
    }

    @Test func paddingIsNeverForwardedAndDoesNotKeepALayerAlive() throws {
        var f = SimulcastForwarder(outgoingSSRC: SSRC(9), clockRate: 90_000)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        f.setTarget(MediaLayer(spatial: 1), now: t0)
        let key = SimulcastPacket(
            source: SourcePacket(ssrc: SSRC(2), sequenceNumber: 1, timestamp: 0, isSwitchPoint: true), spatialLayer: 1,
            temporalLayer: nil, layerSync: false)
        guard case .forward = f.handle(key, arrival: t0).decision else {
            Issue.record("keyframe not forwarded")
            return
        }
        for ms in stride(from: 50, through: 400, by: 50) {
            let padding = SimulcastPacket(
                source: SourcePacket(ssrc: SSRC(2), sequenceNumber: UInt16(1 + ms / 50), timestamp: 0, payloadLength: 0),
                spatialLayer: 1, temporalLayer: nil, layerSync: false)
            let outcome = f.handle(padding, arrival: t0 + .milliseconds(Int64(ms)))
            #expect(outcome.decision == .drop(.paddingOnly))
            let low = SimulcastPacket(
                source: SourcePacket(ssrc: SSRC(1), sequenceNumber: UInt16(ms), timestamp: UInt32(ms)), spatialLayer: 0,
                temporalLayer: nil, layerSync: false)
            #expect(f.handle(low, arrival: t0 + .milliseconds(Int64(ms))).selectorDrop == .otherSpatialLayer)
        }
        #expect(f.pendingSpatialLayer == 0)
    }
}
