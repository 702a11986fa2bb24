import Testing
import Wire

@testable import Forwarding

@Suite struct LatePacketPictureTests {
    private let t0 = Instant(nanoseconds: 1_000_000_000)

    private func packet(_ seq: UInt16, ts: UInt32, tid: UInt8, keyframe: Bool = false) -> SimulcastPacket {
        SimulcastPacket(
            source: SourcePacket(ssrc: SSRC(7), sequenceNumber: seq, timestamp: ts, isSwitchPoint: keyframe),
            spatialLayer: 0, temporalLayer: tid, layerSync: false)
    }

    private func forwarded(_ o: SimulcastOutcome) -> Bool {
        if case .forward = o.decision { true } else { false }
    }

    /// A picture forwarded in part must be completed by its late packets
    /// (repairs), even when the temporal target dropped below its layer in
    /// between; a picture dropped stays dropped.
    @Test func aLatePacketGetsItsOwnPicturesDecision() {
        var f = SimulcastForwarder(outgoingSSRC: SSRC(9), clockRate: 90000)
        f.setTarget(MediaLayer(spatial: 0), now: t0)
        #expect(forwarded(f.handle(packet(1, ts: 0, tid: 0, keyframe: true), arrival: t0)))
        // Picture at 3000 (TID 1): packet 2 forwarded, packet 3 lost.
        #expect(forwarded(f.handle(packet(2, ts: 3000, tid: 1), arrival: t0 + .milliseconds(33))))
        // The allocation lowers the temporal target to 0.
        f.setTarget(MediaLayer(spatial: 0, temporal: 0), now: t0 + .milliseconds(40))
        #expect(forwarded(f.handle(packet(4, ts: 6000, tid: 0), arrival: t0 + .milliseconds(66))))
        // Picture at 9000 (TID 1) is dropped whole.
        #expect(!forwarded(f.handle(packet(5, ts: 9000, tid: 1), arrival: t0 + .milliseconds(99))))
        // Repairs: packet 3 completes the picture at 3000 (forwarded);
        // a late packet of the dropped picture at 9000 stays dropped.
        #expect(forwarded(f.handle(packet(3, ts: 3000, tid: 1), arrival: t0 + .milliseconds(250))))
        #expect(!forwarded(f.handle(packet(6, ts: 9000, tid: 1), arrival: t0 + .milliseconds(260))))
    }
}

@Suite struct GapFillTests {
    private let t0 = Instant(nanoseconds: 1_000_000_000)

    /// Packet 101 is missing upstream when 102 goes out, so its number
    /// stays free; arriving late but not wanted, it gets that number as a
    /// padding fill instead of leaving a hole for good.
    @Test func aLateUnwantedPacketFillsItsNumberWithPadding() {
        var r = StreamRewriter(outgoingSSRC: SSRC(9), clockRate: 90000)
        let p1 = SourcePacket(ssrc: SSRC(5), sequenceNumber: 100, timestamp: 1000, isSwitchPoint: true)
        let p3 = SourcePacket(ssrc: SSRC(5), sequenceNumber: 102, timestamp: 4000)
        let p2 = SourcePacket(ssrc: SSRC(5), sequenceNumber: 101, timestamp: 1000)
        #expect(r.rewrite(p1, arrival: t0) == .forward(RTPRewrite(ssrc: SSRC(9), sequenceNumber: 100, timestamp: 1000)))
        #expect(r.rewrite(p3, arrival: t0) == .forward(RTPRewrite(ssrc: SSRC(9), sequenceNumber: 102, timestamp: 4000)))
        #expect(
            r.rewrite(p2, arrival: t0 + .milliseconds(200), forward: false)
                == .fillGap(RTPRewrite(ssrc: SSRC(9), sequenceNumber: 101, timestamp: 1000)))
        // Once: a duplicate of it is a duplicate.
        #expect(r.rewrite(p2, arrival: t0 + .milliseconds(210), forward: false) == .drop(.duplicate))
        // An unwanted packet ahead takes no number and fills nothing.
        let p4 = SourcePacket(ssrc: SSRC(5), sequenceNumber: 103, timestamp: 7000)
        #expect(r.rewrite(p4, arrival: t0 + .milliseconds(220), forward: false) == .drop(.notForwarded))
    }
}
