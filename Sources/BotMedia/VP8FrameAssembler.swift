import Codecs
import RTP
import Wire

/// What a subscriber bot checks in a received VP8 stream (RFC 7741): fed
/// every RTP packet of one subscribed track in arrival order, it finds
/// complete frames (every packet from the one with S set and PID 0 to the
/// one with the marker, no sequence gap), tells keyframes and their size
/// (RFC 6386 section 9.1), and decides whether each frame is decodable.
///
/// Decodability follows the temporal-layer structure the descriptor
/// announces (RFC 7741 section 4.2): a frame of layer t with Y set depends
/// only on the base layer; without Y it may depend on any layer up to t. A
/// lost or undecodable frame of layer t breaks layers t and up; a keyframe
/// repairs everything; a decodable Y frame of layer t > 0 repairs layer t.
/// Until the first keyframe, and after the SSRC changes, nothing is
/// decodable. Whole frames lost in a sequence gap are attributed to the
/// upper layers when the next frame's TL0PICIDX shows no base frame was
/// missed, otherwise to the base layer.
///
/// A switch is a change of SSRC (counted when the next complete frame
/// arrives: `switchesNotOnKeyframe` when that frame is a delta frame) or a
/// keyframe whose size differs from the previous keyframe's. An SFU that
/// keeps the SSRC and forwards a delta frame of the new layer first is
/// visible only as a later keyframe of the new size; to catch that case a
/// bot must decode (`VP8Decoder`).
///
/// Late packets (reordered, or repaired by a retransmission unwrapped
/// from RTX, RFC 4588) complete the frame they belong to while it is
/// still pending, as a browser's frame buffer allows: frames are released
/// in sequence order, a complete frame waits behind an earlier incomplete
/// one or an unexplained sequence gap, and a pending frame is given up
/// (counted incomplete, its layer broken) once `reorderFrames` newer
/// frames have begun, `reorderWindow` has passed since its first packet,
/// or a complete keyframe is waiting behind it.
/// Packets more than 1,024 numbers behind the newest, or of a frame
/// already released or given up, are counted out of order and ignored.
/// A frame is given up only when a packet arrives; `flush()` gives up
/// everything pending (end of stream). The per-packet path allocates
/// nothing: the pending and ready lists and the received-bit window are
/// sized at init. Frame bytes are copied only when a reassembly capacity
/// was given, into a buffer allocated once, and only for a frame whose
/// packets all arrived in order (`Frame.hasBytes`).
package struct VP8FrameAssembler: Sendable {
    package struct Statistics: Equatable, Sendable {
        package var packets = 0
        /// Packets that were not a valid VP8 RTP payload.
        package var malformedPackets = 0
        /// Sequence numbers skipped on arrival (RFC 3550 appendix A.3
        /// style count); late packets that fill a gap do not subtract.
        package var packetsLost = 0
        /// Late packets that filled a gap (reordered or retransmitted).
        package var packetsRecovered = 0
        /// Duplicate packets, and late ones too old to use, ignored.
        package var packetsOutOfOrder = 0
        package var framesComplete = 0
        /// Complete frames that a late (reordered or retransmitted) packet
        /// completed.
        package var framesCompletedLate = 0
        /// Frames given up without all their packets.
        package var framesIncomplete = 0
        package var keyframes = 0
        /// Complete delta frames whose reference chain was broken.
        package var framesUndecodable = 0
        package var switches = 0
        package var switchesNotOnKeyframe = 0
        package init() {}
    }

    /// One complete frame.
    package struct Frame: Equatable, Sendable {
        package var ssrc: SSRC
        package var rtpTimestamp: UInt32
        package var pictureID: UInt16?
        package var temporalLayer: UInt8?
        package var isKeyframe: Bool
        /// From the keyframe header; nil for delta frames.
        package var width: UInt16?
        package var height: UInt16?
        package var isDecodable: Bool
        /// NTP UQ32.32 from abs-capture-time, when the sender put it on a
        /// packet of the frame.
        package var captureTime: UInt64?
        /// Arrival of the packet that released the frame.
        package var completedAt: Instant
        /// VP8 bytes (descriptors removed).
        package var byteCount: Int
        package var packetCount: Int
        /// `frameBuffer[0..<byteCount]` holds this frame's bytes.
        package var hasBytes: Bool
    }

    /// A frame seen in part; sequence numbers are extended (64-bit).
    struct PendingFrame: Sendable {
        var timestamp: UInt32
        var firstSequence: UInt64?
        var lastSequence: UInt64?
        var lowest: UInt64
        var highest: UInt64
        var firstArrival: Instant
        var isKeyframe = false
        var width: UInt16?
        var height: UInt16?
        var pictureID: UInt16?
        var hasLongPictureID = false
        var tl0PictureIndex: UInt8?
        var temporalLayer: UInt8?
        var layerSync = false
        var captureTime: UInt64?
        var byteCount = 0
        var packetCount = 0
        var waited = false

        var isComplete: Bool {
            guard let first = firstSequence, let last = lastSequence, last >= first else { return false }
            return UInt64(packetCount) == last - first + 1
        }
    }

    package let absCaptureTimeID: UInt8?
    /// A pending frame is given up once this many newer frames have begun
    /// (default 8, about 270 ms at 30 fps) ...
    package let reorderFrames: Int
    /// ... or this long after its first packet arrived (default 250 ms:
    /// a NACK, its retries every RTT and the RTX fit on a LAN or a
    /// continent, and frames held back stay under `FreezeDetector`'s
    /// 500 ms, so a repair that never comes is not also a freeze).
    package let reorderWindow: Duration
    package internal(set) var statistics = Statistics()
    /// The last known keyframe size.
    package internal(set) var resolution: (width: UInt16, height: UInt16)?
    /// The bytes of the last frame with `hasBytes` are
    /// `frameBuffer[0..<Frame.byteCount]` until the next packet; empty
    /// when no reassembly capacity was given.
    package private(set) var frameBuffer: [UInt8]
    var reassembled = 0
    var reassemblyTimestamp: UInt32?
    var ssrc: SSRC?
    /// Extended sequence numbers start at 2^32 so a late packet before the
    /// first one never goes below zero.
    var highestSequence: UInt64?
    /// The last sequence number of the frame released or given up last.
    var releasedThrough: UInt64?
    var lastPictureID: UInt16?
    var lastTL0PictureIndex: UInt8?
    /// Ordered by lowest sequence number.
    var pending: [PendingFrame]
    var ready: [Frame]
    /// Bit (n mod 1024): extended sequence number n arrived, for n within
    /// 1,024 of `highestSequence`.
    var receivedBits: [UInt64]
    static let window: UInt64 = 1024
    /// Bit t set: layer t's reference chain is broken.
    var brokenLayers: UInt8 = 0x0F
    var pendingSwitch = false

    package init(
        absCaptureTimeID: UInt8? = nil, reassemblyCapacity: Int = 0, reorderFrames: Int = 8,
        reorderWindow: Duration = .milliseconds(250)
    ) {
        self.absCaptureTimeID = absCaptureTimeID
        self.reorderFrames = max(0, reorderFrames)
        self.reorderWindow = reorderWindow
        frameBuffer = [UInt8](repeating: 0, count: max(0, reassemblyCapacity))
        pending = []
        pending.reserveCapacity(self.reorderFrames + 2)
        ready = []
        ready.reserveCapacity(self.reorderFrames + 2)
        receivedBits = [UInt64](repeating: 0, count: Int(Self.window / 64))
    }

    /// Feeds one RTP packet: `header` parsed from `packet` (the whole RTP
    /// packet). Returns the first frame this packet released, if any;
    /// `nextFrame()` hands out the others it released (a late packet can
    /// release several) until the next `handle`, which drops any left.
    package mutating func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) -> Frame? {
        ready.removeAll(keepingCapacity: true)
        statistics.packets += 1
        guard header.payloadRange.upperBound <= packet.byteCount, header.payloadLength > 0 else {
            statistics.malformedPackets += 1
            return nil
        }
        let payload = packet.extracting(header.payloadRange)
        guard let descriptor = try? VP8PayloadDescriptor(parsing: payload),
            descriptor.payloadHeaderOffset <= header.payloadLength
        else {
            statistics.malformedPackets += 1
            return nil
        }
        if let current = ssrc, current != header.ssrc {
            release(arrival: arrival, force: true)
            brokenLayers = 0x0F
            pendingSwitch = true
            highestSequence = nil
            releasedThrough = nil
            lastPictureID = nil
            lastTL0PictureIndex = nil
            reassemblyTimestamp = nil
            for i in receivedBits.indices { receivedBits[i] = 0 }
        }
        ssrc = header.ssrc
        guard let sequence = accept(header.sequenceNumber) else { return nextFrame() }
        let inOrder = sequence == highestSequence

        let index = frameIndex(timestamp: header.timestamp, sequence: sequence, arrival: arrival)
        var frame = pending[index]
        frame.lowest = min(frame.lowest, sequence)
        frame.highest = max(frame.highest, sequence)
        frame.packetCount += 1
        if !inOrder { frame.waited = true }
        let vp8 = payload.extracting(descriptor.payloadHeaderOffset..<header.payloadLength)
        frame.byteCount += vp8.byteCount
        if frame.temporalLayer == nil { frame.temporalLayer = descriptor.temporalLayerID }
        if descriptor.isStartOfPartition && descriptor.partitionIndex == 0 {
            frame.firstSequence = sequence
            frame.isKeyframe = descriptor.isKeyframe
            frame.width = descriptor.keyframeWidth
            frame.height = descriptor.keyframeHeight
            frame.pictureID = descriptor.pictureID
            frame.hasLongPictureID = descriptor.hasLongPictureID
            frame.tl0PictureIndex = descriptor.tl0PictureIndex
            frame.temporalLayer = descriptor.temporalLayerID
            frame.layerSync = descriptor.isLayerSync
            if inOrder {
                reassemblyTimestamp = header.timestamp
                reassembled = 0
            }
        }
        if header.marker { frame.lastSequence = sequence }
        if reassemblyTimestamp == header.timestamp {
            // Only an unbroken in-order run from the frame's first packet
            // is reassembled; anything else spoils it.
            if inOrder && frame.firstSequence.map({ sequence &- $0 == UInt64(frame.packetCount - 1) }) == true {
                copyIntoFrameBuffer(vp8)
            } else {
                reassemblyTimestamp = nil
            }
        }
        if let id = absCaptureTimeID, let range = header.extensionValueRange(id: id, in: packet),
            range.upperBound <= packet.byteCount, range.count == 8 || range.count == 16
        {
            frame.captureTime = Self.uint64(packet, at: range.lowerBound)
        }
        pending[index] = frame
        release(arrival: arrival, force: false)
        return nextFrame()
    }

    /// The next frame released by the last `handle` or `flush`, in order.
    package mutating func nextFrame() -> Frame? {
        ready.isEmpty ? nil : ready.removeFirst()
    }

    /// Gives up every pending frame (the stream ended or paused); complete
    /// frames waiting behind them are released. Returns the first;
    /// `nextFrame()` the rest.
    package mutating func flush(now: Instant) -> Frame? {
        ready.removeAll(keepingCapacity: true)
        release(arrival: now, force: true)
        return nextFrame()
    }

    /// Frames seen in part and not yet released or given up.
    package var pendingFrames: Int { pending.count }

    /// Extends `sequenceNumber`, updates the received bits and loss
    /// counts; nil for a duplicate or a packet too late to use.
    private mutating func accept(_ sequenceNumber: UInt16) -> UInt64? {
        guard let highest = highestSequence else {
            let sequence = 1 << 32 | UInt64(sequenceNumber)
            highestSequence = sequence
            setReceived(sequence)
            return sequence
        }
        let delta = Int64(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: highest)))
        let sequence = UInt64(Int64(bitPattern: highest) + delta)
        if sequence > highest {
            let gap = sequence - highest - 1
            statistics.packetsLost += Int(gap)
            var n = highest + 1
            while n < sequence && n < highest + 1 + Self.window {
                clearReceived(n)
                n += 1
            }
            highestSequence = sequence
            setReceived(sequence)
            return sequence
        }
        guard highest - sequence < Self.window, !isReceived(sequence),
            releasedThrough.map({ sequence > $0 }) ?? true
        else {
            statistics.packetsOutOfOrder += 1
            return nil
        }
        statistics.packetsRecovered += 1
        setReceived(sequence)
        return sequence
    }

    /// The pending frame with `timestamp`, created in sequence order when
    /// new (giving up the oldest first when the list is full).
    private mutating func frameIndex(timestamp: UInt32, sequence: UInt64, arrival: Instant) -> Int {
        if let i = pending.firstIndex(where: { $0.timestamp == timestamp }) { return i }
        if pending.count >= reorderFrames + 1 { giveUpHead() }
        let frame = PendingFrame(
            timestamp: timestamp, lowest: sequence, highest: sequence, firstArrival: arrival)
        let at = pending.firstIndex { $0.lowest > sequence } ?? pending.count
        pending.insert(frame, at: at)
        return at
    }

    private func isReceived(_ n: UInt64) -> Bool {
        receivedBits[Int((n % Self.window) / 64)] & (1 << (n % 64)) != 0
    }
    private mutating func setReceived(_ n: UInt64) { receivedBits[Int((n % Self.window) / 64)] |= 1 << (n % 64) }
    private mutating func clearReceived(_ n: UInt64) { receivedBits[Int((n % Self.window) / 64)] &= ~(1 << (n % 64)) }

    private mutating func copyIntoFrameBuffer(_ bytes: RawSpan) {
        let count = bytes.byteCount
        guard count > 0 else { return }
        guard frameBuffer.count - reassembled >= count else {
            reassemblyTimestamp = nil
            return
        }
        let start = reassembled
        frameBuffer.withUnsafeMutableBytes { target in
            bytes.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: target[start..<start + count]).copyMemory(from: source)
            }
        }
        reassembled += count
    }

    private static func uint64(_ bytes: RawSpan, at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(bytes.unsafeLoad(fromByteOffset: offset + i, as: UInt8.self)) }
        return value
    }
}
