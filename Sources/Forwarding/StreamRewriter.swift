import Codecs
import RTP
import Wire

/// Rewrites one published track for one subscriber so that the subscriber
/// sees a single continuous RTP stream, whatever happens upstream: the
/// publisher restarting with a new SSRC, or (with the simulcast selector)
/// a switch to another layer. LiveKit calls this an RTPMunger; mediasoup
/// spreads it over its SeqManager and consumers.
///
/// Invariants of the outgoing stream:
/// - One SSRC, `outgoingSSRC`.
/// - Sequence numbers have no gaps of our making and never go backwards: a
///   new source's first packet takes the last number sent + 1; packets the
///   caller drops, or padding-only packets, take no number
///   (`ContiguousNumbering`). Gaps the network made upstream stay gaps, so
///   the subscriber can NACK them; if such a packet arrives late it gets
///   the number it would have had in order.
/// - Timestamps never go backwards across a switch: the new source's first
///   timestamp is the highest one sent plus the wall-clock time since that
///   one's first packet arrived, in clock ticks (at least 1), unless
///   `alignNextSource` gave an offset (from SR NTP mapping) that lands
///   ahead of it.
/// - VP8: picture IDs continue across a switch (the first new picture gets
///   the last + 1) and stay contiguous when the caller drops whole
///   pictures; every packet of a picture keeps the same ID. TL0PICIDX
///   continues with the last + 1 when the new source starts on a base-layer
///   picture. The outgoing picture ID counter is 15 bits; a source with a
///   7-bit field is unwrapped modulo 128 and its field receives the
///   counter's low 7 bits, so it stays continuous modulo 128.
/// - Only a switch point (`SourcePacket.isSwitchPoint`: keyframe start for
///   video, any packet for audio) makes a new SSRC the current source; late
///   packets of the previous source are then dropped.
/// - Packets of the current source older than the switch point, duplicates,
///   and packets more than 256 sequence numbers late are dropped; but a
///   switch point that far behind (a restart that kept the SSRC: the 16-bit
///   unwrapping sees any jump over 32767 as backwards) starts the source
///   over, continuing the outgoing stream like a new SSRC would.
///
/// Per packet nothing allocates: all state is inline (bit windows of 256).
package struct StreamRewriter: Sendable {
    package let outgoingSSRC: SSRC
    /// RTP clock rate of the track in Hz.
    package let clockRate: UInt32
    /// How many times the source changed (the first source counts).
    package private(set) var sourceSwitches = 0

    private let initialSequenceNumber: UInt16?
    private let initialTimestamp: UInt32?
    private var source: Source?
    private var alignment: (ssrc: SSRC, offset: UInt32)?

    // The outgoing stream so far, in 64-bit extended outgoing values.
    private var lastSequenceNumber: UInt64?
    private var lastTimestamp: (value: UInt64, arrival: Instant)?
    private var lastPictureID: UInt64?
    private var lastTL0PictureIndex: UInt8?

    /// `initialSequenceNumber` / `initialTimestamp` are the first outgoing
    /// values (RFC 3550 section 5.1 wants them random; the caller draws
    /// them). Nil keeps the first source's own values.
    package init(
        outgoingSSRC: SSRC, clockRate: UInt32, initialSequenceNumber: UInt16? = nil, initialTimestamp: UInt32? = nil
    ) {
        self.outgoingSSRC = outgoingSSRC
        self.clockRate = clockRate
        self.initialSequenceNumber = initialSequenceNumber
        self.initialTimestamp = initialTimestamp
    }

    /// The SSRC being forwarded now.
    package var currentSource: SSRC? { source?.ssrc }

    /// Places the next switch to `ssrc` on the current source's timeline:
    /// `offset` is added to the new source's RTP timestamps to express them
    /// as the current source's (from the two sources' SR NTP/RTP pairs). It
    /// is used only if the result lies ahead of the last timestamp sent, and
    /// forgotten at the next switch, whichever SSRC it is to.
    package mutating func alignNextSource(ssrc: SSRC, timestampOffset offset: UInt32) {
        alignment = (ssrc, offset)
    }

    /// Decides what to do with `packet`, which arrived at `arrival`.
    /// `forward: false` means the caller's selector does not want it (it is
    /// then accounted as dropped so that numbering stays contiguous).
    package mutating func rewrite(_ packet: SourcePacket, arrival: Instant, forward: Bool = true) -> ForwardDecision {
        let wanted = forward && packet.payloadLength > 0
        let unwantedReason: DropReason = packet.payloadLength > 0 ? .notForwarded : .paddingOnly
        guard let current = source?.ssrc, current == packet.ssrc else {
            guard wanted else { return .drop(unwantedReason) }
            guard packet.isSwitchPoint else { return .drop(.notCurrentSource) }
            return startSource(packet, arrival: arrival)
        }
        let outcome =
            source?.process(packet, wanted: wanted, lastPictureID: lastPictureID, lastTL0PictureIndex: lastTL0PictureIndex)
            ?? .drop(.notCurrentSource)
        switch outcome {
        case .drop(.outsideHistory) where wanted && packet.isSwitchPoint:
            // The same SSRC far behind everything recent, at a point a
            // decoder can start from: the publisher restarted its numbering
            // without a new SSRC. Start over as if it were a new source,
            // rather than dropping everything from now on.
            return startSource(packet, arrival: arrival)
        case .drop(let reason):
            return .drop(reason == .notForwarded ? unwantedReason : reason)
        case .forward(let mapped):
            return emit(mapped, arrival: arrival)
        case .fillGap(let mapped):
            return .fillGap(
                RTPRewrite(
                    ssrc: outgoingSSRC, sequenceNumber: UInt16(truncatingIfNeeded: mapped.sequenceNumber),
                    timestamp: UInt32(truncatingIfNeeded: mapped.timestamp)))
        }
    }

    /// Writes `rewrite` into `packet` (see `RTPRewrite.apply`).
    @discardableResult
    package static func apply(
        _ rewrite: RTPRewrite, to packet: MutableBytes, header: RTPHeader, vp8: VP8PayloadDescriptor? = nil
    ) -> Bool {
        rewrite.apply(to: packet, header: header, vp8: vp8)
    }

    // MARK: - Switching

    private mutating func startSource(_ packet: SourcePacket, arrival: Instant) -> ForwardDecision {
        var sequences = SequenceNumberUnwrapper()
        var timestamps = TimestampUnwrapper()
        let n = sequences.unwrap(packet.sequenceNumber)
        let t = timestamps.unwrap(packet.timestamp)
        let sequenceOut =
            lastSequenceNumber.map { $0 &+ 1 } ?? initialSequenceNumber.map { 1 << 16 | UInt64($0) } ?? n
        let timestampOut: UInt64
        if let last = lastTimestamp {
            let elapsed = max(1, (arrival - last.arrival).rtpTicks(clockRate: clockRate))
            var candidate = last.value &+ UInt64(elapsed)
            if let a = alignment, a.ssrc == packet.ssrc, let old = source {
                // The new timestamp on the old source's timeline, then
                // mapped the way the old source's packets were.
                let onOld = packet.timestamp &+ a.offset &+ UInt32(truncatingIfNeeded: old.timestampOffset)
                let ahead = Int32(bitPattern: onOld &- UInt32(truncatingIfNeeded: last.value))
                if ahead > 0 { candidate = last.value &+ UInt64(ahead) }
            }
            timestampOut = candidate
        } else {
            timestampOut = initialTimestamp.map { 1 << 32 | UInt64($0) } ?? t
        }
        alignment = nil
        sourceSwitches += 1
        var newSource = Source(
            ssrc: packet.ssrc, sequences: sequences, timestamps: timestamps,
            numbering: ContiguousNumbering(first: n, outgoing: sequenceOut), timestampOffset: timestampOut &- t)
        let vp8 = newSource.mapVP8(
            packet.vp8, forward: true, lastPictureID: lastPictureID, lastTL0PictureIndex: lastTL0PictureIndex)
        source = newSource
        return emit(
            Mapped(sequenceNumber: sequenceOut, timestamp: timestampOut, pictureID: vp8.pictureID, tl0: vp8.tl0),
            arrival: arrival)
    }

    private mutating func emit(_ mapped: Mapped, arrival: Instant) -> ForwardDecision {
        if lastSequenceNumber.map({ mapped.sequenceNumber > $0 }) ?? true {
            lastSequenceNumber = mapped.sequenceNumber
        }
        if lastTimestamp.map({ mapped.timestamp > $0.value }) ?? true {
            lastTimestamp = (mapped.timestamp, arrival)
        }
        if let p = mapped.pictureID, lastPictureID.map({ p > $0 }) ?? true {
            lastPictureID = p
        }
        if let t = mapped.tl0, lastTL0PictureIndex.map({ t.isNewer(than: $0) }) ?? true {
            lastTL0PictureIndex = t
        }
        return .forward(
            RTPRewrite(
                ssrc: outgoingSSRC, sequenceNumber: UInt16(truncatingIfNeeded: mapped.sequenceNumber),
                timestamp: UInt32(truncatingIfNeeded: mapped.timestamp),
                pictureID: mapped.pictureID.map { UInt16(truncatingIfNeeded: $0) & 0x7FFF }, tl0PictureIndex: mapped.tl0))
    }
}

/// Outgoing extended values of one forwarded packet.
struct Mapped: Equatable, Sendable {
    var sequenceNumber: UInt64
    var timestamp: UInt64
    var pictureID: UInt64?
    var tl0: UInt8?
}

extension UInt8 {
    /// RFC 1982 serial comparison for 8-bit counters (TL0PICIDX).
    @inline(__always)
    func isNewer(than other: UInt8) -> Bool { self != other && self &- other < 0x80 }
}

extension Duration {
    /// This duration in RTP clock ticks, rounded toward zero, without
    /// overflow traps.
    @inline(__always)
    func rtpTicks(clockRate: UInt32) -> Int64 {
        let ns = nanoseconds
        let rate = Int64(clockRate)
        return (ns / 1_000_000_000) &* rate &+ (ns % 1_000_000_000) * rate / 1_000_000_000
    }
}
