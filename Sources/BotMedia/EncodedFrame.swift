/// One encoded media frame, ready to packetize: a VP8 frame or an H.264
/// access unit (Annex B byte stream) of a `VideoClip`, or a 20 ms Opus
/// frame of an `AudioClip`.
package struct EncodedFrame: Equatable, Sendable {
    /// The codec's bitstream for this frame (a VP8 frame as RFC 6386
    /// section 9 describes it, or one Opus packet, RFC 6716 section 3).
    package var bytes: [UInt8]
    /// VP8: an intra frame that refreshes every reference buffer. H.264:
    /// an IDR with its SPS and PPS. Audio: always false.
    package var isKeyframe: Bool
    /// The temporal layer (RFC 7741 TID), 0 for the base layer and for audio.
    package var temporalLayer: UInt8
    /// The frame references only the base layer (RFC 7741 Y bit), so a
    /// receiver may switch up to `temporalLayer` here.
    package var layerSync: Bool
    /// How long the frame lasts: the RTP timestamp step to the next frame.
    package var duration: Duration
    /// Audio: RFC 6464 level of the frame's PCM in -dBov, 0 (loudest) to
    /// 127 (digital silence). Video: 127.
    package var audioLevel: UInt8
    /// Audio: libopus produced a DTX frame (at most 2 bytes, RFC 6716
    /// section 3.1 TOC only), the encoder's sign that the input is silence.
    package var isDTXSilence: Bool
    /// Audio: whether a sender puts this frame on the wire. False for DTX
    /// frames after the first one of a silence period (see
    /// `AudioClipEncoder`). Video: always true.
    package var shouldSend: Bool

    package init(
        bytes: [UInt8], isKeyframe: Bool, temporalLayer: UInt8 = 0, layerSync: Bool = false, duration: Duration,
        audioLevel: UInt8 = 127, isDTXSilence: Bool = false, shouldSend: Bool = true
    ) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.temporalLayer = temporalLayer
        self.layerSync = layerSync
        self.duration = duration
        self.audioLevel = audioLevel
        self.isDTXSilence = isDTXSilence
        self.shouldSend = shouldSend
    }
}
