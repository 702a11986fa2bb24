import BotMedia
import RTP
import Testing
import Wire

/// Frames of `clip` packetized with 10 VP8 bytes per packet (frames of
/// 23...37 bytes take 3 or 4 packets); packets grouped by frame.
private func packetsByFrame(_ clip: VideoClip) throws -> [[[UInt8]]] {
    var packetizer = try VP8Packetizer(ssrc: SSRC(9), payloadType: PayloadType(masking: 96), maxPayloadSize: 16)
    var twcc: UInt16 = 0
    var buffer = [UInt8](repeating: 0, count: 200)
    return try clip.frames.enumerated().map { i, frame in
        var packets: [[UInt8]] = []
        try buffer.withUnsafeMutableBytes { raw in
            try packetizer.packetize(
                frame, rtpTimestamp: UInt32(i) * 3000, captureTime: nil, transportSequenceNumber: &twcc, into: raw
            ) { n in packets.append(Array(raw[0..<n])) }
        }
        return packets
    }
}

/// Feeds `packets` at `arrival`; returns the frame indices released
/// (timestamp / 3000) in order, with their decodability.
private func feed(
    _ assembler: inout VP8FrameAssembler, _ packets: [[UInt8]], arrival: Instant = .zero
) throws -> [(index: Int, decodable: Bool)] {
    var out: [(index: Int, decodable: Bool)] = []
    for packet in packets {
        let span = packet.span.bytes
        var next = assembler.handle(try RTPHeader(parsing: span), packet: span, arrival: arrival)
        while let frame = next {
            out.append((Int(frame.rtpTimestamp / 3000), frame.isDecodable))
            next = assembler.nextFrame()
        }
    }
    return out
}

@Test func lateRetransmittedPacketCompletesThePendingFrameAndReleasesTheOnesBehindIt() throws {
    let frames = try packetsByFrame(PublisherFixtures.videoClip(count: 6, keyframeInterval: 6))
    #expect(frames[1].count == 3)
    var assembler = VP8FrameAssembler()
    #expect(try feed(&assembler, frames[0]).map(\.index) == [0])
    let lost = frames[1][1]
    // Frame 1 without its middle packet, then frames 2 and 3 complete.
    #expect(try feed(&assembler, [frames[1][0], frames[1][2]] + frames[2] + frames[3]).isEmpty)
    #expect(assembler.pendingFrames == 3)
    // The retransmission arrives: 1, 2 and 3 come out in order, decodable.
    let released = try feed(&assembler, [lost], arrival: Instant(nanoseconds: 50_000_000))
    #expect(released.map(\.index) == [1, 2, 3])
    #expect(released.allSatisfy { $0.decodable })
    let s = assembler.statistics
    #expect(s.packetsLost == 1)
    #expect(s.packetsRecovered == 1)
    #expect(s.framesCompletedLate == 1)
    #expect(s.framesComplete == 4)
    #expect(s.framesIncomplete == 0)
    #expect(s.framesUndecodable == 0)
    #expect(assembler.pendingFrames == 0)
    // The same packet again is a duplicate.
    #expect(try feed(&assembler, [lost]).isEmpty)
    #expect(assembler.statistics.packetsOutOfOrder == 1)
}

@Test func wholeFrameLostThenRetransmittedIsInsertedInOrder() throws {
    let frames = try packetsByFrame(PublisherFixtures.videoClip(count: 6, keyframeInterval: 6))
    var assembler = VP8FrameAssembler()
    #expect(try feed(&assembler, frames[0] + frames[1]).map(\.index) == [0, 1])
    // Frame 2 vanishes; 3 and 4 are complete but the picture ID skipped.
    #expect(try feed(&assembler, frames[3] + frames[4]).isEmpty)
    let released = try feed(&assembler, frames[2].reversed())
    #expect(released.map(\.index) == [2, 3, 4])
    #expect(released.allSatisfy { $0.decodable })
    #expect(assembler.statistics.packetsRecovered == frames[2].count)
    #expect(assembler.statistics.framesUndecodable == 0)
}

@Test func pendingFrameIsGivenUpAfterReorderFramesNewerFrames() throws {
    let frames = try packetsByFrame(PublisherFixtures.videoClip(count: 6, keyframeInterval: 6))
    var assembler = VP8FrameAssembler(reorderFrames: 2)
    _ = try feed(&assembler, frames[0])
    let lost = frames[1][1]
    var released = try feed(&assembler, [frames[1][0], frames[1][2]] + frames[2])
    #expect(released.isEmpty)
    // A third frame behind the hole: frame 1 is given up; 2 and 3 are
    // released undecodable (their base-layer reference is gone).
    released = try feed(&assembler, frames[3])
    #expect(released.map(\.index) == [2, 3])
    #expect(released.map(\.decodable) == [false, false])
    let s = assembler.statistics
    #expect(s.framesIncomplete == 1)
    #expect(s.framesUndecodable == 2)
    // Too late now: the frame was given up.
    #expect(try feed(&assembler, [lost]).isEmpty)
    #expect(assembler.statistics.packetsOutOfOrder == 1)
    #expect(assembler.statistics.packetsRecovered == 0)
}

@Test func pendingFrameIsGivenUpAfterTheReorderWindow() throws {
    let frames = try packetsByFrame(PublisherFixtures.videoClip(count: 6, keyframeInterval: 6))
    var assembler = VP8FrameAssembler(reorderWindow: .milliseconds(100))
    _ = try feed(&assembler, frames[0])
    #expect(try feed(&assembler, [frames[1][0], frames[1][2]], arrival: Instant(nanoseconds: 10_000_000)).isEmpty)
    #expect(try feed(&assembler, frames[2], arrival: Instant(nanoseconds: 100_000_000)).isEmpty)
    // 100 ms after frame 1's first packet is still inside; 1 ns more is not.
    let released = try feed(&assembler, frames[3], arrival: Instant(nanoseconds: 110_000_001))
    #expect(released.map(\.index) == [2, 3])
    #expect(assembler.statistics.framesIncomplete == 1)
}

@Test func flushGivesUpEverythingPending() throws {
    let frames = try packetsByFrame(PublisherFixtures.videoClip(count: 6, keyframeInterval: 3))
    var assembler = VP8FrameAssembler()
    _ = try feed(&assembler, frames[0] + [frames[1][0]] + frames[2])
    let first = assembler.flush(now: .zero)
    #expect(first?.rtpTimestamp == 6000)
    #expect(first?.isDecodable == false)
    #expect(assembler.nextFrame() == nil)
    #expect(assembler.pendingFrames == 0)
    #expect(assembler.statistics.framesIncomplete == 1)
}

@Test func onlyFramesReceivedInOrderHaveTheirBytesReassembled() throws {
    let clip = PublisherFixtures.videoClip(count: 3, keyframeInterval: 3)
    let frames = try packetsByFrame(clip)
    var assembler = VP8FrameAssembler(reassemblyCapacity: 100)
    var last: VP8FrameAssembler.Frame?
    for packet in frames[0] {
        let span = packet.span.bytes
        last = assembler.handle(try RTPHeader(parsing: span), packet: span, arrival: .zero) ?? last
    }
    let first = try #require(last)
    #expect(first.hasBytes)
    #expect(Array(assembler.frameBuffer[0..<first.byteCount]) == clip.frames[0].bytes)
    var late: VP8FrameAssembler.Frame?
    for packet in [frames[1][0], frames[1][2], frames[1][1]] {
        let span = packet.span.bytes
        late = assembler.handle(try RTPHeader(parsing: span), packet: span, arrival: .zero) ?? late
    }
    #expect(late?.rtpTimestamp == 3000)
    #expect(late?.hasBytes == false)
}

@Test func packetsTooFarBehindAreIgnored() throws {
    let frames = try packetsByFrame(PublisherFixtures.videoClip(count: 3, keyframeInterval: 3))
    var assembler = VP8FrameAssembler()
    _ = try feed(&assembler, frames[0])
    // Sequence number 2,000 back (it wraps to "behind" in 16 bits).
    var old = frames[1][0]
    let s = UInt16(old[2]) << 8 | UInt16(old[3])
    let back = s &- 2000
    old[2] = UInt8(back >> 8)
    old[3] = UInt8(back & 0xFF)
    #expect(try feed(&assembler, [old]).isEmpty)
    #expect(assembler.statistics.packetsOutOfOrder == 1)
    #expect(assembler.pendingFrames == 0)
}

@Test func completeKeyframeBehindAPendingFrameReleasesAtOnce() throws {
    let frames = try packetsByFrame(PublisherFixtures.videoClip(count: 6, keyframeInterval: 3))
    var assembler = VP8FrameAssembler()
    _ = try feed(&assembler, frames[0])
    #expect(try feed(&assembler, [frames[1][0], frames[1][2]] + frames[2]).isEmpty)
    // Keyframe 3 completes: 1 is given up, 2 (undecodable) and 3 come out.
    let released = try feed(&assembler, frames[3])
    #expect(released.map(\.index) == [2, 3])
    #expect(released.map(\.decodable) == [false, true])
    #expect(assembler.statistics.framesIncomplete == 1)
}

@Test func baseLayerFrameAfterALostUpperLayerFrameIsReleasedWithoutWaiting() throws {
    let clip = SharedClips.small
    // Pattern 0, 2, 1, 2: frame 7 is TL2, frame 8 the next TL0 frame.
    #expect(clip.frames[7].temporalLayer == 2 && clip.frames[8].temporalLayer == 0)
    var packetizer = try VP8Packetizer(ssrc: SSRC(7), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    let packets = try packetizeVideo(Array(clip.frames[0..<10]), packetizer: &packetizer).filter { $0.frame != 7 }
    var assembler = VP8FrameAssembler(reorderFrames: 50, reorderWindow: .seconds(10))
    let frames = try assemble(packets.map(\.bytes), into: &assembler)
    // TL0PICIDX shows no base frame was lost: 8 needs only base frames.
    #expect(frames.map { Int($0.rtpTimestamp / 3000) } == [0, 1, 2, 3, 4, 5, 6, 8, 9])
    #expect(frames.map(\.isDecodable) == [true, true, true, true, true, true, true, true, true])
    #expect(assembler.pendingFrames == 0)
    #expect(assembler.statistics.framesIncomplete == 0)
}

@Test func upperLayerFrameAfterALostFrameItMayReferenceWaits() throws {
    let clip = SharedClips.small
    // Frame 6 is TL1; frame 7 (TL2, not sync) may reference it.
    #expect(clip.frames[6].temporalLayer == 1 && !clip.frames[7].layerSync)
    var packetizer = try VP8Packetizer(ssrc: SSRC(7), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    let all = try packetizeVideo(Array(clip.frames[0..<8]), packetizer: &packetizer)
    var assembler = VP8FrameAssembler(reorderFrames: 50, reorderWindow: .seconds(10))
    let frames = try assemble(all.filter { $0.frame != 6 }.map(\.bytes), into: &assembler)
    #expect(frames.map { Int($0.rtpTimestamp / 3000) } == [0, 1, 2, 3, 4, 5])
    #expect(assembler.pendingFrames == 1)
    // Frame 6 retransmitted: 6 and 7 follow, both decodable.
    let late = try assemble(all.filter { $0.frame == 6 }.map(\.bytes), into: &assembler)
    #expect(late.map { Int($0.rtpTimestamp / 3000) } == [6, 7])
    #expect(late.map(\.isDecodable) == [true, true])
}

@Test func shuffledDuplicatedAndRenumberedPacketsNeverTrapAndStayBounded() throws {
    let frames = try packetsByFrame(PublisherFixtures.videoClip(count: 6, keyframeInterval: 3)).flatMap { $0 }
    var assembler = VP8FrameAssembler(reassemblyCapacity: 64, reorderFrames: 4)
    var state: UInt64 = 0x1234_5678_9ABC_DEF1
    func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    var released = 0
    for step in 0..<20_000 {
        var packet = frames[Int(next() % UInt64(frames.count))]
        let r = next()
        // Rewrite sequence number, timestamp and marker at random, within
        // a drifting window so gaps, wraps, duplicates and jumps all occur.
        let base = UInt16(truncatingIfNeeded: step / 3)
        let sequence = base &+ UInt16(truncatingIfNeeded: r % 64) &- 32
        packet[2] = UInt8(sequence >> 8)
        packet[3] = UInt8(sequence & 0xFF)
        if r & 0x100 != 0 { packet[7] = UInt8(truncatingIfNeeded: r >> 16) }
        if r & 0x200 != 0 { packet[1] ^= 0x80 }
        if r & 0x3000 == 0x3000 { packet[9] ^= 1 }  // another SSRC
        let span = packet.span.bytes
        var frame = assembler.handle(
            try RTPHeader(parsing: span), packet: span, arrival: Instant(nanoseconds: Int64(step) * 1_000_000))
        while let f = frame {
            #expect(f.packetCount >= 1)
            #expect(!f.hasBytes || f.byteCount <= 64)
            released += 1
            frame = assembler.nextFrame()
        }
        #expect(assembler.pendingFrames <= 5)
    }
    let s = assembler.statistics
    #expect(s.packets == 20_000)
    #expect(released == s.framesComplete)
    #expect(s.framesComplete > 0)
}
