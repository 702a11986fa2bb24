import Codecs
import SFUTesting
import Testing
import Wire

@testable import Forwarding

/// A VP8 packet as the rewriter sees it: descriptor parsed from a real
/// payload built by `RTPBuilders.vp8Payload`.
private func vp8Packet(
    ssrc: UInt32, seq: UInt16, pictureID: UInt16, tl0: UInt8 = 0, tid: UInt8 = 0, keyframe: Bool = false
) throws -> SourcePacket {
    let payload = RTPBuilders.vp8Payload(
        pictureID: pictureID, tl0PictureIndex: tl0, temporalLayer: tid, keyframe: keyframe)
    let descriptor = try VP8PayloadDescriptor(parsing: payload.span.bytes)
    return SourcePacket(
        ssrc: SSRC(ssrc), sequenceNumber: seq, timestamp: UInt32(seq) * 3000, payloadLength: payload.count,
        isSwitchPoint: descriptor.isKeyframe, vp8: descriptor)
}

private func rewritten(_ decision: ForwardDecision) -> RTPRewrite? {
    if case .forward(let r) = decision { return r }
    return nil
}

private func makeRewriter() -> StreamRewriter {
    StreamRewriter(outgoingSSRC: SSRC(9), clockRate: 90_000, initialSequenceNumber: 0, initialTimestamp: 0)
}

@Test func continuesPictureIDAndTL0AcrossASourceSwitch() throws {
    var r = makeRewriter()
    var now = Instant(nanoseconds: 1_000_000_000)
    for i in 0..<5 {
        let p = try vp8Packet(ssrc: 1, seq: UInt16(10 + i), pictureID: UInt16(100 + i), tl0: UInt8(7 + i), keyframe: i == 0)
        let out = try #require(rewritten(r.rewrite(p, arrival: now)))
        #expect(out.pictureID == UInt16(100 + i))
        #expect(out.tl0PictureIndex == UInt8(7 + i))
        now += .milliseconds(33)
    }
    // New source: picture 20000, TL0PICIDX 200, a keyframe.
    let first = try vp8Packet(ssrc: 2, seq: 5000, pictureID: 20_000, tl0: 200, keyframe: true)
    let out = try #require(rewritten(r.rewrite(first, arrival: now)))
    #expect(out.pictureID == 105)
    #expect(out.tl0PictureIndex == 12)
    #expect(out.sequenceNumber == 5)
    // A second packet of the same picture keeps its ID.
    let same = try vp8Packet(ssrc: 2, seq: 5001, pictureID: 20_000, tl0: 200)
    #expect(rewritten(r.rewrite(same, arrival: now))?.pictureID == 105)
    // A TL1 picture in the same TL0 period keeps TL0PICIDX.
    let next = try vp8Packet(ssrc: 2, seq: 5002, pictureID: 20_001, tl0: 200, tid: 1)
    let nextOut = try #require(rewritten(r.rewrite(next, arrival: now)))
    #expect(nextOut.pictureID == 106)
    #expect(nextOut.tl0PictureIndex == 12)
}

@Test func pictureIDWrapsAt15Bits() throws {
    var r = makeRewriter()
    let now = Instant.zero
    let ids: [UInt16] = [0x7FFD, 0x7FFE, 0x7FFF, 0, 1]
    for (i, id) in ids.enumerated() {
        let p = try vp8Packet(ssrc: 1, seq: UInt16(i), pictureID: id, keyframe: i == 0)
        #expect(rewritten(r.rewrite(p, arrival: now))?.pictureID == id)
    }
    // A switch right after the wrap continues at 2.
    let p = try vp8Packet(ssrc: 2, seq: 900, pictureID: 0x4000, keyframe: true)
    #expect(rewritten(r.rewrite(p, arrival: now))?.pictureID == 2)

    // And a switch right before the wrap continues at 0.
    var s = makeRewriter()
    _ = s.rewrite(try vp8Packet(ssrc: 1, seq: 1, pictureID: 0x7FFF, keyframe: true), arrival: now)
    let q = try vp8Packet(ssrc: 2, seq: 77, pictureID: 300, keyframe: true)
    #expect(rewritten(s.rewrite(q, arrival: now))?.pictureID == 0)
    let q2 = try vp8Packet(ssrc: 2, seq: 78, pictureID: 301)
    #expect(rewritten(s.rewrite(q2, arrival: now))?.pictureID == 1)
}

@Test func droppedPicturesLeaveNoPictureIDGap() throws {
    var r = makeRewriter()
    let now = Instant.zero
    // (seq, picture, tid, forward, expected picture out)
    let rows: [(UInt16, UInt16, UInt8, Bool, UInt16?)] = [
        (1, 50, 0, true, 50),
        (2, 51, 2, false, nil),  // TL2 picture, two packets, dropped
        (3, 51, 2, false, nil),
        (4, 52, 1, true, 51),
        (6, 54, 0, true, 53),  // 53 was lost upstream: its ID is kept
        (5, 53, 2, true, 52),  // ... and it arrives late
        (7, 55, 2, false, nil),
        (8, 56, 0, true, 54),
        (9, 55, 2, true, 53),  // forwarding a late packet of a dropped picture is the caller's error; no crash
    ]
    for (i, (seq, picture, tid, forward, want)) in rows.enumerated() {
        let p = try vp8Packet(ssrc: 1, seq: seq, pictureID: picture, tid: tid, keyframe: i == 0)
        let d = r.rewrite(p, arrival: now, forward: forward)
        #expect(rewritten(d)?.pictureID == want, "row \(i)")
    }
}

@Test func sevenBitPictureIDsContinueModulo128() throws {
    var r = makeRewriter()
    let now = Instant.zero
    _ = r.rewrite(try vp8Packet(ssrc: 1, seq: 1, pictureID: 0x1234, keyframe: true), arrival: now)
    // A source with a 7-bit picture ID (M = 0): X, S; I; picture 5; then a
    // keyframe tag.
    var payload: [UInt8] = [0x90, 0x80, 0x05, 0x50, 0x42, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0x68, 0x01]
    let descriptor = try VP8PayloadDescriptor(parsing: payload.span.bytes)
    #expect(!descriptor.hasLongPictureID)
    let p = SourcePacket(
        ssrc: SSRC(2), sequenceNumber: 9, timestamp: 0, payloadLength: payload.count, isSwitchPoint: true, vp8: descriptor)
    let out = try #require(rewritten(r.rewrite(p, arrival: now)))
    #expect(out.pictureID == 0x1235)
    // Written into the 7-bit field: the low 7 bits.
    let ok = payload.withUnsafeMutableBytes {
        descriptor.rewritePictureID(out.pictureID ?? 0, in: MutableBytes($0), payloadOffset: 0)
    }
    #expect(ok)
    #expect(payload[2] == 0x35)
    // 7-bit IDs wrap at 128 within the source (steps under 64): 127 -> 0
    // continues the outgoing counter.
    let rows: [(UInt8, UInt16)] = [
        (6, 0x1236), (60, 0x1235 + 55), (110, 0x1235 + 105), (127, 0x1235 + 122), (0, 0x1235 + 123), (1, 0x1235 + 124),
    ]
    for (i, (id, want)) in rows.enumerated() {
        payload[2] = id
        let d = try VP8PayloadDescriptor(parsing: payload.span.bytes)
        let q = SourcePacket(ssrc: SSRC(2), sequenceNumber: UInt16(10 + i), timestamp: 0, payloadLength: 13, vp8: d)
        #expect(rewritten(r.rewrite(q, arrival: now))?.pictureID == want, "picture \(id)")
    }
}
