import BotMedia
import RTP
import Testing
import Wire

@Test func packetizedClipReassemblesIntoCompleteDecodableFramesWithExactBytes() throws {
    let clip = SharedClips.small
    var packetizer = try VP8Packetizer(
        ssrc: SSRC(7), payloadType: PayloadType(masking: 96), extensionIDs: HeaderExtensionIDs(absoluteCaptureTime: 9),
        maxPayloadSize: 300)
    let packets = try packetizeVideo(clip.frames, packetizer: &packetizer) { UInt64($0) << 32 | 0x8000_0000 }
    #expect(packets.count > clip.frames.count)
    var assembler = VP8FrameAssembler(absCaptureTimeID: 9, reassemblyCapacity: 1 << 20)
    var now = Instant.zero
    var completed = 0
    for (index, packet) in packets {
        let span = packet.span.bytes
        let header = try RTPHeader(parsing: span)
        now += .milliseconds(1)
        guard let frame = assembler.handle(header, packet: span, arrival: now) else { continue }
        #expect(frame.rtpTimestamp == UInt32(index) * 3000)
        #expect(frame.isDecodable)
        #expect(frame.isKeyframe == clip.frames[index].isKeyframe)
        #expect(frame.temporalLayer == clip.frames[index].temporalLayer)
        #expect(frame.captureTime == UInt64(index) << 32 | 0x8000_0000)
        #expect(frame.completedAt == now)
        let bytes = Array(assembler.frameBuffer[0..<frame.byteCount])
        #expect(bytes == clip.frames[index].bytes)
        if frame.isKeyframe {
            #expect(frame.width == 320)
            #expect(frame.height == 180)
        }
        completed += 1
    }
    let stats = assembler.statistics
    #expect(completed == 60)
    #expect(stats.framesComplete == 60)
    #expect(stats.keyframes == 3)
    #expect(stats.framesUndecodable == 0)
    #expect(stats.framesIncomplete == 0)
    #expect(stats.packetsLost == 0)
    #expect(stats.switches == 0)
    #expect(assembler.resolution?.width == 320)
}

@Test func losingOnePacketOfABaseFrameBreaksDeltaFramesUntilTheNextKeyframe() throws {
    let clip = SharedClips.small
    var packetizer = try VP8Packetizer(ssrc: SSRC(7), payloadType: PayloadType(masking: 96), maxPayloadSize: 200)
    var packets = try packetizeVideo(clip.frames, packetizer: &packetizer)
    // Frame 8 is a base-layer delta frame (keyframes at 0, 20, 40); drop
    // its first packet.
    #expect(clip.frames[8].temporalLayer == 0 && !clip.frames[8].isKeyframe)
    let dropAt = try #require(packets.firstIndex { $0.frame == 8 })
    packets.remove(at: dropAt)
    var assembler = VP8FrameAssembler()
    let frames = try assemble(packets.map(\.bytes), into: &assembler)
    let stats = assembler.statistics
    #expect(stats.packetsLost == 1)
    #expect(stats.framesIncomplete == 1)
    #expect(stats.framesComplete == 59)
    // Frames 9...19 follow the broken base frame and precede keyframe 20.
    #expect(stats.framesUndecodable == 11)
    let undecodable = frames.filter { !$0.isDecodable }.map { Int($0.rtpTimestamp / 3000) }
    #expect(undecodable == Array(9...19))
    #expect(frames.first { $0.rtpTimestamp == 20 * 3000 }?.isDecodable == true)
}

@Test func losingAnUpperLayerFrameBreaksOnlyFramesThatReferenceIt() throws {
    let clip = SharedClips.small
    var packetizer = try VP8Packetizer(ssrc: SSRC(7), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    var packets = try packetizeVideo(clip.frames, packetizer: &packetizer)
    // Frame 6 is TL1 (pattern 0,2,1,2): frame 7 (TL2, not sync) reads it.
    #expect(clip.frames[6].temporalLayer == 1 && clip.frames[7].temporalLayer == 2 && !clip.frames[7].layerSync)
    packets.removeAll { $0.frame == 6 }
    var assembler = VP8FrameAssembler()
    let frames = try assemble(packets.map(\.bytes), into: &assembler)
    let undecodable = frames.filter { !$0.isDecodable }.map { Int($0.rtpTimestamp / 3000) }
    #expect(undecodable == [7])
    #expect(assembler.statistics.framesUndecodable == 1)
}

@Test func nothingIsDecodableBeforeTheFirstKeyframe() throws {
    let clip = SharedClips.small
    var packetizer = try VP8Packetizer(ssrc: SSRC(7), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    let packets = try packetizeVideo(Array(clip.frames[1..<25]), packetizer: &packetizer)
    var assembler = VP8FrameAssembler()
    let frames = try assemble(packets.map(\.bytes), into: &assembler)
    // Frames 1...19 of the clip precede keyframe 20 (index 19 here).
    #expect(frames.filter { !$0.isDecodable }.count == 19)
    #expect(frames[19].isKeyframe && frames[19].isDecodable)
}

@Test func resolutionChangeOnAKeyframeCountsASwitchOnKeyframe() throws {
    var packetizer = try VP8Packetizer(ssrc: SSRC(7), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    // Same SSRC, sequence numbers and picture IDs continue: what an SFU
    // that rewrites a layer switch sends.
    let sequence = Array(SharedClips.small.frames[0..<10]) + Array(SharedClips.medium.frames[0..<5])
    let packets = try packetizeVideo(sequence, packetizer: &packetizer)
    var assembler = VP8FrameAssembler()
    let frames = try assemble(packets.map(\.bytes), into: &assembler)
    #expect(assembler.statistics.switches == 1)
    #expect(assembler.statistics.switchesNotOnKeyframe == 0)
    #expect(assembler.statistics.framesUndecodable == 0)
    #expect(frames[10].width == 640 && frames[10].height == 360)
    #expect(assembler.resolution?.height == 360)
}

@Test func ssrcChangeOntoADeltaFrameCountsASwitchNotOnKeyframe() throws {
    var low = try VP8Packetizer(ssrc: SSRC(1), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    var high = try VP8Packetizer(ssrc: SSRC(2), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    let first = try packetizeVideo(Array(SharedClips.small.frames[0..<10]), packetizer: &low)
    // Switch onto delta frames 2...9 of the other stream, then its keyframe.
    let second = try packetizeVideo(Array(SharedClips.medium.frames[2..<11]), packetizer: &high)
    var assembler = VP8FrameAssembler()
    let frames = try assemble((first + second).map(\.bytes), into: &assembler)
    let stats = assembler.statistics
    #expect(stats.switches == 1)
    #expect(stats.switchesNotOnKeyframe == 1)
    #expect(stats.framesUndecodable == 8)
    #expect(frames.last?.isKeyframe == true && frames.last?.isDecodable == true)
}

@Test func ssrcChangeOntoAKeyframeIsAGoodSwitch() throws {
    var low = try VP8Packetizer(ssrc: SSRC(1), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    var high = try VP8Packetizer(ssrc: SSRC(2), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    let first = try packetizeVideo(Array(SharedClips.small.frames[0..<5]), packetizer: &low)
    let second = try packetizeVideo(Array(SharedClips.medium.frames[0..<5]), packetizer: &high)
    var assembler = VP8FrameAssembler()
    _ = try assemble((first + second).map(\.bytes), into: &assembler)
    #expect(assembler.statistics.switches == 1)
    #expect(assembler.statistics.switchesNotOnKeyframe == 0)
    #expect(assembler.statistics.framesUndecodable == 0)
}

@Test func malformedDuplicateAndTruncatedPacketsAreCountedNotTrusted() throws {
    var packetizer = try VP8Packetizer(ssrc: SSRC(7), payloadType: PayloadType(masking: 96), maxPayloadSize: 1100)
    let packets = try packetizeVideo(Array(SharedClips.small.frames[0..<2]), packetizer: &packetizer).map(\.bytes)
    var assembler = VP8FrameAssembler()
    // An RTP packet whose payload is a lone descriptor byte with X set.
    let badDescriptor: [UInt8] = [0x80, 0x60, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0, 7, 0x80]
    // Empty payload.
    let empty: [UInt8] = [0x80, 0x60, 0x00, 0x06, 0, 0, 0, 0, 0, 0, 0, 7]
    let sequence = [packets[0], packets[0], badDescriptor, empty] + packets[1...]
    let frames = try assemble(sequence, into: &assembler)
    #expect(frames.count == 2)
    #expect(assembler.statistics.malformedPackets == 2)
    #expect(assembler.statistics.packetsOutOfOrder == 1)
}
