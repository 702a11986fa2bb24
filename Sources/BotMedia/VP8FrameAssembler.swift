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
/// Assumes in-order delivery: a packet older than the last one is ignored
/// and its earlier absence has already counted as loss. The per-packet path
/// allocates nothing; frame bytes are copied only when a reassembly
/// capacity was given, into a buffer allocated once.
public struct VP8FrameAssembler: Sendable {
    public struct Statistics: Equatable, Sendable {
        public var packets = 0
        /// Packets that were not a valid VP8 RTP payload.
        public var malformedPackets = 0
        /// Sequence numbers skipped (RFC 3550 appendix A.3 style count).
        public var packetsLost = 0
        /// Duplicate or late packets, ignored.
        public var packetsOutOfOrder = 0
        public var framesComplete = 0
        /// Frames that began or ended without all their packets.
        public var framesIncomplete = 0
        public var keyframes = 0
        /// Complete delta frames whose reference chain was broken.
        public var framesUndecodable = 0
        public var switches = 0
        public var switchesNotOnKeyframe = 0
        public init() {}
    }

    /// One complete frame.
    public struct Frame: Equatable, Sendable {
        public var ssrc: SSRC
        public var rtpTimestamp: UInt32
        public var pictureID: UInt16?
        public var temporalLayer: UInt8?
        public var isKeyframe: Bool
        /// From the keyframe header; nil for delta frames.
        public var width: UInt16?
        public var height: UInt16?
        public var isDecodable: Bool
        /// NTP UQ32.32 from abs-capture-time, when the sender put it on a
        /// packet of the frame.
        public var captureTime: UInt64?
        /// Arrival of the packet that completed the frame.
        public var completedAt: Instant
        /// VP8 bytes (descriptors removed).
        public var byteCount: Int
        public var packetCount: Int
    }

    private struct FrameInProgress {
        var timestamp: UInt32
        var broken: Bool
        var isKeyframe: Bool
        var width: UInt16?
        var height: UInt16?
        var pictureID: UInt16?
        var temporalLayer: UInt8?
        var layerSync: Bool
        var captureTime: UInt64?
        var byteCount: Int
        var packetCount: Int
    }

    public let absCaptureTimeID: UInt8?
    public private(set) var statistics = Statistics()
    /// The last known keyframe size.
    public private(set) var resolution: (width: UInt16, height: UInt16)?
    /// The bytes of the last complete frame are `frameBuffer[0..<Frame.byteCount]`
    /// until the next packet; empty when no reassembly capacity was given.
    public private(set) var frameBuffer: [UInt8]
    private var reassembled = 0
    private var ssrc: SSRC?
    private var lastSequenceNumber: UInt16?
    private var lastPictureID: UInt16?
    private var lastTL0PictureIndex: UInt8?
    private var frame: FrameInProgress?
    /// Bit t set: layer t's reference chain is broken.
    private var brokenLayers: UInt8 = 0x0F
    private var pendingSwitch = false

    public init(absCaptureTimeID: UInt8? = nil, reassemblyCapacity: Int = 0) {
        self.absCaptureTimeID = absCaptureTimeID
        frameBuffer = [UInt8](repeating: 0, count: max(0, reassemblyCapacity))
    }

    /// Feeds one RTP packet: `header` parsed from `packet` (the whole RTP
    /// packet). Returns the frame this packet completed, if any.
    public mutating func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) -> Frame? {
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
            abandonFrame()
            brokenLayers = 0x0F
            pendingSwitch = true
            lastSequenceNumber = nil
            lastPictureID = nil
            lastTL0PictureIndex = nil
        }
        ssrc = header.ssrc

        var gap = false
        if let last = lastSequenceNumber {
            let delta = header.sequenceNumber &- last
            if delta == 0 || delta >= 0x8000 {
                statistics.packetsOutOfOrder += 1
                return nil
            }
            if delta > 1 {
                statistics.packetsLost += Int(delta) - 1
                gap = true
            }
        }
        lastSequenceNumber = header.sequenceNumber

        let starts = descriptor.isStartOfPartition && descriptor.partitionIndex == 0
        if frame == nil || frame?.timestamp != header.timestamp {
            abandonFrame()
            if gap && starts { attributeLostFrames(to: descriptor) }
            frame = FrameInProgress(
                timestamp: header.timestamp, broken: !starts, isKeyframe: descriptor.isKeyframe,
                width: descriptor.keyframeWidth, height: descriptor.keyframeHeight, pictureID: descriptor.pictureID,
                temporalLayer: descriptor.temporalLayerID, layerSync: descriptor.isLayerSync, captureTime: nil,
                byteCount: 0, packetCount: 0)
            reassembled = 0
            if starts {
                if let pid = descriptor.pictureID { lastPictureID = pid }
                if let index = descriptor.tl0PictureIndex { lastTL0PictureIndex = index }
            }
        } else if gap {
            frame?.broken = true
        }
        guard var current = frame else { return nil }

        let vp8 = payload.extracting(descriptor.payloadHeaderOffset..<header.payloadLength)
        current.packetCount += 1
        current.byteCount += vp8.byteCount
        if !current.broken { copyIntoFrameBuffer(vp8) }
        if let id = absCaptureTimeID, let range = header.extensionValueRange(id: id, in: packet),
            range.upperBound <= packet.byteCount, range.count == 8 || range.count == 16
        {
            current.captureTime = Self.uint64(packet, at: range.lowerBound)
        }
        frame = current
        guard header.marker else { return nil }
        frame = nil
        if current.broken {
            statistics.framesIncomplete += 1
            markBroken(layer: current.temporalLayer ?? 0)
            return nil
        }
        return complete(current, arrival: arrival)
    }

    private mutating func complete(_ current: FrameInProgress, arrival: Instant) -> Frame {
        statistics.framesComplete += 1
        let layer = min(current.temporalLayer ?? 0, 3)
        let decodable: Bool
        if current.isKeyframe {
            statistics.keyframes += 1
            brokenLayers = 0
            decodable = true
        } else if current.layerSync && layer > 0 {
            decodable = brokenLayers & 1 == 0
            if decodable { brokenLayers &= ~(1 << layer) }
        } else {
            decodable = brokenLayers & ((1 << (layer + 1)) - 1) == 0
        }
        if !decodable {
            statistics.framesUndecodable += 1
            markBroken(layer: layer)
        }
        if pendingSwitch {
            pendingSwitch = false
            statistics.switches += 1
            if !current.isKeyframe { statistics.switchesNotOnKeyframe += 1 }
            // The new stream's first keyframe sets its size without
            // counting the same switch again.
            resolution = nil
        } else if current.isKeyframe, let previous = resolution, let w = current.width, let h = current.height,
            previous.width != w || previous.height != h
        {
            statistics.switches += 1
        }
        if current.isKeyframe, let w = current.width, let h = current.height { resolution = (w, h) }
        return Frame(
            ssrc: ssrc ?? SSRC(0), rtpTimestamp: current.timestamp, pictureID: current.pictureID,
            temporalLayer: current.temporalLayer, isKeyframe: current.isKeyframe,
            width: current.isKeyframe ? current.width : nil, height: current.isKeyframe ? current.height : nil,
            isDecodable: decodable, captureTime: current.captureTime, completedAt: arrival,
            byteCount: current.byteCount, packetCount: current.packetCount)
    }

    /// A frame that never saw its marker is lost.
    private mutating func abandonFrame() {
        guard let current = frame else { return }
        frame = nil
        statistics.framesIncomplete += 1
        markBroken(layer: current.temporalLayer ?? 0)
    }

    /// A sequence gap before a frame's first packet: if the picture ID
    /// skipped, whole frames vanished; TL0PICIDX says whether one of them
    /// was a base-layer frame (RFC 7741 section 4.2).
    private mutating func attributeLostFrames(to next: VP8PayloadDescriptor) {
        guard let last = lastPictureID, let pid = next.pictureID else {
            markBroken(layer: 0)
            return
        }
        let mask: UInt16 = next.hasLongPictureID ? 0x7FFF : 0x7F
        guard (pid &- last) & mask != 1 else { return }
        if let lastIndex = lastTL0PictureIndex, let index = next.tl0PictureIndex, let layer = next.temporalLayerID {
            let expected = layer == 0 ? lastIndex &+ 1 : lastIndex
            markBroken(layer: index == expected ? 1 : 0)
        } else {
            markBroken(layer: 0)
        }
    }

    private mutating func markBroken(layer: UInt8) {
        brokenLayers |= 0x0F & ~((1 << min(layer, 3)) - 1)
    }

    private mutating func copyIntoFrameBuffer(_ bytes: RawSpan) {
        let count = bytes.byteCount
        guard count > 0, frameBuffer.count - reassembled >= count else { return }
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
