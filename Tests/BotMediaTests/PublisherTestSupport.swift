import RTP
import Wire

@testable import BotMedia

/// Small synthetic clips and a virtual-time driver for `MediaPublisher`
/// tests: frames are tiny, so every frame is exactly one RTP packet and
/// the tests can count packets per frame.
enum PublisherFixtures {
    /// A VP8 keyframe's first 10 bytes (RFC 6386 section 9.1): frame tag
    /// with P = 0, the start code 9d 01 2a, then 14-bit width and height,
    /// little-endian; followed by `extra` filler bytes.
    static func keyframeBytes(width: UInt16, height: UInt16, extra: Int = 20) -> [UInt8] {
        [
            0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF),
            UInt8(height >> 8),
        ] + [UInt8](repeating: 0xAB, count: extra)
    }

    /// `count` frames at 30 fps, a keyframe every `keyframeInterval`, one
    /// temporal layer; frame i's filler length is 20 + i so frames differ.
    static func videoClip(
        count: Int = 6, keyframeInterval: Int = 3, width: UInt16 = 320, height: UInt16 = 180
    )
        -> VideoClip
    {
        let frames = (0..<count).map { i in
            i % keyframeInterval == 0
                ? EncodedFrame(
                    bytes: keyframeBytes(width: width, height: height, extra: 20 + i), isKeyframe: true,
                    duration: .milliseconds(33))
                : EncodedFrame(
                    bytes: [0x11, 0x02, 0x00] + [UInt8](repeating: UInt8(i), count: 20 + i), isKeyframe: false,
                    duration: .milliseconds(33))
        }
        return VideoClip(
            width: Int(width), height: Int(height), framesPerSecond: 30, temporalLayers: 1,
            keyframeInterval: keyframeInterval, targetBitrate: .kbps(100), frames: frames)
    }

    /// Five 20 ms Opus-shaped frames (the publisher does not decode them).
    static let audioClip = AudioClip(
        channels: 1,
        frames: (0..<5).map { i in
            EncodedFrame(
                bytes: [0x78] + [UInt8](repeating: UInt8(i), count: 10), isKeyframe: false,
                duration: .milliseconds(20), audioLevel: 30)
        })

    static let ids = HeaderExtensionIDs(
        mid: 1, rtpStreamID: 2, absoluteSendTime: 4, transportWideSequenceNumber: 5, audioLevel: 6, absoluteCaptureTime: 7)

    static let configuration = PublisherMediaConfiguration(
        audioSSRC: SSRC(1111), audioMID: "0", audioPayloadType: PayloadType(masking: 111),
        audioExtensions: HeaderExtensionIDs(
            mid: 1, absoluteSendTime: 4, transportWideSequenceNumber: 5, audioLevel: 6, absoluteCaptureTime: 7),
        videoLayers: [
            .init(rid: "q", ssrc: SSRC(100), rtxSSRC: SSRC(101)),
            .init(rid: "h", ssrc: SSRC(200), rtxSSRC: SSRC(201)),
        ],
        videoMID: "1", videoPayloadType: PayloadType(masking: 96), videoRTXPayloadType: PayloadType(masking: 97),
        videoExtensions: ids, repairedRIDExtensionID: 3)

    /// NTP 1 s after 1900 at instant zero keeps the arithmetic readable.
    static let clock = NTPClock(base: 1 << 32, epoch: .zero)

    static func publisher(
        configuration: PublisherMediaConfiguration = configuration, video: [VideoClip]? = nil, audio: AudioClip? = audioClip
    ) throws -> MediaPublisher {
        try MediaPublisher(
            configuration: configuration, audioClip: audio, videoClips: video ?? [videoClip(), videoClip()],
            clock: clock, start: .zero, seed: 42)
    }
}

/// One packet a publisher produced, with the header fields tests check.
struct SentPacket {
    var at: Instant
    var bytes: [UInt8]
    var header: RTPHeader

    var ssrc: UInt32 { header.ssrc.rawValue }
    var sequenceNumber: UInt16 { header.sequenceNumber }

    /// The bytes of one-byte extension `id`, or nil.
    func extensionValue(_ id: UInt8) -> [UInt8]? {
        let span = bytes.span.bytes
        guard let range = header.extensionValueRange(id: id, in: span) else { return nil }
        return Array(bytes[range])
    }

    func extensionUInt(_ id: UInt8) -> UInt64? {
        extensionValue(id).map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
    }

    var payload: [UInt8] { Array(bytes[header.payloadRange]) }
}

/// Drains `publisher` at `now`: every packet it has due.
func drain(_ publisher: MediaPublisher, at now: Instant) throws -> [SentPacket] {
    var out: [SentPacket] = []
    var buffer = [UInt8](repeating: 0, count: 1500)
    while true {
        let n = buffer.withUnsafeMutableBytes { publisher.nextPacket(into: $0, now: now) }
        guard let n else { return out }
        let bytes = Array(buffer[0..<n])
        out.append(SentPacket(at: now, bytes: bytes, header: try RTPHeader(parsing: bytes.span.bytes)))
    }
}

/// Runs `publisher` on virtual time, waking exactly at each deadline,
/// until `end` (inclusive); returns every packet with its send time.
func run(_ publisher: MediaPublisher, from start: Instant = .zero, until end: Instant) throws -> [SentPacket] {
    var now = start
    var out: [SentPacket] = []
    while now <= end {
        out += try drain(publisher, at: now)
        guard let next = publisher.nextDeadline(), next > now else { break }
        now = next
    }
    return out
}
