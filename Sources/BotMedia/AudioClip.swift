import COpus
import CShim

/// A loop of 20 ms Opus frames (48 kHz mono) encoded once at start from
/// `SyntheticSpeech`, each with its RFC 6464 level and whether to send it.
package struct AudioClip: Equatable, Sendable {
    package static let sampleRate = 48_000
    /// 20 ms at 48 kHz.
    package static let samplesPerFrame = 960
    package var channels: Int
    package var frames: [EncodedFrame]

    package init(channels: Int, frames: [EncodedFrame]) {
        self.channels = channels
        self.frames = frames
    }

    /// RTP timestamp step per frame: RFC 7587 section 4.1 uses 48 kHz.
    package var rtpTimestampStep: UInt32 { UInt32(Self.samplesPerFrame) }
}

/// Encodes `SyntheticSpeech` with libopus: OPUS_APPLICATION_VOIP, 20 ms
/// frames, DTX on, 32 kbit/s.
///
/// What to send in silence follows libwebrtc (`WebRtcOpus_Encode`): with
/// DTX, libopus returns frames of at most 2 bytes (a TOC byte, no coded
/// audio) once the input has been silent for a while, and every 400 ms a
/// larger comfort-noise frame. The first <= 2 byte frame of a run is sent
/// so the decoder learns that the sender entered DTX; the following ones
/// are not (`shouldSend == false`); any larger frame, including the
/// periodic comfort-noise update, is sent. A receiver sees no sequence
/// number gap, only a timestamp jump, and the packetizer marks the first
/// packet after the gap (RFC 3551 section 4.1).
package enum AudioClipEncoder {
    package static let bitrate: Int32 = 32_000

    /// `seconds` 1...600; the signal starts with a pause, so a clip opens in
    /// silence like a participant who joins muted-ish.
    package static func encode(seconds: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) throws(BotMediaError) -> AudioClip {
        guard (1...600).contains(seconds) else { throw .invalidParameter }
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(Int32(AudioClip.sampleRate), 1, OPUS_APPLICATION_VOIP, &error),
            error == OPUS_OK
        else { throw .codec(error) }
        defer { opus_encoder_destroy(encoder) }
        var status = swiftlet_opus_set_dtx(encoder, 1)
        guard status == OPUS_OK else { throw .codec(status) }
        status = swiftlet_opus_set_bitrate(encoder, bitrate)
        guard status == OPUS_OK else { throw .codec(status) }

        var speech = SyntheticSpeech(seed: seed)
        var pcm = [Int16](repeating: 0, count: AudioClip.samplesPerFrame)
        var packet = [UInt8](repeating: 0, count: 1500)
        let frameCount = seconds * 50
        var frames: [EncodedFrame] = []
        frames.reserveCapacity(frameCount)
        var inDTX = false
        for _ in 0..<frameCount {
            speech.fill(&pcm)
            let level = AudioLevelMeter.level(pcm)
            let length = pcm.withUnsafeBufferPointer { input in
                packet.withUnsafeMutableBufferPointer { output -> Int32 in
                    guard let source = input.baseAddress, let target = output.baseAddress else { return OPUS_BAD_ARG }
                    return opus_encode(encoder, source, Int32(AudioClip.samplesPerFrame), target, Int32(output.count))
                }
            }
            guard length > 0 else { throw .codec(length) }
            let isDTX = length <= 2
            let send = !isDTX || !inDTX
            inDTX = isDTX
            frames.append(
                EncodedFrame(
                    bytes: Array(packet[0..<Int(length)]), isKeyframe: false, temporalLayer: 0, layerSync: false,
                    duration: .milliseconds(20), audioLevel: level, isDTXSilence: isDTX, shouldSend: send))
        }
        return AudioClip(channels: 1, frames: frames)
    }
}
