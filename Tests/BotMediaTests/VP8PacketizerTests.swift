import BotMedia
import Codecs
import RTP
import Testing
import Wire

@Test func vp8PacketCarriesHeaderExtensionsAndDescriptorFieldByField() throws {
    var packetizer = try VP8Packetizer(
        ssrc: SSRC(0x1122_3344), payloadType: PayloadType(masking: 96),
        extensionIDs: HeaderExtensionIDs(mid: 1, rtpStreamID: 2, transportWideSequenceNumber: 3, absoluteCaptureTime: 4),
        mid: "0",
        rid: "h", maxPayloadSize: 1100, initialSequenceNumber: 0xFFFF, initialPictureID: 0x1234,
        initialTL0PictureIndex: 7)
    let frame = EncodedFrame(
        bytes: [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xB4, 0x00], isKeyframe: true, temporalLayer: 0,
        layerSync: true, duration: .milliseconds(33))
    var twcc: UInt16 = 500
    var packets: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0xEE, count: 200)
    try buffer.withUnsafeMutableBytes { raw in
        try packetizer.packetize(
            frame, rtpTimestamp: 90_000, captureTime: 0xAABB_CCDD_0011_2233, transportSequenceNumber: &twcc, into: raw
        ) { packets.append(Array(raw[0..<$0])) }
    }
    let expected: [UInt8] = [
        0x90, 0xE0, 0xFF, 0xFF,  // V=2, X=1 | M=1, PT=96 | seq 65535
        0x00, 0x01, 0x5F, 0x90,  // timestamp 90000
        0x11, 0x22, 0x33, 0x44,  // SSRC
        0xBE, 0xDE, 0x00, 0x04,  // one-byte extensions, 4 words
        0x10, 0x30,  // mid (id 1, len 1) "0"
        0x20, 0x68,  // rid (id 2, len 1) "h"
        0x31, 0x01, 0xF4,  // transport-cc (id 3, len 2) 500
        0x47, 0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33,  // abs-capture-time (id 4, len 8)
        0x90,  // X=1, N=0, S=1, PID=0
        0xE0,  // I=1, L=1, T=1, K=0
        0x92, 0x34,  // M=1, picture ID 0x1234
        0x07,  // TL0PICIDX: the initial value goes to the first base-layer frame
        0x20,  // TID=0, Y=1
        0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xB4, 0x00,  // VP8 keyframe bytes
    ]
    #expect(packets == [expected])
    #expect(twcc == 501)
    #expect(packetizer.sequenceNumber == 0)
    #expect(packetizer.pictureID == 0x1235)
    let span = expected.span.bytes
    let header = try RTPHeader(parsing: span)
    let descriptor = try VP8PayloadDescriptor(parsing: span.extracting(header.payloadRange))
    #expect(descriptor.isKeyframe)
    #expect(descriptor.keyframeWidth == 320)
    #expect(descriptor.keyframeHeight == 180)
}

@Test func largeFrameIsSplitIntoEvenPacketsWithMarkerOnTheLast() throws {
    var packetizer = try VP8Packetizer(ssrc: SSRC(1), payloadType: PayloadType(masking: 96), maxPayloadSize: 100)
    let frame = EncodedFrame(
        bytes: (0..<500).map { UInt8(truncatingIfNeeded: $0) }, isKeyframe: false, temporalLayer: 2, layerSync: false,
        duration: .milliseconds(33))
    let packets = try packetizeVideo([frame], packetizer: &packetizer).map(\.bytes)
    // 94 bytes of VP8 per packet at most: 6 packets, 84 or 83 bytes each.
    #expect(packets.count == 6)
    #expect(packets.map { $0.count - 12 - 6 } == [84, 84, 83, 83, 83, 83])
    #expect(packets.map { $0[1] & 0x80 != 0 } == [false, false, false, false, false, true])
    #expect(packets.map { $0[12] } == [0x90, 0x80, 0x80, 0x80, 0x80, 0x80])
    #expect(packets.allSatisfy { $0[17] == 0x80 })  // TID 2, Y 0
    // TL0PICIDX stays at the initial value for an upper-layer frame.
    #expect(packets.allSatisfy { $0[16] == 0xFF })
    let payload = packets.flatMap { $0[18...] }
    #expect(payload == frame.bytes)
}

@Test func packetizerRefusesSmallBuffersAndBadConfiguration() throws {
    #expect(throws: BotMediaError.invalidParameter) {
        try VP8Packetizer(ssrc: SSRC(1), payloadType: PayloadType(masking: 96), maxPayloadSize: 6)
    }
    #expect(throws: BotMediaError.invalidParameter) {
        try VP8Packetizer(
            ssrc: SSRC(1), payloadType: PayloadType(masking: 96), extensionIDs: HeaderExtensionIDs(mid: 15))
    }
    #expect(throws: BotMediaError.invalidParameter) {
        try OpusPacketizer(
            ssrc: SSRC(1), payloadType: PayloadType(masking: 111),
            extensionIDs: HeaderExtensionIDs(mid: 3, audioLevel: 3))
    }
    var packetizer = try VP8Packetizer(ssrc: SSRC(1), payloadType: PayloadType(masking: 96))
    let frame = EncodedFrame(bytes: [UInt8](repeating: 1, count: 300), isKeyframe: false, duration: .zero)
    var twcc: UInt16 = 0
    var small = [UInt8](repeating: 0, count: 100)
    var emitted = 0
    #expect(throws: BotMediaError.bufferTooSmall(needed: 318)) {
        try small.withUnsafeMutableBytes { raw in
            try packetizer.packetize(
                frame, rtpTimestamp: 0, captureTime: nil, transportSequenceNumber: &twcc, into: raw
            ) { _ in emitted += 1 }
        }
    }
    #expect(emitted == 0)
    #expect(packetizer.sequenceNumber == 0)
}

@Test func opusPacketCarriesAudioLevelAndMarksTalkspurtStarts() throws {
    var packetizer = try OpusPacketizer(
        ssrc: SSRC(0xCAFE), payloadType: PayloadType(masking: 111), extensionIDs: HeaderExtensionIDs(audioLevel: 5),
        initialSequenceNumber: 10)
    let speech = EncodedFrame(
        bytes: [0x78, 0x01, 0x02], isKeyframe: false, duration: .milliseconds(20), audioLevel: 30)
    let dtxFirst = EncodedFrame(
        bytes: [0x78], isKeyframe: false, duration: .milliseconds(20), audioLevel: 127, isDTXSilence: true)
    let dtxSilent = EncodedFrame(
        bytes: [0x78], isKeyframe: false, duration: .milliseconds(20), audioLevel: 127, isDTXSilence: true,
        shouldSend: false)
    var packets: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: 100)
    var twcc: UInt16 = 0
    for (i, frame) in [speech, speech, dtxFirst, dtxSilent, dtxSilent, speech].enumerated() {
        try buffer.withUnsafeMutableBytes { raw in
            _ = try packetizer.packetize(
                frame, rtpTimestamp: UInt32(i * 960), transportSequenceNumber: &twcc, into: raw
            ) { packets.append(Array(raw[0..<$0])) }
        }
    }
    #expect(packets.count == 4)
    #expect(
        packets[0] == [
            0x90, 0xEF, 0x00, 0x0A,  // X=1 | M=1 (first packet), PT=111 | seq 10
            0x00, 0x00, 0x00, 0x00,  // timestamp 0
            0x00, 0x00, 0xCA, 0xFE,  // SSRC
            0xBE, 0xDE, 0x00, 0x01,  // one-byte extensions, 1 word
            0x50, 0x9E, 0x00, 0x00,  // audio level (id 5, len 1): V=1, 30 -dBov; padding
            0x78, 0x01, 0x02,  // Opus
        ])
    #expect(packets.map { $0[1] & 0x80 != 0 } == [true, false, false, true])
    #expect(packets.map { UInt16($0[2]) << 8 | UInt16($0[3]) } == [10, 11, 12, 13])
    #expect(packets[2][17] == 0x7F)  // DTX frame: V=0, 127
    #expect(packets[3][7] == UInt8((5 * 960) & 0xFF))
}
