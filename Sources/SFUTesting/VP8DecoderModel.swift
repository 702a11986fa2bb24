import Codecs
import RTP
import Wire

/// What a VP8 receiver can decode from the packets of one RTP stream, for
/// simulations that count freezes without a real decoder.
///
/// A frame (the packets of one RTP timestamp) is complete when its first
/// packet (S bit, partition 0), its last (marker) and every sequence number
/// between have arrived. It decodes when complete and its references are
/// decoded (RFC 7741 section 4.2, temporal scalability as libvpx builds
/// it): a keyframe needs nothing; a TL0 frame needs the previous TL0 frame;
/// a frame of TID t needs the nearest earlier frame of TID <= t, or with the
/// layer-sync bit only the nearest of TID < t. Frames decode out of order
/// when their references allow, as a jitter buffer with frame references
/// does: a lost TL2 frame does not hold up the next TL0 one.
///
/// Frames lost whole show as holes in the sequence numbers; TL0PICIDX says
/// whether a hole may hold a TL0 frame (it advanced by more than the frame
/// after the hole accounts for), else it blocks only TID >= 1. A frame or
/// hole still incomplete `giveUp` after it was first seen is lost.
package struct VP8DecoderModel {
    package enum Status: Equatable, Sendable { case pending, decoded, failed }

    struct PacketInfo {
        var timestamp: UInt32
        var isFirst: Bool
        var marker: Bool
    }

    struct Frame {
        var minSequence: UInt64
        var first: UInt64?
        var last: UInt64?
        var temporalLayer = 0
        var layerSync = false
        var keyframe = false
        var tl0: UInt8?
        var width: Int?
        var firstSeen: Instant
        var status = Status.pending
    }

    package var giveUp: Duration
    /// Padding-only packets' numbers: received, carrying no frame.
    var fillers: Set<UInt64> = []
    /// Decode times of every decoded frame, in decode order.
    package private(set) var decodeTimes: [Instant] = []
    package private(set) var failedFrames = 0
    /// The width of the last decoded keyframe.
    package private(set) var width: Int?
    /// (when, width) each time the decoded width changed.
    package private(set) var widthChanges: [(at: Instant, width: Int)] = []
    /// A frame failed since the last decoded keyframe: the receiver should
    /// ask for a keyframe (PLI).
    package private(set) var needsKeyframe = false
    package private(set) var malformedPackets = 0

    private var unwrapper = SequenceNumberUnwrapper()
    private var packets: [UInt64: PacketInfo] = [:]
    private var frames: [UInt32: Frame] = [:]
    // What the frames already folded away leave behind.
    private var baseReference: [Status] = [.failed, .failed, .failed, .failed]
    private var baseLast: UInt64?
    private var baseTL0: UInt8?
    private var foldedThrough: UInt64?

    package init(giveUp: Duration = .seconds(1)) { self.giveUp = giveUp }

    /// The longest time between two decoded frames, and from the last one
    /// to `end` when given.
    package func longestGap(until end: Instant? = nil) -> Duration {
        var longest = Duration.zero
        for (a, b) in zip(decodeTimes, decodeTimes.dropFirst()) { longest = max(longest, b - a) }
        if let end, let last = decodeTimes.last { longest = max(longest, end - last) }
        return longest
    }

    /// One packet of the stream (RTX already restored), arriving at `now`.
    package mutating func receive(_ packet: [UInt8], now: Instant) {
        guard let header = try? RTPHeader(parsing: packet.span.bytes) else {
            malformedPackets += 1
            return
        }
        guard header.payloadLength > 0 else {
            // Padding only (RFC 3550 section 5.1): a number sent on purpose
            // with no frame data (an SFU filling a gap): not a lost frame.
            if header.hasPadding {
                fillers.insert(unwrapper.unwrap(header.sequenceNumber))
                update(now: now)
            } else {
                malformedPackets += 1
            }
            return
        }
        let payload = Array(packet[header.payloadRange])
        guard let vp8 = try? VP8PayloadDescriptor(parsing: payload.span.bytes) else {
            malformedPackets += 1
            return
        }
        let sequence = unwrapper.unwrap(header.sequenceNumber)
        if let folded = foldedThrough, sequence <= folded { return }
        guard packets[sequence] == nil else { return }
        let isFirst = vp8.isStartOfPartition && vp8.partitionIndex == 0
        packets[sequence] = PacketInfo(timestamp: header.timestamp, isFirst: isFirst, marker: header.marker)
        var frame =
            frames[header.timestamp] ?? Frame(minSequence: sequence, firstSeen: now)
        frame.minSequence = min(frame.minSequence, sequence)
        frame.temporalLayer = Int(min(vp8.temporalLayerID ?? 0, 3))
        frame.layerSync = vp8.isLayerSync
        frame.tl0 = vp8.tl0PictureIndex
        if isFirst {
            frame.first = sequence
            frame.keyframe = vp8.isKeyframe
            if let w = vp8.keyframeWidth { frame.width = Int(w) }
        }
        if header.marker { frame.last = sequence }
        frames[header.timestamp] = frame
        update(now: now)
    }

    /// Re-evaluates what is pending (call as time passes: holes are given
    /// up by age).
    package mutating func update(now: Instant) {
        let order = frames.values.sorted { $0.minSequence < $1.minSequence }
        var reference = baseReference
        var previousLast = baseLast
        var previousTL0 = baseTL0
        var foldable = true
        var fold: (count: Int, reference: [Status], last: UInt64?, tl0: UInt8?)?
        for (index, var frame) in order.enumerated() {
            let age = now - frame.firstSeen
            // A hole before the frame: whole frames may be missing.
            var expected = previousLast.map { $0 + 1 }
            while let e = expected, fillers.contains(e) { expected = e + 1 }
            if let e = expected, frame.first != e, !frame.keyframe {
                let tl0Advance = frame.tl0.flatMap { f in previousTL0.map { f &- $0 } } ?? 2
                let holeLayer = Int(tl0Advance) > (frame.temporalLayer == 0 ? 1 : 0) ? 0 : 1
                let holeStatus: Status = age > giveUp ? .failed : .pending
                if holeStatus == .pending { foldable = false }
                for t in holeLayer..<4 where reference[t] != .failed { reference[t] = holeStatus }
            }
            if frame.status == .pending {
                let complete = isComplete(frame)
                if frame.keyframe {
                    frame.status = complete ? .decoded : (age > giveUp ? .failed : .pending)
                } else {
                    let t = frame.temporalLayer
                    let dependency = frame.layerSync && t > 0 ? reference[t - 1] : reference[t]
                    if dependency == .failed {
                        frame.status = .failed
                    } else if !complete {
                        if age > giveUp { frame.status = .failed }
                    } else if dependency == .decoded {
                        frame.status = .decoded
                    }
                }
                switch frame.status {
                case .decoded:
                    decodeTimes.append(now)
                    if frame.keyframe {
                        needsKeyframe = false
                        if let w = frame.width, w != width {
                            width = w
                            widthChanges.append((now, w))
                        }
                    }
                case .failed:
                    failedFrames += 1
                    needsKeyframe = true
                case .pending: break
                }
                if let ts = packets[frame.minSequence]?.timestamp { frames[ts] = frame }
            }
            if frame.keyframe, frame.status == .decoded {
                reference = [.decoded, .decoded, .decoded, .decoded]
            } else {
                for t in frame.temporalLayer..<4 { reference[t] = frame.status }
            }
            previousLast = frame.last
            previousTL0 = frame.tl0 ?? previousTL0
            if frame.status == .pending { foldable = false }
            if foldable { fold = (index + 1, reference, frame.last ?? frame.minSequence, previousTL0) }
        }
        // Frames settled with nothing pending before them are folded away.
        if let fold, fold.count > 0 {
            for frame in order.prefix(fold.count) {
                if let ts = packets[frame.minSequence]?.timestamp { frames[ts] = nil }
            }
            let through = fold.last ?? 0
            for s in packets.keys where s <= through { packets[s] = nil }
            fillers = fillers.filter { $0 > through }
            foldedThrough = through
            baseReference = fold.reference
            baseLast = fold.last
            baseTL0 = fold.tl0
        }
    }

    private func isComplete(_ frame: Frame) -> Bool {
        guard let first = frame.first, let last = frame.last, first <= last else { return false }
        var s = first
        while s <= last {
            if packets[s] == nil { return false }
            s += 1
        }
        return true
    }
}
