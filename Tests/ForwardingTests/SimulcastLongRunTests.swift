import SFUTesting
import Testing
import Wire

@testable import Forwarding

@Suite struct SimulcastLongRunTests {
    /// 3000 frames (100 s) with a random target (spatial, temporal, or a
    /// pause) every 10 to 40 frames and a layer silent now and then: the
    /// subscriber's stream stays continuous, every picture forwarded can be
    /// decoded, and no temporal layer above the target gets through.
    @Test(arguments: [[0, 2, 1, 2], [0, 1, 0, 1]] as [[UInt8]])
    func staysContinuousAndDecodableOverManyTargetChanges(pattern: [UInt8]) throws {
        var h = SimulcastHarness(stream: .threeLayers(keyframeInterval: 90, temporalPattern: pattern))
        var rng = SeededRandom(seed: 0x5EED_1234_ABCD_0001)
        // Decoder model of the current source: valid[t] while every
        // picture of TID t that references the past is decodable.
        var valid = [true, true, true, true]
        var decodedPictures = 0
        var checked = 0
        h.setTarget(MediaLayer(spatial: 2))
        var frames = 0
        while frames < 3000 {
            let step = 10 + rng.below(30)
            let before = h.outcomes.count
            try h.run(frames: step)
            frames += step
            for (packet, outcome) in h.outcomes[before...] where packet.payload.count > 0 {
                let isPictureStart = (try? packet.descriptor().isStartOfPartition) ?? false
                guard isPictureStart else { continue }
                let tid = Int(packet.temporalLayer)
                switch outcome.decision {
                case .forward:
                    checked += 1
                    if packet.isKeyframeStart {
                        valid = [true, true, true, true]
                    } else if packet.layerSync {
                        #expect(valid[0], "sync picture on a broken base at frame \(packet.frame)")
                        if valid[0..<tid].allSatisfy({ $0 }) { valid[tid] = true }
                    } else {
                        #expect(valid[tid], "undecodable TID \(tid) picture at frame \(packet.frame)")
                    }
                    decodedPictures += 1
                    if let target = h.forwarder.target {
                        #expect(tid <= max(target.temporal, h.forwarder.currentLayer?.temporal ?? 0))
                    }
                case .drop, .fillGap:
                    if outcome.selectorDrop == .temporalLayerAbove {
                        for t in tid..<4 { valid[t] = false }
                    }
                }
            }
            switch rng.below(10) {
            case 0: h.setTarget(nil)
            case 1: h.silent = [rng.below(3)]
            case 2, 3: h.setTarget(MediaLayer(spatial: rng.below(3), temporal: h.forwarder.target?.temporal ?? 2))
            case 4, 5: h.setTarget(MediaLayer(spatial: h.forwarder.target?.spatial ?? 1, temporal: rng.below(3)))
            default:
                h.silent = []
                h.setTarget(MediaLayer(spatial: rng.below(3), temporal: rng.below(4)))
            }
        }
        expectContinuous(h.sent)
        #expect(checked > 1000)
        #expect(decodedPictures == checked)
        #expect(h.forwarder.switchesCompleted > 20)
        #expect(h.forwarder.fallbacks > 0)
        // Every switch recorded a latency; none took longer than a request
        // interval plus a frame (the publisher answers every PLI).
        let latency = try #require(h.forwarder.lastSwitchLatency)
        #expect(latency < .milliseconds(600))
        // Requests never repeat for one layer within 500 ms.
        for layer in 0..<3 {
            let times = h.requests.filter { $0.layer == layer }.map(\.at)
            for (a, b) in zip(times, times.dropFirst()) { #expect(b - a >= .milliseconds(500)) }
        }
    }
}
