import RTP
import Testing
import Wire

@testable import BotMedia

private let frameInterval: Int64 = 1_000_000_000 / 30  // 33_333_333 ns

@Test func publisherPacesThirtyFramesPerSecondPerLayerAndAudioEveryTwentyMilliseconds() throws {
    let publisher = try PublisherFixtures.publisher()
    let sent = try run(publisher, until: Instant(nanoseconds: 100_000_000))
    let audio = sent.filter { $0.ssrc == 1111 }
    #expect(audio.map(\.at.nanoseconds) == [0, 20, 40, 60, 80, 100].map { $0 * 1_000_000 })
    for ssrc: UInt32 in [100, 200] {
        let layer = sent.filter { $0.ssrc == ssrc }
        #expect(layer.map(\.at.nanoseconds) == [0, frameInterval, 2 * frameInterval, 3 * frameInterval])
        let t0 = try #require(layer.first).header.timestamp
        #expect(layer.map { $0.header.timestamp &- t0 } == [0, 3000, 6000, 9000])
        let s0 = try #require(layer.first).sequenceNumber
        #expect(layer.map { $0.sequenceNumber &- s0 } == [0, 1, 2, 3])
        #expect(layer.allSatisfy { $0.header.marker && $0.header.payloadType.rawValue == 96 })
    }
    let t0 = try #require(audio.first).header.timestamp
    #expect(audio.map { $0.header.timestamp &- t0 } == [0, 960, 1920, 2880, 3840, 4800])
    #expect(audio.allSatisfy { $0.header.payloadType.rawValue == 111 })
    // At a shared instant audio goes first, then the layers in order.
    #expect(sent.prefix(3).map(\.ssrc) == [1111, 100, 200])
    #expect(sent.count == 14)
    #expect(publisher.statistics.packetsSent == 14)
    #expect(publisher.statistics.framesSent == 14)
    #expect(publisher.nextDeadline() == Instant(nanoseconds: 120_000_000))
}

@Test func transportWideSequenceNumberCountsAcrossAllStreamsInSendOrder() throws {
    let publisher = try PublisherFixtures.publisher()
    let sent = try run(publisher, until: Instant(nanoseconds: 200_000_000))
    let numbers = try sent.map { try #require($0.extensionUInt(5)) }
    #expect(Set(sent.map(\.ssrc)) == [1111, 100, 200])
    let first = try #require(numbers.first)
    #expect(numbers == (0..<numbers.count).map { UInt64(UInt16(truncatingIfNeeded: Int(first) + $0)) })
    #expect(UInt64(publisher.transportSequenceNumber) == (first + UInt64(numbers.count)) & 0xFFFF)
}

@Test func packetsCarryTheConfiguredExtensionsWithExactValues() throws {
    let publisher = try PublisherFixtures.publisher()
    let sent = try run(publisher, until: Instant(nanoseconds: 40_000_000))
    let clock = PublisherFixtures.clock
    for packet in sent {
        #expect(packet.extensionUInt(7) == clock.ntp(at: packet.at))
        #expect(packet.extensionUInt(4) == UInt64(clock.absSendTime(at: packet.at)))
        #expect(packet.extensionValue(5)?.count == 2)
    }
    let audio = try #require(sent.first { $0.ssrc == 1111 })
    #expect(audio.extensionValue(1) == Array("0".utf8))
    #expect(audio.extensionValue(2) == nil)
    #expect(audio.extensionValue(6) == [0x80 | 30])  // V bit (speech) and level 30
    #expect(audio.extensionUInt(7) == 1 << 32)  // NTP base at instant zero
    #expect(audio.header.marker)  // first packet of a talkspurt
    let low = try #require(sent.first { $0.ssrc == 100 })
    #expect(low.extensionValue(1) == Array("1".utf8))
    #expect(low.extensionValue(2) == Array("q".utf8))
    #expect(low.extensionValue(6) == nil)
    let high = try #require(sent.first { $0.ssrc == 200 })
    #expect(high.extensionValue(2) == Array("h".utf8))
    // 20 ms = 0x051EB851 in UQ32.32 (floor).
    let second = try #require(sent.first { $0.ssrc == 1111 && $0.at == Instant(nanoseconds: 20_000_000) })
    #expect(second.extensionUInt(7) == 1 << 32 | 0x051E_B851)
    #expect(second.extensionUInt(4) == (1 << 18 | 0x051E_B851 >> 14) & 0xFF_FFFF)
}

@Test func keyframeRequestMakesTheLayersNextFrameTheClipsNextKeyframe() throws {
    let clip = PublisherFixtures.videoClip()  // keyframes at 0 and 3
    let publisher = try PublisherFixtures.publisher(video: [clip, clip])
    _ = try run(publisher, until: Instant(nanoseconds: frameInterval))  // frames 0 and 1
    #expect(publisher.requestKeyframe(ssrc: SSRC(100)))
    #expect(!publisher.requestKeyframe(ssrc: SSRC(999)))
    #expect(!publisher.requestKeyframe(ssrc: SSRC(1111)))  // audio has no keyframes
    let next = try drain(publisher, at: Instant(nanoseconds: 2 * frameInterval))
    let low = try #require(next.first { $0.ssrc == 100 })
    let high = try #require(next.first { $0.ssrc == 200 })
    let descriptor = VP8Packetizer.descriptorLength
    #expect(Array(low.payload.dropFirst(descriptor)) == clip.frames[3].bytes)
    #expect(Array(high.payload.dropFirst(descriptor)) == clip.frames[2].bytes)
    // The RTP timestamp keeps its pace: the jump skips content, not time.
    #expect(publisher.statistics.keyframeRequests == 1)
    #expect(publisher.statistics.keyframesSent == 3)  // frame 0 twice, frame 3 once
}

@Test func keyframeRequestOnAKeyframeDueNextChangesNothing() throws {
    let clip = PublisherFixtures.videoClip()
    let publisher = try PublisherFixtures.publisher(video: [clip], audio: nil)
    _ = try run(publisher, until: Instant(nanoseconds: 2 * frameInterval))  // frames 0, 1, 2
    publisher.requestKeyframe(ssrc: SSRC(100))
    let next = try drain(publisher, at: Instant(nanoseconds: 3 * frameInterval))
    #expect(next.count == 1)
    #expect(Array(try #require(next.first).payload.dropFirst(VP8Packetizer.descriptorLength)) == clip.frames[3].bytes)
}

@Test func nackIsAnsweredAsRTXWithOriginalSequenceNumberFromTheHistory() throws {
    let publisher = try PublisherFixtures.publisher()
    let sent = try run(publisher, until: Instant(nanoseconds: frameInterval))
    let low = sent.filter { $0.ssrc == 100 }
    #expect(low.count == 2)
    let original = low[1]
    let lastTWCC = try #require(sent.last?.extensionUInt(5))
    publisher.retransmit(ssrc: SSRC(100), sequenceNumbers: [original.sequenceNumber, low[0].sequenceNumber])
    #expect(publisher.hasQueuedPackets)
    let now = Instant(nanoseconds: 40_000_000)
    let rtx = try drain(publisher, at: now).filter { $0.ssrc == 101 }
    #expect(rtx.count == 2)
    let first = try #require(rtx.first)
    #expect(first.header.payloadType.rawValue == 97)
    #expect(first.header.timestamp == original.header.timestamp)
    #expect(first.header.marker == original.header.marker)
    // RFC 4588 section 4: OSN, then the original payload byte for byte.
    #expect(first.payload == [UInt8(original.sequenceNumber >> 8), UInt8(original.sequenceNumber & 0xFF)] + original.payload)
    #expect(first.extensionValue(3) == Array("q".utf8))  // repaired-rtp-stream-id
    #expect(first.extensionValue(2) == nil)
    #expect(first.extensionValue(7) == nil)
    #expect(first.extensionValue(1) == Array("1".utf8))
    #expect(first.extensionUInt(5) == (lastTWCC + 1) & 0xFFFF)
    #expect(first.extensionUInt(4) == UInt64(PublisherFixtures.clock.absSendTime(at: now)))
    #expect(rtx[1].sequenceNumber == first.sequenceNumber &+ 1)
    #expect(rtx[1].payload.prefix(2) == [UInt8(low[0].sequenceNumber >> 8), UInt8(low[0].sequenceNumber & 0xFF)])
    #expect(publisher.statistics.nackedPackets == 2)
    #expect(publisher.statistics.retransmissions == 2)
    #expect(publisher.statistics.retransmissionsMissed == 0)
}

@Test func nackForAudioOrAnUnsentNumberIsNotAnswered() throws {
    let publisher = try PublisherFixtures.publisher()
    let sent = try run(publisher, until: .zero)
    let audio = try #require(sent.first { $0.ssrc == 1111 })
    let low = try #require(sent.first { $0.ssrc == 100 })
    publisher.retransmit(ssrc: SSRC(1111), sequenceNumbers: [audio.sequenceNumber])
    publisher.retransmit(ssrc: SSRC(100), sequenceNumbers: [low.sequenceNumber &+ 5])
    #expect(try drain(publisher, at: .zero).isEmpty)
    #expect(publisher.statistics.nackedPackets == 1)
    #expect(publisher.statistics.retransmissionsMissed == 1)
}

@Test func nackForAPacketEvictedFromTheHistoryIsNotAnswered() throws {
    let publisher = try PublisherFixtures.publisher(audio: nil)
    let sent = try run(publisher, until: Instant(nanoseconds: 18_000_000_000))
    // 2 layers x 30 fps x 18 s = 1080 packets > 1024 slots.
    #expect(sent.count == 1082)
    let oldest = try #require(sent.first { $0.ssrc == 100 })
    let recent = try #require(sent.last { $0.ssrc == 100 })
    publisher.retransmit(ssrc: SSRC(100), sequenceNumbers: [oldest.sequenceNumber, recent.sequenceNumber])
    let rtx = try drain(publisher, at: Instant(nanoseconds: 18_000_000_000))
    #expect(rtx.count == 1)
    #expect(rtx.first?.payload.prefix(2) == [UInt8(recent.sequenceNumber >> 8), UInt8(recent.sequenceNumber & 0xFF)])
    #expect(publisher.statistics.retransmissionsMissed == 1)
}

@Test func inactiveLayerStopsAndResumesOnAKeyframe() throws {
    let clip = PublisherFixtures.videoClip()  // keyframes at 0 and 3 of 6
    let publisher = try PublisherFixtures.publisher(video: [clip, clip], audio: nil)
    let start = try drain(publisher, at: .zero)
    #expect(start.map(\.ssrc) == [100, 200])
    publisher.setActive(rid: "h", false)
    #expect(publisher.isActive(rid: "h") == false)
    #expect(publisher.isActive(rid: "q") == true)
    #expect(publisher.isActive(rid: "x") == nil)
    // Frames 1...3 of "h" pass while it is off (33, 66, 100 ms).
    let off = try run(publisher, from: Instant(nanoseconds: frameInterval), until: Instant(nanoseconds: 110_000_000))
    #expect(off.allSatisfy { $0.ssrc == 100 })
    #expect(off.count == 3)
    publisher.setActive(rid: "h", true)
    let on = try drain(publisher, at: Instant(nanoseconds: 4 * frameInterval))
    let high = try #require(on.first { $0.ssrc == 200 })
    // Frame 4 was due; the next keyframe is frame 0 after the loop point.
    #expect(Array(high.payload.dropFirst(VP8Packetizer.descriptorLength)) == clip.frames[0].bytes)
    // Sequence numbers stay continuous; the timestamp covers the pause.
    #expect(high.sequenceNumber == start[1].sequenceNumber &+ 1)
    #expect(high.header.timestamp == start[1].header.timestamp &+ 4 * 3000)
}
