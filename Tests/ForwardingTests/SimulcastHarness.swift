import Codecs
import SFUTesting
import Testing
import Wire

@testable import Forwarding

/// The forwarder's view of a generated packet: descriptor parsed from the
/// real payload bytes.
func simulcastPacket(_ p: SimulcastStream.Packet) throws -> SimulcastPacket {
    let d = try p.descriptor()
    let source = SourcePacket(
        ssrc: SSRC(p.ssrc), sequenceNumber: p.sequenceNumber, timestamp: p.timestamp, payloadLength: p.payload.count,
        isSwitchPoint: d.isKeyframe, vp8: d)
    return SimulcastPacket(source: source, spatialLayer: p.spatialLayer)
}

/// One forwarded packet: what came in and what it became.
struct Sent {
    var packet: SimulcastStream.Packet
    var rewrite: RTPRewrite
    var arrival: Instant
}

/// Drives a `SimulcastStream` through one `SimulcastForwarder` on a
/// virtual clock: frame `i`'s packets of layer `l` arrive at
/// `start + i * 33.3 ms + l ms + k * 0.1 ms` (the layer's place in the
/// feeding order, in ms). Keyframe requests are
/// answered by the publisher on its next frame when `answerRequests`.
struct SimulcastHarness {
    var stream: SimulcastStream
    var forwarder: SimulcastForwarder
    let start = Instant(nanoseconds: 5_000_000_000)
    var answerRequests = true
    /// Feed each frame's highest layer first (and give it the earliest
    /// arrival), as when the low layer's packets come last.
    var highestLayerFirst = false
    /// Layers whose packets are lost before the SFU (the layer is silent).
    var silent: Set<Int> = []
    var sent: [Sent] = []
    var requests: [(layer: Int, at: Instant)] = []
    var outcomes: [(packet: SimulcastStream.Packet, outcome: SimulcastOutcome)] = []

    init(
        stream: SimulcastStream = .threeLayers(),
        configuration: SimulcastForwarder.Configuration = .init()
    ) {
        self.stream = stream
        forwarder = SimulcastForwarder(
            outgoingSSRC: SSRC(0xABCD), clockRate: 90_000, initialSequenceNumber: 0, initialTimestamp: 0,
            configuration: configuration)
    }

    func arrival(frame: Int, layer: Int, index: Int) -> Instant {
        let position = highestLayerFirst ? stream.layers.count - 1 - layer : layer
        return stream.captureTime(frame: frame, start: start) + .milliseconds(position) + .microseconds(100 * index)
    }

    /// The time just before the next frame's first packet.
    var now: Instant { stream.captureTime(frame: stream.frame, start: start) - .milliseconds(1) }

    mutating func setTarget(_ target: MediaLayer?) {
        forwarder.setTarget(target, now: now)
    }

    /// Feeds `count` frames; returns the packets forwarded meanwhile.
    @discardableResult
    mutating func run(frames count: Int) throws -> [Sent] {
        var out: [Sent] = []
        for _ in 0..<count {
            var packets = stream.nextFrame()
            if highestLayerFirst { packets.sort { $0.spatialLayer > $1.spatialLayer } }
            var index = 0
            var lastLayer = -1
            for p in packets where !silent.contains(p.spatialLayer) {
                if p.spatialLayer != lastLayer {
                    index = 0
                    lastLayer = p.spatialLayer
                }
                let at = arrival(frame: p.frame, layer: p.spatialLayer, index: index)
                index += 1
                let outcome = forwarder.handle(try simulcastPacket(p), arrival: at)
                outcomes.append((p, outcome))
                if let layer = outcome.keyframeRequest {
                    requests.append((layer, at))
                    if answerRequests { stream.requestKeyframe(layer: layer) }
                }
                if case .forward(let rewrite) = outcome.decision {
                    out.append(Sent(packet: p, rewrite: rewrite, arrival: at))
                }
            }
        }
        sent += out
        return out
    }
}

/// Checks what a subscriber would see: one SSRC, sequence numbers +1 each
/// packet, timestamps never backwards, picture IDs +1 per new picture and
/// shared within one, TL0PICIDX +0 or +1 per picture, every change of
/// source starting on a keyframe.
func expectContinuous(_ sent: [Sent], sourceLocation: SourceLocation = #_sourceLocation) {
    var previous: Sent?
    for s in sent {
        #expect(s.rewrite.ssrc == SSRC(0xABCD), sourceLocation: sourceLocation)
        guard let p = previous else {
            previous = s
            continue
        }
        #expect(s.rewrite.sequenceNumber == p.rewrite.sequenceNumber &+ 1, sourceLocation: sourceLocation)
        let step = Int32(bitPattern: s.rewrite.timestamp &- p.rewrite.timestamp)
        #expect(step >= 0, "timestamp went back at frame \(s.packet.frame)", sourceLocation: sourceLocation)
        let resumed = s.packet.ssrc == p.packet.ssrc && s.packet.isKeyframeStart
        if s.packet.ssrc != p.packet.ssrc {
            #expect(
                s.packet.isKeyframeStart, "switch without keyframe at frame \(s.packet.frame)", sourceLocation: sourceLocation)
            #expect(step > 0, sourceLocation: sourceLocation)
        }
        let newPicture = s.packet.ssrc != p.packet.ssrc || s.packet.pictureID != p.packet.pictureID
        if newPicture {
            #expect(s.rewrite.pictureID == ((p.rewrite.pictureID ?? 0) &+ 1) & 0x7FFF, sourceLocation: sourceLocation)
            let tl0Step = (s.rewrite.tl0PictureIndex ?? 0) &- (p.rewrite.tl0PictureIndex ?? 0)
            if resumed {
                // Resumed on the same source after a pause: TL0PICIDX
                // keeps the source's mapping, so it may skip ahead (the
                // keyframe makes the skipped base pictures irrelevant).
                #expect(tl0Step >= 1 && tl0Step < 128, sourceLocation: sourceLocation)
            } else {
                #expect(tl0Step == (s.packet.temporalLayer == 0 ? 1 : 0), sourceLocation: sourceLocation)
            }
        } else {
            #expect(s.rewrite.pictureID == p.rewrite.pictureID, sourceLocation: sourceLocation)
            #expect(s.rewrite.timestamp == p.rewrite.timestamp, sourceLocation: sourceLocation)
        }
        previous = s
    }
}
