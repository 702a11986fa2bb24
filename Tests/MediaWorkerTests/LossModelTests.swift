import SFUTesting
import Testing
import Wire

/// The simulation's own models must be right before their results mean
/// anything.
@Suite struct LossModelTests {
    @Test(arguments: [0.01, 0.05, 0.10])
    func burstyLossAveragesToItsTargetInBurstsOfAboutThree(averageLoss: Double) {
        var model = GilbertElliottLoss.bursty(averageLoss: averageLoss, meanBurst: 3, seed: 42)
        var bursts = 0
        var previous = false
        for _ in 0..<200_000 {
            let lost = model.nextIsLost()
            if lost, !previous { bursts += 1 }
            previous = lost
        }
        let rate = Double(model.lost) / Double(model.packets)
        #expect(abs(rate - averageLoss) < averageLoss * 0.15)
        let meanBurst = Double(model.lost) / Double(bursts)
        #expect(meanBurst > 2.5 && meanBurst < 3.5)
    }

    @Test func capacityQueueSpacesPacketsAndDropsBeyondItsLimit() {
        var link = LossyLink(delay: .milliseconds(100), capacity: .kbps(800), queueLimit: .milliseconds(50))
        let a = TransportAddress(ipv4: 10, 0, 0, 1, port: 1)
        let start = Instant(nanoseconds: 1_000_000_000)
        // 972 + 28 bytes = 8000 bits: 10 ms each at 800 kbit/s.
        for _ in 0..<10 { link.send([UInt8](repeating: 0, count: 972), from: a, to: a, now: start) }
        #expect(link.queueDrops == 4)  // the 7th waits 60 ms > 50 ms
        var times: [Duration] = []
        while let d = link.receive(now: start + .seconds(1)) { times.append(d.deliverAt - start) }
        #expect(times == (1...6).map { .milliseconds(100 + 10 * $0) })
    }

    @Test func decoderModelStopsAtALostFrameUntilTheNextKeyframe() {
        var stream = SimulcastStream.threeLayers(keyframeInterval: 10, temporalPattern: [0])
        var model = VP8DecoderModel(giveUp: .milliseconds(300))
        var now = Instant(nanoseconds: 1_000_000_000)
        for frame in 0..<25 {
            for p in stream.nextFrame() where p.spatialLayer == 0 {
                // Frame 3 loses its last packet for good.
                if frame == 3, p.isLastOfFrame { continue }
                model.receive(
                    RTPBuilders.packet(
                        sequenceNumber: p.sequenceNumber, timestamp: p.timestamp, ssrc: p.ssrc, marker: p.isLastOfFrame,
                        payload: p.payload), now: now)
            }
            now += .milliseconds(33)
            model.update(now: now)
        }
        // Frames 0-2 decode, 3-9 fail (TL0 chain), keyframe 10 and the
        // rest decode.
        #expect(model.decodeTimes.count == 3 + 15)
        #expect(model.failedFrames == 7)
        #expect(model.width == 320)
        #expect(model.needsKeyframe == false)
    }
}

@Suite struct DecoderModelFillerTests {
    /// A padding-only packet between two frames is a number sent with no
    /// frame in it: the next frame still decodes (no hole, no keyframe).
    @Test func paddingBetweenFramesIsNotAMissingFrame() throws {
        var model = VP8DecoderModel(giveUp: .milliseconds(300))
        let t0 = Instant(nanoseconds: 1_000_000_000)
        func frame(_ seq: UInt16, ts: UInt32, key: Bool, picture: UInt16) -> [UInt8] {
            RTPBuilders.packet(
                payloadType: 96, sequenceNumber: seq, timestamp: ts, ssrc: 1, marker: true,
                payload: RTPBuilders.vp8Payload(pictureID: picture, keyframe: key) + [0x00])
        }
        model.receive(frame(10, ts: 0, key: true, picture: 1), now: t0)
        // 11: padding only (P bit, 4 bytes of padding).
        var padding = RTPBuilders.packet(payloadType: 96, sequenceNumber: 11, timestamp: 0, ssrc: 1, payload: [0, 0, 0, 4])
        padding[0] |= 0x20
        model.receive(padding, now: t0 + .milliseconds(10))
        model.receive(frame(12, ts: 3000, key: false, picture: 2), now: t0 + .milliseconds(33))
        model.update(now: t0 + .seconds(1))
        #expect(model.decodeTimes.count == 2)
        #expect(model.failedFrames == 0)
        #expect(!model.needsKeyframe)
        #expect(model.malformedPackets == 0)
    }
}
