import COpus
import RTP
import Wire

/// Decodes every received Opus payload (RFC 7587) with libopus, the way a
/// real receiver would, and counts what went wrong: decode errors, lost
/// packets (sequence gaps) and the frames packet loss concealment filled
/// in for them. A DTX gap moves the RTP timestamp but not the sequence
/// number, so it is not loss.
///
/// Owns the libopus decoder and a PCM buffer for 120 ms (the longest Opus
/// packet, RFC 6716 section 3.2.5), both allocated once: the per-packet
/// path allocates nothing.
package struct OpusStreamChecker: ~Copyable {
    package struct Statistics: Equatable, Sendable {
        package var packets = 0
        package var packetsDecoded = 0
        package var decodeErrors = 0
        package var packetsLost = 0
        /// Duplicate or late packets, ignored.
        package var packetsOutOfOrder = 0
        package var concealedFrames = 0
        package var samplesDecoded = 0
        package var ssrcChanges = 0
        package init() {}
    }

    /// At most this many frames are concealed per gap: a long outage is
    /// counted, not synthesized.
    package static let maxConcealedPerGap = 5

    package private(set) var statistics = Statistics()
    private let decoder: OpaquePointer
    private let pcm: UnsafeMutablePointer<Int16>
    /// Samples per channel the PCM buffer holds: 120 ms at 48 kHz.
    private static let maxSamplesPerChannel: Int32 = 5760
    private let channels: Int32
    private var ssrc: SSRC?
    private var lastSequenceNumber: UInt16?

    /// `channels` 1 or 2.
    package init(channels: Int = 1) throws(BotMediaError) {
        guard channels == 1 || channels == 2 else { throw .invalidParameter }
        var error: Int32 = 0
        guard let decoder = opus_decoder_create(48_000, Int32(channels), &error), error == OPUS_OK else {
            throw .codec(error)
        }
        self.decoder = decoder
        self.channels = Int32(channels)
        pcm = .allocate(capacity: Int(Self.maxSamplesPerChannel) * channels)
    }

    deinit {
        opus_decoder_destroy(decoder)
        pcm.deallocate()
    }

    /// Feeds one RTP packet: `header` parsed from `packet`.
    package mutating func handle(_ header: RTPHeader, packet: RawSpan) {
        statistics.packets += 1
        if let current = ssrc, current != header.ssrc {
            statistics.ssrcChanges += 1
            lastSequenceNumber = nil
        }
        ssrc = header.ssrc
        if let last = lastSequenceNumber {
            let delta = header.sequenceNumber &- last
            if delta == 0 || delta >= 0x8000 {
                statistics.packetsOutOfOrder += 1
                return
            }
            if delta > 1 {
                let lost = Int(delta) - 1
                statistics.packetsLost += lost
                for _ in 0..<min(lost, Self.maxConcealedPerGap) {
                    let samples = opus_decode(decoder, nil, 0, pcm, 960, 0)
                    if samples > 0 { statistics.concealedFrames += 1 }
                }
            }
        }
        lastSequenceNumber = header.sequenceNumber
        guard header.payloadRange.upperBound <= packet.byteCount, header.payloadLength > 0 else {
            statistics.decodeErrors += 1
            return
        }
        let samples = packet.extracting(header.payloadRange).withUnsafeBytes { bytes -> Int32 in
            guard let base = bytes.baseAddress else { return OPUS_BAD_ARG }
            return opus_decode(
                decoder, base.assumingMemoryBound(to: UInt8.self), Int32(bytes.count), pcm,
                Self.maxSamplesPerChannel, 0)
        }
        if samples < 0 {
            statistics.decodeErrors += 1
        } else {
            statistics.packetsDecoded += 1
            statistics.samplesDecoded += Int(samples)
        }
    }
}
